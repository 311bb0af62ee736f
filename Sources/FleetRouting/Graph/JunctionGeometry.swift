import Foundation

/// The roads at every junction as a driver perceives them, and the turn angles between them,
/// the way OSRM derives them (its intersection analysis), so that turn costs agree with OSRM's.
///
/// A road is read along its whole course to the next real intersection: junctions that only
/// join two compatible pieces of road (a way split for a bridge, say) are passed through, as
/// OSRM's graph compression passes them.
struct JunctionGeometry {
  struct Road {
    var edge: Int
    /// The directed edge that drives this road into the junction; nil when that is not allowed.
    var arriving: Int32?
    /// The directed edge that drives this road away from the junction; nil when not allowed.
    var leaving: Int32?
    /// Bearing of the road's first 2 m, away from the junction.
    var initialBearing: Double
    /// Bearing towards where the road seems to lead (`PerceivedBearing`).
    var perceivedBearing: Double
    /// The entry-only half of a dual carriageway that is read as one road with its other half.
    var isMergedAway = false
  }

  struct Turn {
    var road: Int
    /// OSRM's turn angle: 180 straight on, below 180 to the right, 0 turning back.
    var angle: Double
    var isUTurn: Bool
    /// Roads the profile's turn function is told the junction has.
    var roads: Int
  }

  /// A road's shape leaving a junction, the next real intersection it reaches, whether that is
  /// the junction itself, and the edge by which it arrives there.
  typealias RoadShape = (shape: [FixedCoordinate], far: Int32, loops: Bool, lastEdge: Int)

  /// Roads per junction, one per edge end there.
  var roads: [[Road]]
  /// Junctions that only join two compatible pieces of road, which a road is read through.
  let passThrough: [Bool]
  /// The roads of the junctions that merging changed, as they were before it: OSRM's guidance
  /// reads some intersections unmerged (`getConnectedRoads`, as its sliproad handler does).
  var unmerged: [Int32: [Road]] = [:]

  /// Shapes are read this far along a road at most (OSRM looks at most ~130 m ahead).
  static let readingLimit = 250.0

