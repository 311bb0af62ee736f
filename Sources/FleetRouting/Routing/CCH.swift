import Foundation

/// A customizable contraction hierarchy (Dibbelt, Strasser, Wagner) over the turn graph.
///
/// Why CCH rather than plain contraction hierarchies: the expensive part here (the node order
/// from nested dissection and the shortcut topology) does not depend on the weights, so new edge
/// speeds, such as live traffic learned from the fleet, only need a *customization*: one
/// bottom-up pass over the shortcuts' lower triangles, seconds rather than a rebuild from OSM.
///
/// Queries are bidirectional searches that only go upward in the order, as in CH; point-to-point
/// ones walk the elimination tree instead of keeping a queue (`CCHSearch.shortestPath`).
///
/// Inside the hierarchy a node is numbered by its rank, not by its turn-graph node: the top
/// separators, which every query reaches, then sit together at the end of every array (and stay
/// in cache between queries), and a sweep down the ranks reads its labels in order. Turn-graph
/// nodes are converted where a query starts (`rank`) and where a path is unpacked (`byRank`).
public struct CCH: Sendable {
  /// Rank of each turn-graph node (directed edge) in the order; higher ranks are contracted later.
  let rank: [Int32]
  /// The turn-graph node of each rank (lowest first).
  let byRank: [Int32]
  /// Upward edges of the node of rank r (to higher ranks): `firstUp[r]..<firstUp[r + 1]`, the
  /// targets' ranks sorted.
  let firstUp: [Int32]
  let upTarget: [Int32]
  /// The rank of the lower node of each upward edge (what `firstUp` says, without a search).
  let upSource: [Int32]
  /// Each rank's parent in the elimination tree (its lowest upper neighbour), -1 at a root. A
  /// node's upper neighbours are all its ancestors, so an upward search from r reaches exactly
  /// the path from r to its root. It is the first of r's upward edges' targets, kept apart
  /// because every search walks it: read from `firstUp` and `upTarget` instead, searches ran
  /// 3–5 % slower.
  let treeParent: [Int32]

  /// The node order: nested dissection of the turn graph by inertial flow. Metric-independent and
  /// the slow part of preparing a CCH (seconds on a city), so `fleetd graph build` stores it.
  static func order(graph: TurnGraph, network: RoadNetwork) -> [Int32] {
    order(neighbours: undirectedNeighbours(graph), graph: graph, network: network)
  }

  static func order(neighbours: [Set<Int32>], graph: TurnGraph, network: RoadNetwork) -> [Int32] {
    let n = neighbours.count
    // Where each node is: its road edge's middle, in metres north and east.
    let middles = (0..<n).map { d -> (Double, Double) in
      let edge = network.edges[TurnGraph.edge(of: graph.original(Int32(d)))]
      let a = network.coordinate(ofJunction: edge.from)
      let b = network.coordinate(ofJunction: edge.to)
      return ((a.latitude + b.latitude) / 2, (a.longitude + b.longitude) / 2)
    }
    let meanLatitude = middles.isEmpty ? 0 : middles.reduce(0) { $0 + $1.0 } / Double(n)
    let eastScale = cos(meanLatitude * .pi / 180)
    var firstNeighbour: [Int32] = [0]
    var neighbourList: [Int32] = []
    for v in 0..<n {
      neighbourList.append(contentsOf: neighbours[v].sorted())
      firstNeighbour.append(Int32(neighbourList.count))
    }
    return InertialFlow(
      firstNeighbour: firstNeighbour, neighbour: neighbourList,
      position: middles.map { ($0.0 * 111_320, $0.1 * 111_320 * eastScale) }
    ).order()
  }

  /// Whether `order` is a permutation of the graph's nodes.
  static func isOrder(_ order: [Int32], of graph: TurnGraph) -> Bool {
    guard order.count == graph.directedEdgeCount else { return false }
    var seen = [Bool](repeating: false, count: order.count)
    for v in order {
      guard v >= 0, Int(v) < order.count, !seen[Int(v)] else { return false }
      seen[Int(v)] = true
    }
    return true
  }

