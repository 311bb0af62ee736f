import Foundation

/// OSRM's sliproads (sliproad_handler.cpp): a short road that cuts the corner from a road onto
/// one crossing it a little further on is said as the turn onto the crossing road, where the
/// short road begins.
extension Guidance {
  /// A junction's roads as met arriving by one of them, the road arrived by first (OSRM's
  /// intersection view).
  struct ArrivalView {
    var junction: Int
    var arrivedBy: Int
    /// The turns as `JunctionGeometry.turns` gives them, and with the road arrived by first.
    var turns: [JunctionGeometry.Turn]
    var full: [JunctionGeometry.Turn]
    var allowed: [Bool]

    /// No way on but back (OSRM's `isDeadEnd`).
    var isDeadEnd: Bool { !full.dropFirst().contains { allowed[$0.road] } }
  }

  /// The roads that may be entered at `junction` from road `road` there.
  func allowedRoads(at junction: Int, arrivingBy road: Int) -> [Bool] {
    let roads = junctions.roads[junction]
    guard let arriving = roads[road].arriving else { return roads.map { _ in false } }
    var targets = Set<Int32>()
    for arc in turns.arcs(from: arriving) { targets.insert(turns.arcTarget[arc]) }
    return roads.map { $0.leaving.map(targets.contains) ?? false }
  }

  func arrivalView(at junction: Int, arrivingBy road: Int, merged: Bool = true) -> ArrivalView {
    arrivalView(at: junction, arrivingBy: road, roads: junctions.roads(at: junction, merged: merged))
  }

  /// The junction's `roads`, read as the caller reads them, met arriving by `road`.
  func arrivalView(at junction: Int, arrivingBy road: Int, roads: [JunctionGeometry.Road]) -> ArrivalView {
    let allowed = allowedRoads(at: junction, arrivingBy: road)
    let turns = JunctionGeometry.turns(from: road, roads: roads, allowed: allowed)
    return ArrivalView(
      junction: junction, arrivedBy: road, turns: turns, full: Self.withArrival(turns, arrivedBy: road),
      allowed: allowed)
  }

  /// A junction as OSRM's graph walker reads it (`getConnectedRoads<true>`, where its sliproad
  /// handler reads the junction a sliproad ends at): unmerged, and each road's bearing taken to
  /// its first point more than a metre away, not to where the road seems to lead. A link that
  /// bends just before it ends thus arrives along its last metres (Adelphi Terrace off Anzac
  /// Highway in Adelaide: 224° there against 246° as perceived).
  func closeArrivalView(at junction: Int, arrivingBy road: Int) -> (view: ArrivalView, roads: [JunctionGeometry.Road]) {
    let center = network.coordinate(ofJunction: Int32(junction))
    var roads = junctions.roads(at: junction, merged: false)
    for index in roads.indices {
      roads[index].perceivedBearing = Geo.bearing(center, closeToTurn(junction: junction, road: index))
    }
    return (arrivalView(at: junction, arrivingBy: road, roads: roads), roads)
  }

  /// OSRM's junctions always start with a U-turn: the road arrived by, unless that may not be
  /// entered and another road turns back (the other half of a merged dual carriageway).
  static func withArrival(_ turns: [JunctionGeometry.Turn], arrivedBy: Int) -> [JunctionGeometry.Turn] {
    if turns.first?.road == arrivedBy || turns.first?.angle == 0 { return turns }
    return [JunctionGeometry.Turn(road: arrivedBy, angle: 0, isUTurn: true, roads: 0)] + turns
  }

