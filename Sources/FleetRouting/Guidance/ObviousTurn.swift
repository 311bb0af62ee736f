/// OSRM's obvious-turn discovery (`IntersectionHandler::findObviousTurn` with
/// `IsDistinctNarrowTurn` and `IsDistinctWideTurn`, guidance/intersection_handler.hpp): which
/// road at a junction a driver takes without being told. First the road that keeps the name
/// (of the same class or higher), when it is distinct from every other; else the straightest
/// road of the same class or higher; else, with care, the straightest road at all. Lane counts
/// weigh as in OSRM: each road's `lanes` (its number of lanes, or of its turn lanes if more).
struct ObviousTurn {
  let network: RoadNetwork
  /// The junction as a driver meets it: OSRM's intersection view (the road arrived by first).
  let view: [JunctionGeometry.Turn]
  let roads: [JunctionGeometry.Road]
  let allowed: [Bool]
  let arrivedBy: Int

  func edge(_ i: Int) -> RoadEdge { network.edges[roads[view[i].road].edge] }
  func label(_ edge: RoadEdge) -> RoadLabel { network.label(of: edge) }
  func entry(_ i: Int) -> Bool { allowed[view[i].road] }
  func deviation(_ i: Int) -> Double { Guidance.deviation(view[i].angle) }
  func renamed(_ a: RoadLabel, _ b: RoadLabel) -> Bool { RoadNames.requiresNameAnnounced(from: a, to: b) }

  var inEdge: RoadEdge { network.edges[roads[arrivedBy].edge] }

  /// Whether a road direction is only for starting or ending a trip there.
  func restricted(_ road: JunctionGeometry.Road, leaving: Bool) -> Bool {
    let directed = leaving ? road.leaving : road.arriving
    guard let directed else { return false }
    return network.edges[road.edge].cost(reversed: TurnGraph.isReversed(directed))?.restricted ?? false
  }

  /// The view index of the obvious road, nil when there is none.
  func find() -> Int? {
    guard view.count > 1 else { return nil }
    if view.count == 2 { return 1 }
    let via = inEdge
    let viaNames = label(via)
    let viaClass = via.roadClass

    // The road that keeps the name, of the same class or higher.
    let keepsName = closest { i in
      guard entry(i) else { return false }
      if viaNames.isEmpty && !viaClass.isLowPriority { return false }
      let road = edge(i)
      let roadNames = label(road)
      if roadNames.isEmpty && !road.roadClass.isLowPriority { return false }
      if viaNames.isEmpty != roadNames.isEmpty { return false }
      if Self.strictlyLess(road.roadClass, viaClass) { return false }
      if Self.isLink(road.roadClass, to: viaClass) { return false }
      return !renamed(viaNames, roadNames)
    }
    if let keepsName, isDistinct(keepsName) { return valid(keepsName) }

    // The straightest road of the same class or higher.
    let straightmostOfClass = closest { i in
      guard entry(i) else { return false }
      let road = edge(i)
      return !Self.strictlyLess(road.roadClass, viaClass) && !Self.isLink(road.roadClass, to: viaClass)
    }
    if let straightmostOfClass, isDistinct(straightmostOfClass) { return valid(straightmostOfClass) }

    // Any straightest road, if it is somewhat narrow.
    guard let straightmost = closest({ entry($0) }) else { return nil }
    let nonSharp = view.indices.filter { deviation($0) <= 90 }.count
    let straightIsOnlyNonSharp = deviation(straightmost) <= 90 && nonSharp == 1
    if straightmost != straightmostOfClass,
      deviation(straightmost) <= Guidance.groupAngle || straightIsOnlyNonSharp,
      !edge(straightmost).roadClass.isLowPriority, isDistinct(straightmost)
    {
      return valid(straightmost)
    }
    // Motorways: a nearly straight only way on is obvious.
    let enterable = view.indices.filter(entry).count
    if edge(straightmost).roadClass.isMotorway, deviation(straightmost) <= Guidance.groupAngle,
      enterable == 1
    {
      return valid(straightmost)
    }
    // A road splitting up, every part of it with the same name (not an end of road).
    let allSameName = view.indices.allSatisfy { i in
      let roadNames = label(edge(i))
      return !roadNames.isEmpty && roadNames == viaNames
    }
    if view.count == 3, allSameName, enterable == 1,
      Guidance.angularDeviation(view[1].angle, 90) > Guidance.narrowTurnAngle
        || Guidance.angularDeviation(view[2].angle, 270) > Guidance.narrowTurnAngle
    {
      return valid(straightmost)
    }
    return nil
  }

