/// The edge-based graph routing runs on: a node per drivable direction of a road edge
/// (`edge * 2`, `+ 1` when driven `to → from`), an arc per allowed turn. Turn restrictions, U-turn
/// rules, barriers and turn costs live here, so every search honours them for free.
///
/// A via-way restriction adds a node: a copy of the restricted road's direction that only drives
/// arriving from the restriction's `from` way reach, without the forbidden turns
/// (`duplicateOf`). Searches report paths in original nodes (`original(_:)`).
public struct TurnGraph: Sendable, Codable {
  /// Arcs leaving directed edge `d`: `firstArc[d]..<firstArc[d + 1]`.
  public var firstArc: [Int32] = []
  public var arcTarget: [Int32] = []
  /// Seconds the turn costs (also its weight).
  public var arcTurnCost: [Float] = []
  /// Extra weight that keeps routes from driving through restricted roads (OSRM's max turn weight).
  public var arcPenalty: [Float] = []

  public static let restrictedEntryPenalty: Float = 3276.7

  /// The directed edge each node from `firstDuplicate` on copies.
  public var duplicateOf: [Int32] = []
  /// The copies of each directed edge that has any.
  public var duplicates: [Int32: [Int32]] = [:]

  public var firstDuplicate: Int32 { Int32(directedEdgeCount - duplicateOf.count) }

  /// The directed edge a node drives: itself, or the one it copies.
  @inline(__always) public func original(_ node: Int32) -> Int32 {
    node < firstDuplicate ? node : duplicateOf[Int(node - firstDuplicate)]
  }

  public var directedEdgeCount: Int { firstArc.count - 1 }

  public func arcs(from directed: Int32) -> Range<Int> {
    Int(firstArc[Int(directed)])..<Int(firstArc[Int(directed) + 1])
  }

  public static func directed(_ edge: Int, reversed: Bool) -> Int32 { Int32(edge * 2 + (reversed ? 1 : 0)) }
  public static func edge(of directed: Int32) -> Int { Int(directed) >> 1 }
  public static func isReversed(_ directed: Int32) -> Bool { directed & 1 == 1 }

  public init() {}

  public init(network: RoadNetwork, profile: CarProfile) {
    self.init(network: network, profile: profile, geometry: JunctionGeometry(network: network))
  }