  static func undirectedNeighbours(_ graph: TurnGraph) -> [Set<Int32>] {
    var neighbours = Array(repeating: Set<Int32>(), count: graph.directedEdgeCount)
    for v in 0..<graph.directedEdgeCount {
      for arc in graph.arcs(from: Int32(v)) {
        let w = graph.arcTarget[arc]
        if Int(w) != v {
          neighbours[v].insert(w)
          neighbours[Int(w)].insert(Int32(v))
        }
      }
    }
    return neighbours
  }

  /// The shortcut topology for an order read from a graph file, or for one computed here when
  /// there is none or it does not fit the graph.
  init(graph: TurnGraph, network: RoadNetwork, order stored: [Int32]?) {
    let n = graph.directedEdgeCount
    let neighbours = Self.undirectedNeighbours(graph)
    let order =
      stored.flatMap { Self.isOrder($0, of: graph) ? $0 : nil }
      ?? Self.order(neighbours: neighbours, graph: graph, network: network)
    var rank = [Int32](repeating: 0, count: n)
    for (r, v) in order.enumerated() { rank[Int(v)] = Int32(r) }

    // Chordal completion by the elimination game: eliminating v makes its upper neighbours a
    // clique; handing them to the lowest of them is enough, as that one is eliminated next.
    var upper = (0..<n).map { v in Set(neighbours[v].filter { rank[Int($0)] > rank[v] }) }
    for v in order {
      let up = upper[Int(v)]
      guard let lowest = up.min(by: { rank[Int($0)] < rank[Int($1)] }) else { continue }
      for w in up where w != lowest { upper[Int(lowest)].insert(w) }
    }
    // From here on, by rank.
    var firstUp: [Int32] = []
    var upTarget: [Int32] = []
    var upSource: [Int32] = []
    var treeParent: [Int32] = []
    firstUp.reserveCapacity(n + 1)
    treeParent.reserveCapacity(n)
    for (r, v) in order.enumerated() {
      let above = upper[Int(v)].map { rank[Int($0)] }.sorted()
      firstUp.append(Int32(upTarget.count))
      upTarget.append(contentsOf: above)
      upSource.append(contentsOf: repeatElement(Int32(r), count: above.count))
      treeParent.append(above.first ?? -1)
    }
    firstUp.append(Int32(upTarget.count))
    self.treeParent = treeParent
    self.rank = rank
    self.byRank = order
    self.firstUp = firstUp
    self.upTarget = upTarget
    self.upSource = upSource
  }

  var edgeCount: Int { upTarget.count }

  func upEdges(_ v: Int32) -> Range<Int> { Int(firstUp[Int(v)])..<Int(firstUp[Int(v) + 1]) }

  /// The upward edge v → w (ranks, w above v), if the topology has it.
  func edge(_ v: Int32, _ w: Int32) -> Int? {
    var low = Int(firstUp[Int(v)])
    var high = Int(firstUp[Int(v) + 1])
    while low < high {
      let mid = (low + high) / 2
      if upTarget[mid] < w { low = mid + 1 } else { high = mid }
    }
    return low < Int(firstUp[Int(v) + 1]) && upTarget[low] == w ? low : nil
  }

}

/// The CCH with weights: what customization produces and queries read. Rebuilt from new turn
/// graph weights without touching the topology.
struct CustomizedCCH: Sendable {
  let cch: CCH
  /// Per upward edge v → w: the cost of driving v → w (`up`) and w → v (`down`).
  var up: [Double]
  var down: [Double]
  /// The two upward edges a shortcut is made of (first driven, then second; -1 for an original
  /// turn), so unpacking needs no searches; and for original turns, the turn-graph arc.
  var upFirst: [Int32]
  var upSecond: [Int32]
  var downFirst: [Int32]
  var downSecond: [Int32]
  var upArc: [Int32]
  var downArc: [Int32]
  /// Seconds and metres of the path each weight stands for, so matrices need no unpacking.
  var upDuration: [Double]
  var downDuration: [Double]
  var upDistance: [Double]
  var downDistance: [Double]