  /// The index in `here.full` of a sliproad at this junction, if one leaves it.
  func sliproad(at here: ArrivalView, obvious: Int?) -> Int? {
    let b = here.junction
    let view = here.full
    guard view.count > 2 else { return nil }
    let roadsAtB = junctions.roads[b]
    let edge = { (turn: JunctionGeometry.Turn) in self.network.edges[roadsAtB[turn.road].edge] }
    let arriving = network.edges[roadsAtB[here.arrivedBy].edge]
    guard let main = obviousWithSliproads(here, obvious: obvious) else { return nil }
    let mainEdge = edge(view[main])
    // The road arrived by goes on as the main road.
    guard arriving.roadClass == mainEdge.roadClass, arriving.isFerry == mainEdge.isFerry,
      isNamed(arriving), isNamed(mainEdge), !RoadNames.requiresNameAnnounced(from: label(arriving), to: label(mainEdge))
    else { return nil }
    let isPotentialLink = { (i: Int) -> Bool in
      here.allowed[view[i].road] && Self.deviation(view[i].angle) <= 2 * Self.narrowTurnAngle
        && Self.angularDeviation(view[main].angle, view[i].angle) > .ulpOfOne && !edge(view[i]).isRoundabout
    }
    // The intersection the sliproad cuts off, past junctions of two roads (OSRM's
    // `getNextIntersection`), where roads cross. Not too far, as OSRM measures it
    // (`nextIntersectionIsTooFarAway`): its walk checks the distance only where it goes on past a
    // junction of two roads, so a main road that reaches the intersection in one piece is never
    // too far (Pelican Point Road in Adelaide: 37 m, over the 25 m of its class).
    guard view.indices.dropFirst().contains(where: isPotentialLink),
      let c = junctions.nextIntersection(from: b, road: view[main].road, network: network),
      c.lengthToLastJoint <= Self.sliproadThreshold(mainEdge.roadClass)
    else { return nil }
    // Read unmerged, as OSRM's `getNextIntersection` reads it: a dual carriageway crossing there
    // keeps both halves, and the crossing road its own angle.
    let atC = arrivalView(at: c.junction, arrivingBy: c.arrivingRoad, merged: false)
    guard !atC.isDeadEnd, atC.full.count > 2 else { return nil }
    let roadsAtC = junctions.roads(at: c.junction, merged: false)
    let namesAtC = atC.full.map { label(network.edges[roadsAtC[$0.road].edge]) }
    let pointB = network.coordinate(ofJunction: Int32(b))
    let pointC = network.coordinate(ofJunction: Int32(c.junction))

    for index in [main - 1, main + 1] where index >= 1 && index < view.count {
      let isRight = index < main
      let crossing = isRight ? atC.full[1] : atC.full[atC.full.count - 1]
      let slipRoad = roadsAtB[view[index].road]
      let slip = edge(view[index])
      guard roadsAtC[crossing.road].leaving != nil, !slip.roadClass.isLowPriority, slipRoad.leaving != nil,
        isPotentialLink(index),
        let d = junctions.nextIntersection(from: b, road: view[index].road, network: network)
      else { continue }
      let (atD, roadsAtD) = closeArrivalView(at: d.junction, arrivingBy: d.arrivingRoad)
      guard !atD.isDeadEnd, (3...4).contains(atD.full.count), c.junction != d.junction, b != d.junction,
        let firstWayOn = atD.full.first(where: { atD.allowed[$0.road] }),
        network.edges[roadsAtD[firstWayOn.road].edge].isFerry == slip.isFerry, slip.isFerry == arriving.isFerry
      else { continue }
      let crossingTarget = junctions.next(from: c.junction, road: crossing.road, network: network, limit: 0)?.junction
      if atD.full.count == 4 {
        // A four-way end: the crossing road leads there, and a sharp turn there leads where the
        // road beside the crossing one does.
        guard atC.full.count >= 3, crossingTarget == d.junction,
          let besideTarget = junctions.next(
            from: c.junction, road: atC.full[isRight ? 2 : atC.full.count - 2].road, network: network, limit: 0)?
            .junction,
          atD.full.contains(where: { road in
            [.sharpRight, .sharpLeft].contains(RouteStep.Modifier(turnAngle: road.angle))
              && junctions.next(from: d.junction, road: road.road, network: network, limit: 0)?.junction == besideTarget
          })
        else { continue }
      }
      // The sliproad ends in an obvious way on, near straight ahead.
      guard
        let onto = ObviousTurn(
          network: network, view: atD.turns, roads: roadsAtD, allowed: atD.allowed, arrivedBy: d.arrivingRoad
        ).find(), Self.deviation(atD.turns[onto].angle) <= 2 * Self.narrowTurnAngle,
        !network.edges[roadsAtD[atD.turns[onto].road].edge].isRoundabout
      else { continue }
      // It hugs the corner: every point of it on the corner's side of the line from its start to
      // its end; and it does not cut a corner the crossing road barely turns at, unless a link.
      // OSRM reads the sliproad's last piece only, drawn from `b` (`GetForwardCoordinatesAlongRoad`
      // with the walk's last edge).
      let line = [pointB] + d.lastShape.dropFirst()
      if Geo.distance(pointB, pointC) >= 3, line.count >= 2, let end = line.last {
        let start = pointB
        let inside = line.dropFirst().dropLast()
        let hugs = inside.allSatisfy { Self.isCounterClockwise(start, $0, end) != isRight }
        guard hugs else { continue }
        if Self.deviation(crossing.angle) > 180 - 40 && !slip.roadClass.isLink { continue }
      }
      let area =
        Geo.distance(pointB, pointC) * Geo.distance(pointC, network.coordinate(ofJunction: Int32(d.junction))) / 2
      guard area >= 3, area <= pow(Self.sliproadThreshold(slip.roadClass), 2) else { continue }
      for candidate in atD.full {
        let candidateEdge = network.edges[roadsAtD[candidate.road].edge]
        // The road it ends on is one of the roads at the main road's junction, by name.
        guard namesAtC.contains(where: { !RoadNames.requiresNameAnnounced(from: $0, to: label(candidateEdge)) }) else {
          continue
        }
        if !slip.roadClass.isLink && !label(slip).name.isEmpty && !label(mainEdge).name.isEmpty
          && !label(candidateEdge).name.isEmpty
          && RoadNames.requiresNameAnnounced(from: label(mainEdge), to: label(slip))
          && RoadNames.requiresNameAnnounced(from: label(slip), to: label(candidateEdge))
        {
          continue
        }
        if slip.roadClass.isLink && candidateEdge.roadClass.isLink { continue }
        let target = junctions.next(from: d.junction, road: candidate.road, network: network, limit: 0)?.junction
        let joinsCrossing =
          target != nil && target == crossingTarget
          && Geo.angleBetween(roadsAtD[candidate.road].perceivedBearing, roadsAtC[crossing.road].perceivedBearing)
            < Self.fuzzyAngleDifference
          && [.sharpRight, .sharpLeft].contains(RouteStep.Modifier(turnAngle: candidate.angle))
        if target == c.junction || joinsCrossing { return index }
      }
    }
    return nil
  }

