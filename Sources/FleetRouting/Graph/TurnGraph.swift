/// The edge-based graph routing runs on: a node per drivable direction of a road edge
/// (`edge * 2`, `+ 1` when driven `to → from`), an arc per allowed turn. Turn restrictions, U-turn
/// rules, barriers and turn costs live here, so every search honours them for free.
public struct TurnGraph: Sendable, Codable {
  /// Arcs leaving directed edge `d`: `firstArc[d]..<firstArc[d + 1]`.
  public var firstArc: [Int32] = []
  public var arcTarget: [Int32] = []
  /// Seconds the turn costs (also its weight).
  public var arcTurnCost: [Float] = []
  /// Extra weight that keeps routes from driving through restricted roads (OSRM's max turn weight).
  public var arcPenalty: [Float] = []

  public static let restrictedEntryPenalty: Float = 3276.7

  public var directedEdgeCount: Int { firstArc.count - 1 }

  public func arcs(from directed: Int32) -> Range<Int> { Int(firstArc[Int(directed)])..<Int(firstArc[Int(directed) + 1]) }

  public static func directed(_ edge: Int, reversed: Bool) -> Int32 { Int32(edge * 2 + (reversed ? 1 : 0)) }
  public static func edge(of directed: Int32) -> Int { Int(directed) >> 1 }
  public static func isReversed(_ directed: Int32) -> Bool { directed & 1 == 1 }

  public init() {}

  public init(network: RoadNetwork, profile: CarProfile) {
    let edgeCount = network.edges.count
    // Edge ends per junction: (edge, true when the junction is the edge's `from`).
    var ends = Array(repeating: [(edge: Int, atFrom: Bool)](), count: network.junctions.count)
    for (i, edge) in network.edges.enumerated() {
      ends[Int(edge.from)].append((i, true))
      ends[Int(edge.to)].append((i, false))
    }
    var restrictionsAt: [Int32: [TurnRestriction]] = [:]
    for r in network.restrictions { restrictionsAt[r.via, default: []].append(r) }

    var turnsFrom = Array(repeating: [(target: Int32, cost: Float, penalty: Float)](), count: edgeCount * 2)
    for junction in network.junctions.indices {
      let incident = ends[junction]
      // Arriving: driven towards this junction. Leaving: driven away from it.
      let arriving = incident.compactMap { end -> Int32? in
        let edge = network.edges[end.edge]
        // At `from`, arrival is the backward direction; at `to`, the forward one.
        return edge.cost(reversed: end.atFrom) != nil ? Self.directed(end.edge, reversed: end.atFrom) : nil
      }
      let leaving = incident.compactMap { end -> Int32? in
        let edge = network.edges[end.edge]
        return edge.cost(reversed: !end.atFrom) != nil ? Self.directed(end.edge, reversed: !end.atFrom) : nil
      }
      let roads = incident.count
      let blocked = network.blockedJunctions[junction]
      let delay = network.junctionDelays[junction]
      let restrictions = restrictionsAt[Int32(junction)] ?? []
      for a in arriving {
        let fromEdge = network.edges[Self.edge(of: a)]
        let fromRestrictions = restrictions.filter { $0.fromWay == fromEdge.wayID }
        var allowed: [Int32] = []
        var uTurn: Int32?
        for b in leaving {
          let toEdge = network.edges[Self.edge(of: b)]
          if Self.edge(of: b) == Self.edge(of: a) && fromEdge.from != fromEdge.to {
            uTurn = b
            continue
          }
          if blocked { continue }
          if fromRestrictions.contains(where: { $0.isOnly ? $0.toWay != toEdge.wayID : $0.toWay == toEdge.wayID }) {
            continue
          }
          allowed.append(b)
        }
        // Turning back, as OSRM allows it: where nothing else is possible (dead ends, barriers,
        // forbidden exits), and where no other road leads into the junction.
        if let uTurn, allowed.isEmpty || arriving.count <= 1 { allowed.append(uTurn) }
        let inBearing = Self.bearing(network, a, atEnd: true)
        let aRestricted = fromEdge.cost(reversed: Self.isReversed(a))?.restricted ?? false
        for b in allowed {
          let toEdge = network.edges[Self.edge(of: b)]
          let isUTurn = Self.edge(of: b) == Self.edge(of: a)
          let angle = isUTurn ? 180 : Geo.turnAngle(from: inBearing, to: Self.bearing(network, b, atEnd: false))
          let cost = Float(
            profile.turnCost(
              angle: angle, roads: roads, isUTurn: isUTurn,
              involvesRoundabout: fromEdge.isRoundabout || toEdge.isRoundabout)) + delay
          let bRestricted = toEdge.cost(reversed: Self.isReversed(b))?.restricted ?? false
          let penalty: Float = !aRestricted && bRestricted ? Self.restrictedEntryPenalty : 0
          turnsFrom[Int(a)].append((b, cost, penalty))
        }
      }
    }
    firstArc.reserveCapacity(edgeCount * 2 + 1)
    for turns in turnsFrom {
      firstArc.append(Int32(arcTarget.count))
      for turn in turns {
        arcTarget.append(turn.target)
        arcTurnCost.append(turn.cost)
        arcPenalty.append(turn.penalty)
      }
    }
    firstArc.append(Int32(arcTarget.count))
  }