  /// The road classes this metric does not drive on (a query's `exclude`).
  let excluded: RoadClasses
  /// The traffic its roads are timed with (free flow, or learned slowdowns).
  let slowdowns: RoadSlowdowns

  /// Customization: the original turns' weights, then every lower triangle bottom-up. Roads of
  /// an `excluding` class get no turns into them; every road's time is its free-flow time times
  /// its slowdown. A `spare` metric that no query reads any more is customized into (its arrays
  /// filled again in place, and taken: nil after): on a metro that is 150 MB neither mapped nor
  /// first touched again each time, which stalled the machine's other work for a second or two.
  /// `pacer` keeps the work to its pace (`CustomizationPace`), checked every few thousand elements.
  init(
    cch: CCH, graph: TurnGraph, network: RoadNetwork, excluding: RoadClasses = [], slowdowns: RoadSlowdowns = .freeFlow,
    spare: inout CustomizedCCH?, pacer: inout Pacer
  ) {
    excluded = excluding
    self.slowdowns = slowdowns
    self.cch = cch
    let m = cch.edgeCount
    var old = spare
    spare = nil
    up = Self.refilled(&old, \.up, with: .infinity, count: m, &pacer)
    down = Self.refilled(&old, \.down, with: .infinity, count: m, &pacer)
    upFirst = Self.refilled(&old, \.upFirst, with: -1, count: m, &pacer)
    upSecond = Self.refilled(&old, \.upSecond, with: -1, count: m, &pacer)
    downFirst = Self.refilled(&old, \.downFirst, with: -1, count: m, &pacer)
    downSecond = Self.refilled(&old, \.downSecond, with: -1, count: m, &pacer)
    upArc = Self.refilled(&old, \.upArc, with: -1, count: m, &pacer)
    downArc = Self.refilled(&old, \.downArc, with: -1, count: m, &pacer)
    upDuration = Self.refilled(&old, \.upDuration, with: 0, count: m, &pacer)
    downDuration = Self.refilled(&old, \.downDuration, with: 0, count: m, &pacer)
    upDistance = Self.refilled(&old, \.upDistance, with: 0, count: m, &pacer)
    downDistance = Self.refilled(&old, \.downDistance, with: 0, count: m, &pacer)
    customize(graph: graph, network: network, &pacer)
  }

  init(
    cch: CCH, graph: TurnGraph, network: RoadNetwork, excluding: RoadClasses = [], slowdowns: RoadSlowdowns = .freeFlow
  ) {
    var none: CustomizedCCH?
    var unpaced = Pacer(nil)
    self.init(
      cch: cch, graph: graph, network: network, excluding: excluding, slowdowns: slowdowns, spare: &none,
      pacer: &unpaced)
  }

  /// `spare`'s array at `path` (taken out of it, so that it is the only reference and is filled
  /// in place) set to `value` throughout; a new one without a spare of that size. Filled a
  /// stretch at a time, so that the pace holds here too.
  static func refilled<T>(
    _ spare: inout CustomizedCCH?, _ path: WritableKeyPath<CustomizedCCH, [T]>, with value: T, count: Int,
    _ pacer: inout Pacer
  ) -> [T] {
    var array: [T] = []
    if spare != nil { swap(&array, &spare![keyPath: path]) }
    let stretch = 1 << 16
    func inStretches(_ fill: (Range<Int>) -> Void) {
      for start in stride(from: 0, to: count, by: stretch) {
        fill(start..<min(start + stretch, count))
        pacer.checkpoint()
      }
    }
    guard array.count == count else {
      return [T](unsafeUninitializedCapacity: count) { buffer, initialized in
        inStretches { UnsafeMutableBufferPointer(rebasing: buffer[$0]).initialize(repeating: value) }
        initialized = count
      }
    }
    array.withUnsafeMutableBufferPointer { buffer in
      inStretches { UnsafeMutableBufferPointer(rebasing: buffer[$0]).update(repeating: value) }
    }
    return array
  }