  /// The obvious way on, or at a fork of two where one way leads to where a sliproad would end,
  /// the other (OSRM's `getObviousIndexWithSliproads`), as an index of `here.full`.
  func obviousWithSliproads(_ here: ArrivalView, obvious: Int?) -> Int? {
    if let obvious { return obvious }
    let view = here.full
    guard view.count == 3,
      forkMembers(
        view: here.turns, options: here.turns.filter { here.allowed[$0.road] && !$0.isUTurn },
        roads: junctions.roads[here.junction], arrivedBy: here.arrivedBy) != nil,
      let first = junctions.nextIntersection(from: here.junction, road: view[1].road, network: network),
      let second = junctions.nextIntersection(from: here.junction, road: view[2].road, network: network)
    else { return nil }
    let atFirst = arrivalView(at: first.junction, arrivingBy: first.arrivingRoad, merged: false)
    let atSecond = arrivalView(at: second.junction, arrivingBy: second.arrivingRoad, merged: false)
    guard !atFirst.isDeadEnd, !atSecond.isDeadEnd, atFirst.full.count > 2, atSecond.full.count > 2 else { return nil }
    if Self.canEndSliproad(atFirst) && here.junction != second.junction { return 2 }
    if Self.canEndSliproad(atSecond) && here.junction != first.junction { return 1 }
    return nil
  }

  /// One way on and two ways in (OSRM's `canBeTargetOfSliproad`).
  static func canEndSliproad(_ view: ArrivalView) -> Bool {
    view.full.count == 3 && !view.allowed[view.full[0].road]
      && !(view.allowed[view.full[1].road] && view.allowed[view.full[2].road])
  }

  /// OSRM's `MAX_SLIPROAD_THRESHOLD` (250 m) scaled by the road's class.
  static func sliproadThreshold(_ roadClass: RoadClass) -> Double {
    let factor: Double =
      switch roadClass {
      case .motorway: 1.0
      case .trunk, .primary: 0.8
      case .secondary: 0.6
      case .tertiary: 0.5
      case .residential: 0.4
      case .livingStreet: 0.3
      case .motorwayLink, .trunkLink, .primaryLink, .secondaryLink, .tertiaryLink: 0.3
      case .unclassified, .service, .track, .footPath, .other: 0.1
      }
    return 250 * factor
  }

  /// OSRM's `isCCW` on longitude and latitude.
  static func isCounterClockwise(_ a: FixedCoordinate, _ b: FixedCoordinate, _ c: FixedCoordinate) -> Bool {
    let (ax, ay) = (Double(a.longitudeE6), Double(a.latitudeE6))
    let (bx, by) = (Double(b.longitudeE6), Double(b.latitudeE6))
    let (cx, cy) = (Double(c.longitudeE6), Double(c.latitudeE6))
    return (bx - ax) * (cy - ay) - (cx - ax) * (by - ay) > 0
  }
}