  init(network: RoadNetwork, profile: CarProfile, geometry: JunctionGeometry) {
    let edgeCount = network.edges.count
    var restrictionsAt: [Int32: [TurnRestriction]] = [:]
    for r in network.restrictions { restrictionsAt[r.via, default: []].append(r) }
    var obstaclesAt: [Int32: [Obstacle]] = [:]
    for o in network.obstacles { obstaclesAt[o.junction, default: []].append(o) }

    var turnsFrom = Array(repeating: [(target: Int32, cost: Float, penalty: Float)](), count: edgeCount * 2)
    for junction in network.junctions.indices {
      let roads = geometry.roads[junction]
      // Arriving: driven towards this junction. Leaving: driven away from it.
      let arriving = roads.indices.filter { roads[$0].arriving != nil }
      let blocked = network.blockedJunctions[junction]
      let obstacles = obstaclesAt[Int32(junction)] ?? []
      let restrictions = restrictionsAt[Int32(junction)] ?? []
      for a in arriving {
        let inRoad = roads[a]
        let fromEdge = network.edges[inRoad.edge]
        let fromRestrictions = restrictions.filter { $0.fromWay == fromEdge.wayID }
        var allowed = Array(repeating: false, count: roads.count)
        var uTurn: Int?
        for (b, road) in roads.enumerated() where road.leaving != nil {
          if road.edge == inRoad.edge && fromEdge.from != fromEdge.to {
            uTurn = b
            continue
          }
          if blocked { continue }
          let toWay = network.edges[road.edge].wayID
          if fromRestrictions.contains(where: { $0.isOnly ? $0.toWay != toWay : $0.toWay == toWay }) { continue }
          allowed[b] = true
        }
        // Turning back, as OSRM allows it: where nothing else is possible (dead ends, barriers,
        // forbidden exits), and where no other road leads into the junction.
        if let uTurn, !allowed.contains(true) || arriving.count <= 1 { allowed[uTurn] = true }
        for b in Self.againstRingFlow(arrivedBy: a, roads: roads, network: network) { allowed[b] = false }
        let view = geometry.turns(from: a, at: junction, allowed: allowed)
        let aRestricted = fromEdge.cost(reversed: TurnGraph.isReversed(inRoad.arriving!))?.restricted ?? false
        for turn in view where allowed[turn.road] {
          let road = roads[turn.road]
          let toEdge = network.edges[road.edge]
          let delay = Self.obstacleDelay(
            obstacles, arrivingBy: inRoad.arriving!, leavingBy: road.leaving!, roads: roads, turnRoads: turn.roads,
            network: network)
          let seconds =
            profile.turnCost(
              angle: 180 - turn.angle, roads: turn.roads, isUTurn: turn.isUTurn,
              involvesRoundabout: fromEdge.isRoundabout || toEdge.isRoundabout,
              leftHandTraffic: fromEdge.drivingSide == .left, changesMode: fromEdge.isFerry != toEdge.isFerry)
            + Double(delay)
          // OSRM keeps turn costs in whole tenths of a second, cut down.
          let cost = Float((seconds * 10).rounded(.towardZero) / 10)
          let bRestricted = toEdge.cost(reversed: TurnGraph.isReversed(road.leaving!))?.restricted ?? false
          let penalty: Float = !aRestricted && bRestricted ? Self.restrictedEntryPenalty : 0
          turnsFrom[Int(inRoad.arriving!)].append((road.leaving!, cost, penalty))
        }
      }
    }
    duplicateOf = Self.applyWayRestrictions(network, &turnsFrom)
    for (i, original) in duplicateOf.enumerated() {
      duplicates[original, default: []].append(Int32(edgeCount * 2 + i))
    }
    firstArc.reserveCapacity(turnsFrom.count + 1)
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
}

extension TurnGraph {
  /// The roads that arriving by road `a` would be left by over a ring against its flow, which
  /// OSRM forbids (`isTurnAllowed`): going round the junction from the ring road coming in,
  /// those beyond the road arrived by, before the ring road going on. Where more than one ring
  /// road comes in or goes on (two rings linked at a junction), the one turned most from the road
  /// arrived by counts.
  static func againstRingFlow(arrivedBy a: Int, roads: [JunctionGeometry.Road], network: RoadNetwork) -> [Int] {
    let back = roads[a].perceivedBearing
    var ringIn: (bearing: Double, angle: Double)?
    var ringOn: (bearing: Double, angle: Double)?
    for road in roads where network.edges[road.edge].isRoundabout {
      if road.leaving == nil {
        let bearing = Geo.reverse(road.perceivedBearing)
        let angle = Geo.angleBetween(bearing, back)
        if angle > (ringIn?.angle ?? 0) { ringIn = (bearing, angle) }
      } else {
        let angle = Geo.angleBetween(back, road.perceivedBearing)
        if angle > (ringOn?.angle ?? 0) { ringOn = (road.perceivedBearing, angle) }
      }
    }
    guard let ringIn, let ringOn else { return [] }
    let ringAngle = Geo.angleBetween(ringIn.bearing, ringOn.bearing)
    let fromAngle = Geo.angleBetween(ringIn.bearing, back)
    return roads.indices.filter { b in
      guard b != a, roads[b].leaving != nil else { return false }
      let toAngle = Geo.angleBetween(ringIn.bearing, roads[b].perceivedBearing)
      return (fromAngle < ringAngle && toAngle < fromAngle) || (fromAngle > ringAngle && toAngle > fromAngle)
    }
  }