  /// The road nearest straight on among those `include` takes.
  func closest(_ include: (Int) -> Bool) -> Int? {
    view.indices.filter(include).min { deviation($0) < deviation($1) }
  }

  /// Not a U-turn, and no change into or out of a roundabout.
  func valid(_ i: Int) -> Int? {
    guard i != 0, view[i].road != arrivedBy, edge(i).isRoundabout == inEdge.isRoundabout else { return nil }
    return i
  }

  func isDistinct(_ candidate: Int) -> Bool {
    deviation(candidate) < Guidance.groupAngle ? isDistinctNarrow(candidate) : isDistinctWide(candidate)
  }

  func isDistinctNarrow(_ candidate: Int) -> Bool {
    let via = inEdge
    let viaNames = label(via)
    let cand = edge(candidate)
    let candNames = label(cand)
    let candDeviation = deviation(candidate)
    let noNameChangeToCandidate = !renamed(viaNames, candNames)
    let viaRestricted = restricted(roads[arrivedBy], leaving: false)
    let candRestricted = restricted(roads[view[candidate].road], leaving: true)
    let viaPriority = Guidance.priority(via.roadClass)
    let candPriority = Guidance.priority(cand.roadClass)

    let isSimilar = { (i: Int) -> Bool in
      if i == candidate || view[i].road == arrivedBy { return false }
      if candDeviation < Guidance.narrowTurnAngle && !entry(i) { return false }
      let compare = edge(i)
      let compareNames = label(compare)
      let compareDeviation = deviation(i)
      let distinct =
        compareDeviation > Guidance.distinctionRatio * candDeviation
        && abs(compareDeviation - candDeviation) > Guidance.fuzzyAngleDifference / 2
      let slightlyDistinct = compareDeviation > 0.7 * Guidance.distinctionRatio * candDeviation
      // The road arrived by splitting lane for lane into the candidate and this one.
      let isLaneFork =
        compare.lanes > 0 && cand.lanes == compare.lanes && Int(via.lanes) == Int(cand.lanes) + Int(compare.lanes)
        && Guidance.angularDeviation(view[candidate].angle, view[i].angle) < Guidance.groupAngle
      // Restricted side roads.
      if !viaRestricted && !candRestricted && restricted(roads[view[i].road], leaving: true) && distinct {
        return false
      }
      // Roundabout exits bending more than the candidate.
      if via.isRoundabout == cand.isRoundabout && via.isRoundabout != compare.isRoundabout
        && candDeviation < compareDeviation
      {
        return false
      }
      let nameChangesToCompare = renamed(viaNames, compareNames)
      if (noNameChangeToCandidate || nameChangesToCompare) && !isLaneFork && distinct { return false }
      // A road that goes on across the junction is not like the candidate.
      let reverse = Geo.reverse(roads[view[i].road].perceivedBearing)
      let opposing = view.indices.min {
        Guidance.angularDeviation(roads[view[$0].road].perceivedBearing, reverse)
          < Guidance.angularDeviation(roads[view[$1].road].perceivedBearing, reverse)
      }!
      let fourOrMore = view.count >= 4
      let noNameChangeFromOpposing = !renamed(label(edge(opposing)), compareNames)
      let opposingAngle = Guidance.angularDeviation(view[i].angle, view[opposing].angle)
      let opposingIsDistinct = noNameChangeFromOpposing || opposingAngle > 180 - Guidance.narrowTurnAngle
      if fourOrMore && opposingIsDistinct && distinct { return false }
      if fourOrMore && noNameChangeToCandidate && nameChangesToCompare && slightlyDistinct
        && noNameChangeFromOpposing && opposingAngle > 180 - Guidance.fuzzyAngleDifference
      {
        return false
      }
      if !fourOrMore && noNameChangeToCandidate && nameChangesToCompare && distinct && !isLaneFork
        && opposingAngle > 180 - Guidance.groupAngle
      {
        return false
      }
      // From a minor road every distinct road is unlike the candidate.
      if viaPriority > Guidance.priority(.secondary) && distinct { return false }
      // A nearly straight candidate with as many lanes as the road arrived by.
      if cand.lanes > 0 && cand.lanes == via.lanes && candDeviation < Guidance.fuzzyAngleDifference && distinct {
        return false
      }
      let comparePriority = Guidance.priority(compare.roadClass)
      let samePriority = viaPriority == candPriority
      if samePriority && candPriority < comparePriority && noNameChangeToCandidate && slightlyDistinct {
        return false
      }
      if samePriority && candPriority > comparePriority + 4 && noNameChangeToCandidate && slightlyDistinct {
        return false
      }
      if Self.hasLowerClass(compare, from: via, to: cand) { return false }
      if samePriority && Self.group(via.roadClass) < Self.group(compare.roadClass)
        && renamed(candNames, compareNames) && nameChangesToCompare
      {
        return false
      }
      if samePriority && compare.roadClass.isLink { return false }
      return true
    }
    return !view.indices.dropFirst().contains { isSimilar($0) }
  }