  /// Fills the arrays: the original turns, then the triangles.
  private mutating func customize(graph: TurnGraph, network: RoadNetwork, _ pacer: inout Pacer) {
    let excluding = excluded
    for v in 0..<graph.directedEdgeCount {
      if v & 1023 == 0 { pacer.checkpoint() }
      for arc in graph.arcs(from: Int32(v)) {
        let w = graph.arcTarget[arc]
        let driven = graph.original(w)
        let edge = network.edges[TurnGraph.edge(of: driven)]
        guard Int(w) != v, let cost = slowdowns.cost(edge, driven), cost.classes.isDisjoint(with: excluding)
        else { continue }
        let weight = Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc]) + cost.weight
        let duration = Double(graph.arcTurnCost[arc]) + cost.duration
        let from = cch.rank[v]
        let to = cch.rank[Int(w)]
        if from < to {
          let e = cch.edge(from, to)!
          if weight < up[e] {
            up[e] = weight
            upArc[e] = Int32(arc)
            upDuration[e] = duration
            upDistance[e] = edge.length
          }
        } else {
          let e = cch.edge(to, from)!
          if weight < down[e] {
            down[e] = weight
            downArc[e] = Int32(arc)
            downDuration[e] = duration
            downDistance[e] = edge.length
          }
        }
      }
    }
    // Bottom-up; for each node, every pair of its upper neighbours u < w closes a triangle.
    for v in 0..<Int32(cch.rank.count) {
      if v & 255 == 0 { pacer.checkpoint() }
      let edges = cch.upEdges(v)
      for i in edges {
        let u = cch.upTarget[i]
        for j in edges where j > i {
          let w = cch.upTarget[j]
          guard let uw = cch.edge(u, w) else { continue }
          // u → v → w and w → v → u.
          let via = down[i] + up[j]
          if via < up[uw] {
            up[uw] = via
            upFirst[uw] = Int32(i)
            upSecond[uw] = Int32(j)
            upDuration[uw] = downDuration[i] + upDuration[j]
            upDistance[uw] = downDistance[i] + upDistance[j]
          }
          let back = down[j] + up[i]
          if back < down[uw] {
            down[uw] = back
            downFirst[uw] = Int32(j)
            downSecond[uw] = Int32(i)
            downDuration[uw] = downDuration[j] + upDuration[i]
            downDistance[uw] = downDistance[j] + upDistance[i]
          }
        }
      }
    }
  }

  /// What driving all of a turn-graph node's road costs in this metric.
  @inline(__always)
  func cost(_ network: RoadNetwork, _ graph: TurnGraph, node: Int32) -> EdgeCost? {
    let driven = graph.original(node)
    return slowdowns.cost(network.edges[TurnGraph.edge(of: driven)], driven)
  }

  /// The turn-graph path (turn-graph nodes after the first) that an upward edge stands for, in
  /// driving order: `forward` for v → w, else w → v.
  func unpack(_ e: Int, forward: Bool, into path: inout [Int32]) {
    let first = forward ? upFirst[e] : downFirst[e]
    guard first >= 0 else {
      path.append(cch.byRank[Int(forward ? cch.upTarget[e] : cch.upSource[e])])
      return
    }
    // u → v → w is the downward half v → u, then the upward half v → w (and w → v → u the
    // other way round): each half is an upward edge from the middle node v.
    unpack(Int(first), forward: false, into: &path)
    unpack(Int(forward ? upSecond[e] : downSecond[e]), forward: true, into: &path)
  }
}

extension CCH {
  /// The lower node of an upward edge.
  func edgeSource(_ e: Int) -> Int32 { upSource[e] }
}