  /// Adds a copy of each restricted chain of road directions (from way, via roads): arcs from the
  /// `from` way into the chain go to the copy instead, each copy turns as its road does but into
  /// the next copy along the chain, and the last copy without the turns the restrictions forbid.
  /// Returns the directed edge each new node copies.
  static func applyWayRestrictions(
    _ network: RoadNetwork, _ turnsFrom: inout [[(target: Int32, cost: Float, penalty: Float)]]
  ) -> [Int32] {
    guard !network.wayRestrictions.isEmpty else { return [] }
    var groups: [[WayRestriction]] = []
    var groupOf: [String: Int] = [:]
    for r in network.wayRestrictions {
      let key = "\(r.fromWay) \(r.start) \(r.via)"
      if let g = groupOf[key] {
        groups[g].append(r)
      } else {
        groupOf[key] = groups.count
        groups.append([r])
      }
    }
    // The nodes arriving at each junction.
    var arriving: [Int32: [Int32]] = [:]
    for r in network.wayRestrictions { arriving[r.start] = [] }
    for (i, edge) in network.edges.enumerated() {
      for reversed in [false, true] where edge.cost(reversed: reversed) != nil {
        let end = reversed ? edge.from : edge.to
        if arriving[end] != nil { arriving[end]!.append(directed(i, reversed: reversed)) }
      }
    }
    var duplicateOf: [Int32] = []
    let originals = Int32(network.edges.count * 2)
    let original = { (node: Int32) in node < originals ? node : duplicateOf[Int(node - originals)] }
    for group in groups {
      let first = group[0]
      // The chain's directions, driven away from `start`.
      var chain: [Int32] = []
      var at = first.start
      for e in first.via {
        let edge = network.edges[Int(e)]
        let reversed = edge.to == at
        guard edge.cost(reversed: reversed) != nil else { break }
        chain.append(directed(Int(e), reversed: reversed))
        at = reversed ? edge.from : edge.to
      }
      guard chain.count == first.via.count else { continue }
      let arrivals = (arriving[first.start] ?? []).filter { node in
        network.edges[edge(of: node)].wayID == first.fromWay && turnsFrom[Int(node)].contains { $0.target == chain[0] }
      }
      guard !arrivals.isEmpty else { continue }
      let copies = chain.indices.map { Int32(turnsFrom.count + $0) }
      for (i, node) in chain.enumerated() {
        var turns = turnsFrom[Int(node)]
        if i + 1 < chain.count {
          turns = turns.map { $0.target == chain[i + 1] ? (copies[i + 1], $0.cost, $0.penalty) : $0 }
        } else {
          turns = turns.filter { turn in
            let way = network.edges[edge(of: original(turn.target))].wayID
            return group.allSatisfy { r in r.isOnly ? way == r.toWay : way != r.toWay }
          }
        }
        turnsFrom.append(turns)
        duplicateOf.append(node)
      }
      for node in arrivals {
        for i in turnsFrom[Int(node)].indices where turnsFrom[Int(node)][i].target == chain[0] {
          turnsFrom[Int(node)][i].target = copies[0]
        }
      }
    }
    return duplicateOf
  }

  /// Seconds the obstacles at a junction add to one turn through it, as OSRM's car profile
  /// charges them: signs facing another way do not count; a `stop=minor` sign only stops
  /// traffic from the minor road; an untagged stop sign on a road with no junction there stops
  /// only traffic heading for the junction it stands near (within 20 m).
  static func obstacleDelay(
    _ obstacles: [Obstacle], arrivingBy: Int32, leavingBy: Int32, roads: [JunctionGeometry.Road], turnRoads: Int,
    network: RoadNetwork
  ) -> Float {
    guard !obstacles.isEmpty else { return 0 }
    let source = network.edges[edge(of: arrivingBy)]
    let target = network.edges[edge(of: leavingBy)]
    var delay: Float = 0
    for obstacle in obstacles where obstacle.arrivingBy < 0 || obstacle.arrivingBy == arrivingBy {
      switch obstacle.kind {
      case .minorStop:
        let sourceSpeed = speed(source, reversed: isReversed(arrivingBy))
        let others = roads.filter { $0.edge != edge(of: arrivingBy) }.map { network.edges[$0.edge] }
        let fastest = others.map { max(speed($0, reversed: false), speed($0, reversed: true)) }.max() ?? 0
        if max(fastest, speed(target, reversed: isReversed(leavingBy))) <= sourceSpeed { continue }
      case .stop where obstacle.arrivingBy < 0 && turnRoads == 2:
        if source.length < 20 && target.length > 20 { continue }
      default: break
      }
      delay += obstacle.seconds
    }
    return delay
  }

  /// km/h of a road direction, 0 where it cannot be driven.
  static func speed(_ edge: RoadEdge, reversed: Bool) -> Double {
    guard let cost = edge.cost(reversed: reversed), cost.duration > 0 else { return 0 }
    return edge.length / cost.duration * 3.6
  }

  /// Strongly connected components (iterative Tarjan): a component id per directed edge, and
  /// each component's number of directed edges. With `joiningDirections`, the two directions of
  /// a two-way road count as connected to each other (OSRM's component search does so).
  public func stronglyConnectedComponents(joiningDirections twoWay: [Bool]? = nil) -> (
    component: [Int32], size: [Int32]
  ) {
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
        // One arc past the turns: to the road's other direction, when it joins them.
        let joins = Int(node) < (twoWay?.count ?? 0) * 2 && twoWay?[Int(node) >> 1] == true
        if arc < end || (arc == end && joins) {
          work[work.count - 1].arc = arc + 1
          let target = arc < end ? Int(arcTarget[arc]) : Int(node ^ 1)
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