  func isDistinctWide(_ candidate: Int) -> Bool {
    let via = inEdge
    let cand = edge(candidate)
    let candDeviation = deviation(candidate)
    let arriving = roads[arrivedBy]
    let isSimilar = { (i: Int) -> Bool in
      if i == candidate || view[i].road == arrivedBy { return false }
      let compare = edge(i)
      let compareDeviation = deviation(i)
      let compareIsStraight = RouteStep.Modifier(turnAngle: view[i].angle) == .straight
      if !compareIsStraight && Self.hasLowerClass(compare, from: via, to: cand) {
        return false
      }
      if compareDeviation > Guidance.distinctionRatio * candDeviation { return false }
      // Where the road arrived by bends near the junction, the roads' first metres decide.
      if Guidance.angularDeviation(arriving.initialBearing, arriving.perceivedBearing) > Guidance.fuzzyAngleDifference {
        let viaInitial = Geo.reverse(arriving.initialBearing)
        let candInitial = roads[view[candidate].road].initialBearing
        let roadInitial = roads[view[i].road].initialBearing
        let candDeviationInitial = Guidance.deviation(Geo.angleBetween(viaInitial, candInitial))
        let roadDeviationInitial = Guidance.deviation(Geo.angleBetween(viaInitial, roadInitial))
        let roadToCandidate = Geo.angleBetween(Geo.reverse(roadInitial), candInitial)
        if RouteStep.Modifier(turnAngle: roadToCandidate) != .straight
          && roadDeviationInitial > Guidance.distinctionRatio * candDeviationInitial
        {
          return false
        }
      }
      return true
    }
    return !view.indices.dropFirst().contains { isSimilar($0) }
  }

  // MARK: - OSRM's road classification (extractor/road_classification.hpp)

  /// Road groups: motorways, trunks, main roads, residential, unclassified, then the rest.
  static func group(_ roadClass: RoadClass) -> Int {
    switch roadClass {
    case .motorway, .motorwayLink: 0
    case .trunk, .trunkLink: 1
    case .primary, .primaryLink, .secondary, .secondaryLink, .tertiary, .tertiaryLink: 2
    case .residential, .livingStreet, .service: 3
    case .unclassified: 4
    case .track: 5
    case .footPath: 6
    case .other: 7
    }
  }

  static func strictlyLess(_ a: RoadClass, _ b: RoadClass) -> Bool {
    if !a.isLowPriority && b.isLowPriority { return false }
    if a.isLowPriority && !b.isLowPriority { return true }
    return group(a) > group(b)
  }

  static func isLink(_ link: RoadClass, to road: RoadClass) -> Bool {
    switch (link, road) {
    case (.motorwayLink, .motorway), (.trunkLink, .trunk), (.primaryLink, .primary), (.secondaryLink, .secondary),
      (.tertiaryLink, .tertiary):
      true
    default: false
    }
  }

  /// OSRM's `roadHasLowerClass`: of a class below both roads with two lanes fewer than the road
  /// arrived by, or a link of the class of both.
  static func hasLowerClass(_ compare: RoadEdge, from: RoadEdge, to: RoadEdge) -> Bool {
    let fewerLanes = compare.lanes > 0 && Int(compare.lanes) + 1 < Int(from.lanes)
    if strictlyLess(compare.roadClass, from.roadClass) && strictlyLess(compare.roadClass, to.roadClass) && fewerLanes {
      return true
    }
    return isLink(compare.roadClass, to: from.roadClass) && isLink(compare.roadClass, to: to.roadClass)
  }
}