  init(network: RoadNetwork) {
    var ends = Array(repeating: [(edge: Int, atFrom: Bool)](), count: network.junctions.count)
    for (i, edge) in network.edges.enumerated() {
      ends[Int(edge.from)].append((i, true))
      ends[Int(edge.to)].append((i, false))
    }
    var isVia = Array(repeating: false, count: network.junctions.count)
    for r in network.restrictions { isVia[Int(r.via)] = true }
    let passThrough = network.junctions.indices.map { j in
      Self.joinsCompatiblePieces(network, ends[j], blocked: network.blockedJunctions[j] || isVia[j])
    }
    self.passThrough = passThrough
    // OSRM reads a road's bearing on its compressed edge alone, and its compression never makes a
    // second road between two nodes (`GraphCompressor`): a junction whose neighbours a road joins
    // already ends the edge (the nodes `OSMExtractor.nodesKeptByCompression` keeps on loops and
    // parallel roads). Its graph walker reads on through them, as `passThrough` does.
    let far = { (end: (edge: Int, atFrom: Bool)) in
      end.atFrom ? network.edges[end.edge].to : network.edges[end.edge].from
    }
    let compressedThrough = network.junctions.indices.map { j in
      passThrough[j] && !ends[Int(far(ends[j][0]))].contains { far($0) == far(ends[j][1]) }
    }

    var shapes: [[RoadShape]] = []
    roads = network.junctions.indices.map { junction in
      let incident = ends[junction]
      let maximumLanes = incident.map { Int(network.edges[$0.edge].lanes) }.max() ?? 0
      var junctionShapes: [RoadShape] = []
      let roads = incident.map { end in
        let edge = network.edges[end.edge]
        // The road's compressed edge gives its bearing; its shape is read on through the nodes
        // OSRM's graph walker passes, where that edge ends at a node a road joins already.
        let compressed = Self.walk(
          network, from: Int32(junction), end, ends: { ends[Int($0)] }, passThrough: compressedThrough)
        var walked = compressed
        if passThrough[Int(compressed.far)] && compressed.far != Int32(junction) {
          walked = Self.walk(network, from: Int32(junction), end, ends: { ends[Int($0)] }, passThrough: passThrough)
        }
        junctionShapes.append((walked.shape, walked.far, walked.loops, walked.lastEdge))
        let (shape, loops) = (compressed.shape, compressed.loops)
        let representative: FixedCoordinate
        if loops {
          representative = shape[1]
        } else if incident.count <= 2 {
          representative = PerceivedBearing.closeToTurn(shape)
        } else {
          let lanes = Double(maximumLanes == 0 ? 2 : maximumLanes)
          representative = PerceivedBearing.representativePoint(
            shape, isRoundabout: edge.isRoundabout, isLowPriority: edge.roadClass.isLowPriority,
            consideredLanes: edge.roadClass.offsetCorrectionFactor * lanes)
        }
        // At `from`, arrival is the backward direction; at `to`, the forward one.
        return Road(
          edge: end.edge,
          arriving: edge.cost(reversed: end.atFrom) != nil ? TurnGraph.directed(end.edge, reversed: end.atFrom) : nil,
          leaving: edge.cost(reversed: !end.atFrom) != nil ? TurnGraph.directed(end.edge, reversed: !end.atFrom) : nil,
          initialBearing: Geo.bearing(shape[0], PerceivedBearing.initialPoint(shape)),
          perceivedBearing: Geo.bearing(shape[0], representative))
      }
      shapes.append(junctionShapes)
      return roads
    }
    let merging = RoadMerging(network: network, roads: roads, shapes: shapes)
    let merged = merging.mergedRoads()
    for junction in roads.indices
    where zip(roads[junction], merged[junction]).contains(where: {
      $0.perceivedBearing != $1.perceivedBearing || $0.initialBearing != $1.initialBearing
        || $0.isMergedAway != $1.isMergedAway
    }) {
      unmerged[Int32(junction)] = roads[junction]
    }
    roads = merged
  }

  /// The roads at `junction`, merged or as they were before merging.
  func roads(at junction: Int, merged: Bool) -> [Road] {
    merged ? roads[junction] : unmerged[Int32(junction)] ?? roads[junction]
  }

  /// The turns from road `from` at `junction` onto each road, as OSRM's intersection view
  /// orders and angles them. `allowed` says which roads may be entered from `from`; `merged`
  /// false reads the junction as it was before dual carriageways' halves were merged.
  func turns(from: Int, at junction: Int, allowed: [Bool], merged: Bool = true) -> [Turn] {
    Self.turns(from: from, roads: roads(at: junction, merged: merged), allowed: allowed)
  }

  /// The turns from road `from` onto each of a junction's `roads`, read as the caller reads them.
  static func turns(from: Int, roads: [Road], allowed: [Bool]) -> [Turn] {
    let entry = Geo.reverse(roads[from].perceivedBearing)
    let initialEntry = Geo.reverse(roads[from].initialBearing)
    var view: [(road: Int, angle: Double, key: Double)] = []
    var back: (road: Int, angle: Double)?
    var turnsBack = 0
    for (index, road) in roads.enumerated() {
      var angle = ((Geo.angleBetween(entry, road.perceivedBearing) * 1e8).rounded() / 1e8)
        .truncatingRemainder(dividingBy: 360)
      var initial = Geo.angleBetween(initialEntry, road.initialBearing)
      // A perceived near-U-turn whose first metres leave on the other side is a U-turn.
      if allowed[index] && ((angle < 15 && initial > 180) || (angle > 345 && initial < 180)) {
        angle = 0
        initial = 0
      }
      let turnsBackHere = angle == 0
      if index == from {
        back = (index, angle)
      } else if allowed[index] || (!road.isMergedAway && !turnsBackHere) {
        if turnsBackHere { turnsBack += 1 }
        let crossesZero = (angle > 270 && initial < 90) || (angle < 90 && initial > 270)
        let key = initial == 0 ? (angle > 180 ? 360 : 0) : crossesZero ? angle : initial
        view.append((index, angle, key))
      }
    }
    if let back, allowed[back.road] || turnsBack == 0 { view.insert((back.road, back.angle, 0), at: 0) }
    // Order by the roads' first metres; perceived angles may not reorder them.
    let ordered = view.enumerated().sorted {
      ($0.element.key, $0.element.angle, $0.offset) < ($1.element.key, $1.element.angle, $1.offset)
    }.map(\.element)
    var angles = ordered.map(\.angle)
    for i in angles.indices.dropFirst() where angles[i] < angles[i - 1] {
      angles[i] = Self.restricted(angles[i - 1] + min(0.5, Self.restricted(360 - angles[i - 1]) / 2))
    }
    return ordered.indices.map { i in
      let isUTurn = angles[i] <= 0 || angles[i] >= 360
      return Turn(
        road: ordered[i].road, angle: angles[i], isUTurn: isUTurn, roads: isUTurn && i > 0 ? view.count - 1 : view.count
      )
    }
  }