  /// The direction of a directed edge at its start (`atEnd: false`) or its end, seen from the
  /// junction there: towards the road's representative point (`representativePoint`).
  static func bearing(_ network: RoadNetwork, _ directed: Int32, atEnd: Bool) -> Double {
    let edge = network.edges[Self.edge(of: directed)]
    var shape = Array(network.shape(of: edge))
    if isReversed(directed) { shape.reverse() }
    // Departure: outward from the first point. Arrival: outward from the last point, reversed.
    if atEnd { shape.reverse() }
    var points: [FixedCoordinate] = []
    for index in shape where points.last != network.points[Int(index)] { points.append(network.points[Int(index)]) }
    guard points.count >= 2 else { return 0 }
    let outward = Geo.bearing(points[0], representativePoint(points, roundabout: edge.isRoundabout))
    return atEnd ? (outward + 180).truncatingRemainder(dividingBy: 360) : outward
  }

  /// Where a road seems to go from a junction, after OSRM's coordinate extractor (the cases that
  /// decide most turns): straight two-point roads by their far end, roundabouts by their first
  /// metres, a long first segment by its end, a straight stretch by its end, else 10 m ahead.
  static func representativePoint(_ points: [FixedCoordinate], roundabout: Bool) -> FixedCoordinate {
    let laneWidth = 3.25
    let consideredLanes = 2.0
    if points.count <= 2 { return points.last! }
    if roundabout { return point(along: points, at: 2) }
    if Geo.distance(points[0], points[1]) > consideredLanes * laneWidth + 10 { return points[1] }
    let trimmed = trim(points, to: 40 + consideredLanes * laneWidth)
    let total = zip(trimmed, trimmed.dropFirst()).reduce(0) { $0 + Geo.distance($1.0, $1.1) }
    if trimmed.count == 2 || total <= 2 { return trimmed.last! }
    if maximumDeviation(trimmed, from: trimmed.first!, to: trimmed.last!) < 0.5 * laneWidth {
      return trimmed.first == trimmed.last ? point(along: trimmed, at: 2) : trimmed.last!
    }
    var straight = Geo.distance(trimmed[0], trimmed[1])
    for index in 2..<trimmed.count {
      guard maximumDeviation(Array(trimmed[...index]), from: trimmed[0], to: trimmed[index]) < 0.25 * laneWidth else {
        break
      }
      straight += Geo.distance(trimmed[index - 1], trimmed[index])
    }
    if straight >= consideredLanes * laneWidth + 10 { return point(along: trimmed, at: 5) }
    return point(along: trimmed, at: 10)
  }

  static func point(along points: [FixedCoordinate], at metres: Double) -> FixedCoordinate {
    var travelled = 0.0
    for (a, b) in zip(points, points.dropFirst()) {
      let step = Geo.distance(a, b)
      if travelled + step >= metres { return step > 0 ? Geo.interpolate(a, b, (metres - travelled) / step) : b }
      travelled += step
    }
    return points.last!
  }

  static func trim(_ points: [FixedCoordinate], to metres: Double) -> [FixedCoordinate] {
    var result = [points[0]]
    var travelled = 0.0
    for (a, b) in zip(points, points.dropFirst()) {
      let step = Geo.distance(a, b)
      if travelled + step >= metres {
        result.append(step > 0 ? Geo.interpolate(a, b, (metres - travelled) / step) : b)
        return result
      }
      travelled += step
      result.append(b)
    }
    return result
  }

  static func maximumDeviation(_ points: [FixedCoordinate], from a: FixedCoordinate, to b: FixedCoordinate) -> Double {
    points.map { Geo.distance($0, Geo.interpolate(a, b, Geo.projection(of: $0, onto: a, b))) }.max() ?? 0
  }

}

extension TurnGraph {
  /// Strongly connected components (iterative Tarjan): a component id per directed edge, and each
  /// component's size. A point snapped into a tiny component (a fenced car park, a private
  /// cul-de-sac) cannot reach most of the network, so snapping prefers big components.
  public func stronglyConnectedComponents() -> (component: [Int32], size: [Int32]) {
    let count = directedEdgeCount
    var index = [Int32](repeating: -1, count: count)
    var low = [Int32](repeating: 0, count: count)
    var onStack = [Bool](repeating: false, count: count)
    var component = [Int32](repeating: -1, count: count)
    var sizes: [Int32] = []
    var stack: [Int32] = []
    var next: Int32 = 0
    // (node, next arc to look at)
    var work: [(node: Int32, arc: Int)] = []
    for root in 0..<count where index[root] < 0 {
      work.append((Int32(root), Int(firstArc[root])))
      index[root] = next
      low[root] = next
      next += 1
      stack.append(Int32(root))
      onStack[root] = true
      while let (node, arc) = work.last {
        let end = Int(firstArc[Int(node) + 1])
        if arc < end {
          work[work.count - 1].arc = arc + 1
          let target = Int(arcTarget[arc])
          if index[target] < 0 {
            index[target] = next
            low[target] = next
            next += 1
            stack.append(Int32(target))
            onStack[target] = true
            work.append((Int32(target), Int(firstArc[target])))
          } else if onStack[target] {
            low[Int(node)] = min(low[Int(node)], index[target])
          }
          continue
        }
        work.removeLast()
        if let parent = work.last { low[Int(parent.node)] = min(low[Int(parent.node)], low[Int(node)]) }
        if low[Int(node)] == index[Int(node)] {
          let id = Int32(sizes.count)
          var size: Int32 = 0
          while true {
            let member = stack.removeLast()
            onStack[Int(member)] = false
            component[Int(member)] = id
            size += 1
            if member == node { break }
          }
          sizes.append(size)
        }
      }
    }
    return (component, sizes)
  }
}
