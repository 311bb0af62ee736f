import FleetGeometry

/// OSRM's intersection-internal roads (`segregated_intersection_classification.cpp`): the short
/// piece of road between the two halves of a dual carriageway that a turn crosses. Steps that
/// begin on one are said as one maneuver with the step after (`collapseSegregatedTurnInstructions`).
extension Guidance {
  /// OSRM's `INTERNAL_LENGTH_MAX`.
  static let internalRoadLength = 32.0

  /// Whether road `road` driven away from `junction` is such a piece (OSRM's `isSegregated`): at
  /// most 32 m to the next intersection, not round a roundabout, entered from a one-way road that
  /// crosses it and left onto one, without turning one way in and the other way out.
  func isSegregated(junction: Int, road: Int) -> Bool {
    let roads = junctions.roads[junction]
    let edge = network.edges[roads[road].edge]
    guard roads[road].leaving != nil, !edge.isRoundabout else { return false }
    let piece = chain(from: junction, road: road)
    let far = piece.far
    guard far != junction, piece.length <= Self.internalRoadLength else { return false }
    let into = closeToTurn(junction: junction, road: road)
    let center = network.coordinate(ofJunction: Int32(junction))
    let farCenter = network.coordinate(ofJunction: Int32(far))
    let arrivingFrom = closeToTurn(junction: far, road: piece.farRoad)

    var inbound = false
    var incoming = Set<RouteStep.Modifier>()
    for other in neighbours(of: junction, road: road, excluding: far) where roads[other].arriving != nil {
      let angle = Geo.turnAngle(closeToTurn(junction: junction, road: other), center, into)
      incoming.insert(RouteStep.Modifier(turnAngle: angle))
      if Self.isCrossingOneway(network.edges[roads[other].edge]), !Self.isInternalStraight(angle) { inbound = true }
    }
    guard inbound else { return false }
    var outbound = false
    var outgoing = Set<RouteStep.Modifier>()
    let farRoads = junctions.roads[far]
    for other in neighbours(of: far, road: piece.farRoad, excluding: junction) where farRoads[other].leaving != nil {
      let angle = Geo.turnAngle(arrivingFrom, farCenter, closeToTurn(junction: far, road: other))
      outgoing.insert(RouteStep.Modifier(turnAngle: angle))
      if Self.isCrossingOneway(network.edges[farRoads[other].edge]), !Self.isInternalStraight(angle) { outbound = true }
    }
    guard outbound else { return false }
    let hasLeft = { (turns: Set<RouteStep.Modifier>) in turns.contains(.left) || turns.contains(.sharpLeft) }
    let hasRight = { (turns: Set<RouteStep.Modifier>) in turns.contains(.right) || turns.contains(.sharpRight) }
    return
      !((hasLeft(incoming) && hasRight(outgoing)) || (hasRight(incoming) && hasLeft(outgoing))
      || (hasLeft(outgoing) && hasRight(outgoing)))
  }

  /// A one-way road of side-street rank or above that is no link: a dual carriageway's half.
  static func isCrossingOneway(_ edge: RoadEdge) -> Bool {
    let bidirectional = edge.forward != nil && edge.backward != nil
    let belowSideStreets = [.unclassified, .service, .other, .track, .footPath].contains(edge.roadClass)
    return !bidirectional && !edge.roadClass.isLink && !belowSideStreets
  }

  /// OSRM's `INTERNAL_STRAIGHT_LOWER_BOUND` and `_UPPER_BOUND`.
  static func isInternalStraight(_ angle: Double) -> Bool { angle > 150 && angle < 210 }

  /// The other roads at a junction, one per place they lead to, none leading to `excluded`.
  func neighbours(of junction: Int, road: Int, excluding excluded: Int) -> [Int] {
    var seen = Set<Int>()
    return junctions.roads[junction].indices.filter { other in
      guard other != road else { return false }
      let far = chain(from: junction, road: other).far
      return far != excluded && seen.insert(far).inserted
    }
  }

  /// OSRM's `GetCoordinateCloseToTurn`: the first point along a road more than a metre from the
  /// junction, else the road's far end.
  func closeToTurn(junction: Int, road: Int) -> FixedCoordinate {
    let center = network.coordinate(ofJunction: Int32(junction))
    let edge = network.edges[junctions.roads[junction][road].edge]
    var shape = Array(network.shape(of: edge))
    if edge.from != Int32(junction) { shape.reverse() }
    for index in shape {
      let point = network.points[Int(index)]
      if Geo.distance(point, center) > 1 { return point }
    }
    return network.points[Int(shape.last!)]
  }
}

