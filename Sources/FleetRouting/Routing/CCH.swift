/// A customizable contraction hierarchy (Dibbelt, Strasser, Wagner) over the turn graph.
///
/// Why CCH rather than plain contraction hierarchies: the expensive part here (the node order
/// from nested dissection and the shortcut topology) does not depend on the weights, so new edge
/// speeds, such as live traffic learned from the fleet, only need a *customization*: one
/// bottom-up pass over the shortcuts' lower triangles, seconds rather than a rebuild from OSM.
///
/// Queries are bidirectional searches that only go upward in the order, as in CH.
public struct CCH: Sendable {
  /// Rank of each turn-graph node (directed edge) in the order; higher ranks are contracted later.
  let rank: [Int32]
  /// The nodes in rank order (lowest first).
  let byRank: [Int32]
  /// Upward edges of node v (to higher ranks): `firstUp[v]..<firstUp[v + 1]`, targets sorted.
  let firstUp: [Int32]
  let upTarget: [Int32]

  /// Builds the order and the shortcut topology (metric-independent).
  init(graph: TurnGraph, network: RoadNetwork) {
    let n = graph.directedEdgeCount
    // Undirected neighbourhoods of the turn graph.
    var neighbours = Array(repeating: Set<Int32>(), count: n)
    for v in 0..<n {
      for arc in graph.arcs(from: Int32(v)) {
        let w = graph.arcTarget[arc]
        if Int(w) != v {
          neighbours[v].insert(w)
          neighbours[Int(w)].insert(Int32(v))
        }
      }
    }
    // Where each directed edge is: its road edge's middle, for geometric nested dissection.
    let position = (0..<n).map { d -> (Double, Double) in
      let edge = network.edges[d >> 1]
      let a = network.coordinate(ofJunction: edge.from)
      let b = network.coordinate(ofJunction: edge.to)
      return ((a.latitude + b.latitude) / 2, (a.longitude + b.longitude) / 2)
    }
    let order = Self.nestedDissection(Array(0..<Int32(n)), neighbours: neighbours, position: position)
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
    var firstUp: [Int32] = []
    var upTarget: [Int32] = []
    firstUp.reserveCapacity(n + 1)
    for v in 0..<n {
      firstUp.append(Int32(upTarget.count))
      upTarget.append(contentsOf: upper[v].sorted())
    }
    firstUp.append(Int32(upTarget.count))
    self.rank = rank
    self.byRank = order
    self.firstUp = firstUp
    self.upTarget = upTarget
  }

  var edgeCount: Int { upTarget.count }

  func upEdges(_ v: Int32) -> Range<Int> { Int(firstUp[Int(v)])..<Int(firstUp[Int(v) + 1]) }

  /// The upward edge v → w (w above v), if the topology has it.
  func edge(_ v: Int32, _ w: Int32) -> Int? {
    var low = Int(firstUp[Int(v)])
    var high = Int(firstUp[Int(v) + 1])
    while low < high {
      let mid = (low + high) / 2
      if upTarget[mid] < w { low = mid + 1 } else { high = mid }
    }
    return low < Int(firstUp[Int(v) + 1]) && upTarget[low] == w ? low : nil
  }

  /// Order: both halves first, their separator last, recursively; separators are found by
  /// cutting the region across its longer side at the median.
  static func nestedDissection(
    _ nodes: [Int32], neighbours: [Set<Int32>], position: [(Double, Double)]
  ) -> [Int32] {
    var result: [Int32] = []
    result.reserveCapacity(nodes.count)
    var side = [UInt8](repeating: 0, count: position.count)
    func dissect(_ nodes: [Int32]) {
      guard nodes.count > 24 else {
        result.append(contentsOf: nodes)
        return
      }
      let latitudes = nodes.map { position[Int($0)].0 }
      let longitudes = nodes.map { position[Int($0)].1 }
      let latitudeSpan = (latitudes.max()! - latitudes.min()!)
      let longitudeSpan = (longitudes.max()! - longitudes.min()!) * 0.72  // cos(≈44°): metres-ish
      let byLatitude = latitudeSpan >= longitudeSpan
      let sorted = nodes.sorted { a, b in
        let pa = position[Int(a)]
        let pb = position[Int(b)]
        return byLatitude ? (pa.0, pa.1, a) < (pb.0, pb.1, b) : (pa.1, pa.0, a) < (pb.1, pb.0, b)
      }
      let half = sorted.count / 2
      let left = sorted[..<half]
      let right = sorted[half...]
      for v in left { side[Int(v)] = 1 }
      for v in right { side[Int(v)] = 2 }
      let separator = left.filter { v in neighbours[Int(v)].contains { side[Int($0)] == 2 } }
      let separatorSet = Set(separator)
      let leftRest = left.filter { !separatorSet.contains($0) }
      for v in sorted { side[Int(v)] = 0 }
      // A cut that separates nothing would recurse forever: order such a region as it is.
      guard !leftRest.isEmpty, separator.count < sorted.count / 2 else {
        result.append(contentsOf: sorted)
        return
      }
      dissect(Array(leftRest))
      dissect(Array(right))
      result.append(contentsOf: separator)
    }
    dissect(nodes)
    return result
  }
}