  static func restricted(_ angle: Double) -> Double {
    var angle = angle
    while angle < 0 { angle += 360 }
    while angle > 360 { angle -= 360 }
    return angle
  }

  /// Edges grouped into the roads OSRM's graph compression makes of them: a group id per edge,
  /// edges joined through junctions that only join two pieces of the same road.
  static func compressedRoads(_ network: RoadNetwork) -> [Int32] {
    var ends = Array(repeating: [(edge: Int, atFrom: Bool)](), count: network.junctions.count)
    for (i, edge) in network.edges.enumerated() {
      ends[Int(edge.from)].append((i, true))
      ends[Int(edge.to)].append((i, false))
    }
    var isVia = Array(repeating: false, count: network.junctions.count)
    for r in network.restrictions { isVia[Int(r.via)] = true }
    var parent = Array(0..<network.edges.count)
    func root(_ i: Int) -> Int {
      var i = i
      while parent[i] != i {
        parent[i] = parent[parent[i]]
        i = parent[i]
      }
      return i
    }
    for j in network.junctions.indices
    where joinsCompatiblePieces(network, ends[j], blocked: network.blockedJunctions[j] || isVia[j]) {
      parent[root(ends[j][0].edge)] = root(ends[j][1].edge)
    }
    return network.edges.indices.map { Int32(root($0)) }
  }

  /// A junction that only joins two pieces of the same road, drivable alike: OSRM does not see
  /// an intersection there.
  static func joinsCompatiblePieces(_ network: RoadNetwork, _ ends: [(edge: Int, atFrom: Bool)], blocked: Bool) -> Bool
  {
    guard ends.count == 2, !blocked, ends[0].edge != ends[1].edge else { return false }
    let a = network.edges[ends[0].edge]
    let b = network.edges[ends[1].edge]
    let farA = ends[0].atFrom ? a.to : a.from
    let farB = ends[1].atFrom ? b.to : b.from
    guard farA != farB, a.describesSameRoad(as: b) else { return false }
    // Driving through: into the junction along a, out along b, and the other way round.
    let aIn = a.cost(reversed: ends[0].atFrom)
    let aOut = a.cost(reversed: !ends[0].atFrom)
    let bIn = b.cost(reversed: ends[1].atFrom)
    let bOut = b.cost(reversed: !ends[1].atFrom)
    return (aIn == nil) == (bOut == nil) && (aOut == nil) == (bIn == nil) && aIn?.restricted == bOut?.restricted
      && aOut?.restricted == bIn?.restricted && aIn?.classes == bOut?.classes && aOut?.classes == bIn?.classes
  }

  /// Where road `road` at `junction` leads: the next real intersection, the road it arrives there
  /// by, its length and its shape (up to `limit` metres; past it, the length is at least `limit`),
  /// read through pass-through junctions (OSRM's `getNextIntersection`). Nil when it comes back to
  /// `junction`.
  func next(
    from junction: Int, road: Int, network: RoadNetwork, limit: Double = readingLimit
  ) -> (junction: Int, arrivingRoad: Int, length: Double, shape: [FixedCoordinate])? {
    let walk = follow(from: junction, road: road, network: network, limit: limit)
    guard !walk.loops, let arriving = roads[Int(walk.far)].firstIndex(where: { $0.edge == walk.lastEdge }) else {
      return nil
    }
    return (Int(walk.far), arriving, walk.length, walk.shape)
  }