extension StepCollapsing {
  /// OSRM's `collapseSegregatedTurnInstructions`, before any other collapsing: a step that
  /// begins on a road inside an intersection is said with the step after it (the two as one
  /// when both are).
  mutating func collapseSegregated() {
    guard drafts.count > 2 else { return }
    var current = 1
    var next = 2
    let last = drafts.count - 1
    while next < last {
      let prior = previous(before: current)
      if drafts[current].isSegregated && drafts[next].isSegregated {
        if isType(current, .endOfRoad) || isType(next, .endOfRoad) {
          drafts[current].instruction = .announced(.endOfRoad)
        }
        transferLanes(to: current, from: next)
        join(current, next)
        next += 1
      } else if drafts[current].isSegregated && !drafts[next].isSegregated
        && !Self.hasRoundaboutType(drafts[current]) && !Self.hasRoundaboutType(drafts[next])
      {
        if let into = bearings(current), let out = bearings(next),
          Guidance.bearingsAreReversed(into.entry, out.exit)
        {
          drafts[current].instruction = .announced(.continue)
          drafts[current].step.maneuver.modifier = .uturn
        } else {
          segregatedTurn(at: current, from: next, prior: prior)
        }
        join(current, next)
        drafts[current].isSegregated = false
        next += 1
      } else {
        current = next
        next += 1
      }
    }
  }

  /// OSRM's `SegregatedTurnStrategy`: the kind and direction of a turn across a dual
  /// carriageway, from the way in to the way out.
  mutating func segregatedTurn(at current: Int, from next: Int, prior: Int) {
    let maneuver = drafts[current].step.maneuver
    let angle = Geo.angleBetween(
      Double(maneuver.bearingBefore), Double(drafts[next].step.maneuver.bearingAfter))
    let direction = RouteStep.Modifier(turnAngle: angle)
    let nearlyStraight: Set<RouteStep.Modifier> = [.straight, .slightLeft, .slightRight]
    let isTurnLike = isType(next, .turn, .continue, .newName) || isSuppressed(next)
    let sameName: Instruction = haveSameName(prior, next) ? .suppressed : .announced(.newName)
    var updatesModifier = true
    if isType(current, .endOfRoad) || isType(next, .endOfRoad) {
      drafts[current].instruction = .announced(.endOfRoad)
    } else if isType(current, .fork) {
      updatesModifier = false
    } else if direction == .straight, isTurnLike, modifier(next).map(nearlyStraight.contains) == true {
      drafts[current].instruction = sameName
    } else if angle >= 125 && angle <= 235, drafts[current].step.intersections.count == 1,
      hasStraightestTurn(current), hasStraightestTurn(next)
    {
      drafts[current].instruction = sameName
      drafts[current].step.maneuver.modifier = .straight
      updatesModifier = false
    } else if direction != .straight, isTurnLike {
      drafts[current].instruction = .announced(.turn)
    } else {
      drafts[current].instruction = drafts[next].instruction
    }
    if updatesModifier { drafts[current].step.maneuver.modifier = direction }
  }

  /// OSRM's `hasStraightestTurn`: the step's turn is near straight on, and no other way it could
  /// take is clearly straighter.
  func hasStraightestTurn(_ i: Int) -> Bool {
    guard let first = drafts[i].step.intersections.first, let arriving = first.arrivingRoad,
      let leaving = first.leavingRoad
    else { return false }
    let into = Geo.reverse(Double(first.bearings[arriving]))
    let path = Geo.angleBetween(into, Double(first.bearings[leaving]))
    guard path >= 125 && path <= 235 else { return false }
    var straightest = 360.0
    var straightestDelta = 360.0
    for index in first.bearings.indices where index != arriving && index != leaving && first.entry[index] {
      let turn = Geo.angleBetween(into, Double(first.bearings[index]))
      let delta = Guidance.angularDeviation(turn, 180)
      if delta < straightestDelta {
        straightestDelta = delta
        straightest = turn
      }
    }
    guard Guidance.angularDeviation(path, straightest) > 10 else { return true }
    return Guidance.angularDeviation(path, 180) <= Guidance.angularDeviation(straightest, 180)
  }
}