/// The CCH with weights: what customization produces and queries read. Rebuilt from new turn
/// graph weights without touching the topology.
struct CustomizedCCH: Sendable {
  let cch: CCH
  /// Per upward edge v → w: the cost of driving v → w (`up`) and w → v (`down`).
  var up: [Double]
  var down: [Double]
  /// The lower node a shortcut passes through, or -1 for an original turn; and for original
  /// turns, the turn-graph arc (to read its turn cost when unpacking).
  var upMiddle: [Int32]
  var downMiddle: [Int32]
  var upArc: [Int32]
  var downArc: [Int32]
  /// Seconds and metres of the path each weight stands for, so matrices need no unpacking.
  var upDuration: [Double]
  var downDuration: [Double]
  var upDistance: [Double]
  var downDistance: [Double]

  /// Customization: the original turns' weights, then every lower triangle bottom-up.
  init(cch: CCH, graph: TurnGraph, network: RoadNetwork) {
    self.cch = cch
    let m = cch.edgeCount
    up = [Double](repeating: .infinity, count: m)
    down = [Double](repeating: .infinity, count: m)
    upMiddle = [Int32](repeating: -1, count: m)
    downMiddle = [Int32](repeating: -1, count: m)
    upArc = [Int32](repeating: -1, count: m)
    downArc = [Int32](repeating: -1, count: m)
    upDuration = [Double](repeating: 0, count: m)
    downDuration = [Double](repeating: 0, count: m)
    upDistance = [Double](repeating: 0, count: m)
    downDistance = [Double](repeating: 0, count: m)
    for v in 0..<graph.directedEdgeCount {
      for arc in graph.arcs(from: Int32(v)) {
        let w = graph.arcTarget[arc]
        let edge = network.edges[TurnGraph.edge(of: w)]
        guard Int(w) != v, let cost = edge.cost(reversed: TurnGraph.isReversed(w)) else { continue }
        let weight = Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc]) + cost.weight
        let duration = Double(graph.arcTurnCost[arc]) + cost.duration
        if cch.rank[v] < cch.rank[Int(w)] {
          let e = cch.edge(Int32(v), w)!
          if weight < up[e] {
            up[e] = weight
            upArc[e] = Int32(arc)
            upDuration[e] = duration
            upDistance[e] = edge.length
          }
        } else {
          let e = cch.edge(w, Int32(v))!
          if weight < down[e] {
            down[e] = weight
            downArc[e] = Int32(arc)
            downDuration[e] = duration
            downDistance[e] = edge.length
          }
        }
      }
    }
    // Nodes by rank; for each, every pair of its upper neighbours u < w closes a triangle.
    for v in cch.byRank {
      let edges = cch.upEdges(v)
      for i in edges {
        let u = cch.upTarget[i]
        for j in edges where j != i {
          let w = cch.upTarget[j]
          guard cch.rank[Int(u)] < cch.rank[Int(w)], let uw = cch.edge(u, w) else { continue }
          // u → v → w and w → v → u.
          let via = down[i] + up[j]
          if via < up[uw] {
            up[uw] = via
            upMiddle[uw] = v
            upDuration[uw] = downDuration[i] + upDuration[j]
            upDistance[uw] = downDistance[i] + upDistance[j]
          }
          let back = down[j] + up[i]
          if back < down[uw] {
            down[uw] = back
            downMiddle[uw] = v
            downDuration[uw] = downDuration[j] + upDuration[i]
            downDistance[uw] = downDistance[j] + upDistance[i]
          }
        }
      }
    }
  }

  /// The turn-graph path (directed edges after the first) that an upward edge stands for, in
  /// driving order: `forward` for v → w, else w → v.
  func unpack(_ e: Int, forward: Bool, into path: inout [Int32]) {
    let v = cch.edgeSource(e)
    let w = cch.upTarget[e]
    let middle = forward ? upMiddle[e] : downMiddle[e]
    guard middle >= 0 else {
      path.append(forward ? w : v)
      return
    }
    // v → middle is the downward edge middle → v, and so on.
    let toMiddle = cch.edge(middle, forward ? v : w)!
    let fromMiddle = cch.edge(middle, forward ? w : v)!
    unpack(toMiddle, forward: false, into: &path)
    unpack(fromMiddle, forward: true, into: &path)
  }
}

extension CCH {
  /// The lower node of an upward edge.
  func edgeSource(_ e: Int) -> Int32 {
    var low = 0
    var high = firstUp.count - 1
    while low + 1 < high {
      let mid = (low + high) / 2
      if Int(firstUp[mid]) <= e { low = mid } else { high = mid }
    }
    // Skip nodes without upward edges that share the same start index.
    while Int(firstUp[low + 1]) <= e { low += 1 }
    return Int32(low)
  }
}