  /// The next junction of three roads or more that road `road` at `junction` leads to, read on
  /// through every junction of two roads, renamed or not (OSRM's `skipDegreeTwoNodes`, by which
  /// its guidance finds the next intersection): the road it arrives by, the length on the way, the
  /// length up to the last junction of two roads passed (0 when none), and the shape of the last
  /// piece, from that junction (or `junction`). Nil when it comes back to `junction`.
  func nextIntersection(from junction: Int, road: Int, network: RoadNetwork) -> (
    junction: Int, arrivingRoad: Int, length: Double, lengthToLastJoint: Double, lastShape: [FixedCoordinate]
  )? {
    var (at, current, length, toLastJoint) = (junction, road, 0.0, 0.0)
    for _ in 0..<10_000 {
      guard let reached = next(from: at, road: current, network: network, limit: .infinity),
        reached.junction != junction
      else { return nil }
      length += reached.length
      guard roads[reached.junction].count == 2 else {
        return (reached.junction, reached.arrivingRoad, length, toLastJoint, reached.shape)
      }
      toLastJoint = length
      (at, current) = (reached.junction, reached.arrivingRoad == 0 ? 1 : 0)
    }
    return nil
  }

  /// Road `road` at `junction` read through pass-through junctions (`walk`), each edge on the
  /// way handed to `visit` with whether it is driven from its `from` end.
  func follow(
    from junction: Int, road: Int, network: RoadNetwork, limit: Double = readingLimit,
    visit: (_ edge: Int, _ atFrom: Bool) -> Void = { _, _ in }
  ) -> (shape: [FixedCoordinate], far: Int32, loops: Bool, lastEdge: Int, length: Double) {
    let ends = { (j: Int32) in
      self.roads[Int(j)].map { (edge: $0.edge, atFrom: network.edges[$0.edge].from == j) }
    }
    let edge = roads[junction][road].edge
    return Self.walk(
      network, from: Int32(junction), (edge, network.edges[edge].from == Int32(junction)), ends: ends,
      passThrough: passThrough, limit: limit, visit: visit)
  }

  /// A road read from `junction` by `end` through pass-through junctions: its shape and length
  /// up to `limit` (whole edges; past it the walk only looks for the next real intersection), the
  /// intersection it reaches, the last edge driven there, and whether that is the junction itself.
  static func walk(
    _ network: RoadNetwork, from junction: Int32, _ end: (edge: Int, atFrom: Bool),
    ends: (Int32) -> [(edge: Int, atFrom: Bool)], passThrough: [Bool], limit: Double = readingLimit,
    visit: (_ edge: Int, _ atFrom: Bool) -> Void = { _, _ in }
  ) -> (shape: [FixedCoordinate], far: Int32, loops: Bool, lastEdge: Int, length: Double) {
    var shape: [FixedCoordinate] = []
    var length = 0.0
    var current = end
    var reached = junction
    for _ in 0..<10_000 {
      let edge = network.edges[current.edge]
      visit(current.edge, current.atFrom)
      if length < limit {
        var indices = Array(network.shape(of: edge))
        if !current.atFrom { indices.reverse() }
        for index in indices {
          let point = network.points[Int(index)]
          if let last = shape.last {
            if last == point { continue }
            length += Geo.distance(last, point)
          }
          shape.append(point)
        }
      }
      let far = current.atFrom ? edge.to : edge.from
      reached = far
      if far == junction { return (shape.count >= 2 ? shape : shape + shape, far, true, current.edge, length) }
      guard passThrough[Int(far)], let next = ends(far).first(where: { $0.edge != current.edge }) else { break }
      current = next
    }
    // A shape is read whenever the limit allows any: at least its two ends.
    if shape.count == 1 { shape.append(shape[0]) }
    return (shape, reached, false, current.edge, length)
  }
}
