import FleetGeometry

/// Turn-by-turn steps for a driven leg, by the rules of OSRM's guidance in outline: a turn is
/// announced unless it is the obvious way on and the road keeps its name; forks, ends of roads,
/// ramps and roundabouts get their own maneuvers.
///
/// The junction views are the ones turn costs are computed from (`JunctionGeometry`), so a turn
/// has the same angle in the steps as in the route's duration.
struct Guidance {
  let network: RoadNetwork
  let junctions: JunctionGeometry
  let turns: TurnGraph

  /// OSRM's angle bands (`guidance/constants.hpp`): turns this close to straight on are narrow,
  /// within a group of each other, or indistinguishable.
  static let narrowTurnAngle = 40.0
  static let groupAngle = 60.0
  static let fuzzyAngleDifference = 25.0
  /// How much more another road must bend than the route's for the route to be the obvious one.
  static let distinctionRatio = 2.0
  /// Depart and arrive say which side the asked point is on only when it is this far from the road.
  static let sideDistance = 5.0...300.0

  /// What the route does at one junction it passes between two spans.
  struct JunctionPass {
    var intersection: RouteStep.Intersection
    /// Whether a driver sees an intersection here (three roads or more), not a mere joint.
    var isIntersection: Bool
    var announcement: (kind: RouteStep.Kind, modifier: RouteStep.Modifier)?
    /// The route's OSRM turn angle here.
    var angle: Double
    /// Roads other than the route's own that could be driven onto from the road arrived by.
    var otherExits: Int
  }

  func steps(of leg: RouteLeg, from origin: LatLng, to destination: LatLng) -> [RouteStep] {
    let points = leg.geometry
    let spans = leg.spans
    guard let firstSpan = spans.first, let lastSpan = spans.last, points.count >= 2 else { return [] }

    // Where steps begin (span index) and what they announce.
    // Roundabout steps also keep the span they leave the roundabout by, which names them.
    var starts: [(span: Int, kind: RouteStep.Kind, modifier: RouteStep.Modifier?, exit: Int?, exitSpan: Int?)] = [
      (0, .depart, sideModifier(asked: origin, snapped: points[0], road: points[1], arriving: false), nil, nil)
    ]
    var passes: [Int: JunctionPass] = [:]
    // The roundabout being driven round: its entry step, exits passed, and the bearing entered at.
    var roundabout: (step: Int, exits: Int, entryBearing: Double)?
    for k in 0..<(spans.count - 1) {
      guard var pass = pass(from: spans[k], to: spans[k + 1], leg: leg) else { continue }
      let inEdge = network.edges[Int(spans[k].edge)]
      let outEdge = network.edges[Int(spans[k + 1].edge)]
      let point = spans[k + 1].firstPoint
      let before = Geo.bearing(fixed(points[max(point - 1, 0)]), fixed(points[point]))
      switch (inEdge.isRoundabout, outEdge.isRoundabout) {
      case (false, true):
        let kind = roundaboutKind(entering: TurnGraph.directed(Int(spans[k + 1].edge), reversed: spans[k + 1].reversed))
        starts.append((k + 1, kind, RouteStep.Modifier(turnAngle: pass.angle), nil, nil))
        roundabout = (starts.count - 1, 0, before)
        pass.announcement = nil
      case (true, true):
        if pass.otherExits > 0 { roundabout?.exits += 1 }
        pass.announcement = nil
      case (true, false):
        var exitKind: RouteStep.Kind? = inEdge.flags.contains(.circular) ? .exitRotary : .exitRoundabout
        if let entered = roundabout {
          starts[entered.step].exit = entered.exits + 1
          starts[entered.step].exitSpan = k + 1
          switch starts[entered.step].kind {
          case .rotary: exitKind = .exitRotary
          case .roundaboutTurn:
            // Said as one turn: from the way in to the way out, with no step for leaving.
            let after = Geo.bearing(fixed(points[point]), fixed(points[min(point + 1, points.count - 1)]))
            starts[entered.step].modifier = RouteStep.Modifier(
              turnAngle: Geo.angleBetween(entered.entryBearing, after))
            exitKind = nil
          default: exitKind = .exitRoundabout
          }
        }
        roundabout = nil
        if let exitKind { starts.append((k + 1, exitKind, RouteStep.Modifier(turnAngle: pass.angle), nil, nil)) }
        pass.announcement = nil
      case (false, false):
        if let announcement = pass.announcement {
          starts.append((k + 1, announcement.kind, announcement.modifier, nil, nil))
        }
      }
      passes[k + 1] = pass
    }

    var steps: [RouteStep] = []
    for (n, start) in starts.enumerated() {
      let endSpan = n + 1 < starts.count ? starts[n + 1].span : spans.count
      let stepSpans = spans[start.span..<endSpan]
      let first = stepSpans.first!.firstPoint
      let last = stepSpans.last!.lastPoint
      // A roundabout step is named after the road it leaves the roundabout by.
      var named = network.edges[Int(stepSpans.first!.edge)]
      var rotaryName = ""
      if [.roundabout, .rotary, .roundaboutTurn].contains(start.kind) {
        rotaryName = start.kind == .rotary ? network.names[Int(named.nameIndex)] : ""
        if let exitSpan = start.exitSpan { named = network.edges[Int(spans[exitSpan].edge)] }
      }
      var intersections: [RouteStep.Intersection] = []
      if start.span == 0 {
        intersections.append(departure(points: points, span: firstSpan))
      }
      for k in start.span..<endSpan {
        // Junctions of three roads or more, and joints where the road changes (OSRM keeps
        // those nodes in its compressed graph and lists them as two-road intersections).
        guard let pass = passes[k],
          pass.isIntersection || k == start.span
            || Self.requiresAnnouncement(
              from: network.edges[Int(spans[k - 1].edge)], to: network.edges[Int(spans[k].edge)])
        else { continue }
        intersections.append(pass.intersection)
      }
      let location = points[first]
      steps.append(
        RouteStep(
          maneuver: RouteStep.Maneuver(
            location: location,
            bearingBefore: first == 0 ? 0 : Self.wholeDegrees(Geo.bearing(fixed(points[first - 1]), fixed(location))),
            bearingAfter: Self.wholeDegrees(
              Geo.bearing(fixed(location), fixed(points[min(first + 1, points.count - 1)]))),
            kind: start.kind, modifier: start.modifier, exit: start.exit),
          name: network.names[Int(named.nameIndex)], ref: network.names[Int(named.refIndex)],
          destinations: network.names[Int(named.destinationsIndex)], exits: network.names[Int(named.exitsIndex)],
          rotaryName: rotaryName, isFerry: named.isFerry, drivingSide: named.drivingSide,
          geometry: Array(points[first...max(last, first)]),
          distance: stepSpans.reduce(0) { $0 + $1.distance }, duration: stepSpans.reduce(0) { $0 + $1.duration },
          weight: stepSpans.reduce(0) { $0 + $1.weight }, intersections: intersections))
    }
    steps = Self.withoutShortNameChanges(Self.collapsed(steps))
    // A road only just turned onto does not end: that is a turn, or a continue on the same road
    // (OSRM's two-intersection minimum, post_processing.cpp).
    for i in steps.indices.dropFirst()
    where steps[i].maneuver.kind == .endOfRoad && steps[i - 1].intersections.count < 2 {
      let sameName =
        !(steps[i].name.isEmpty && steps[i].ref.isEmpty)
        && !Self.requiresNameAnnounced(
          from: (steps[i - 1].name, steps[i - 1].ref), to: (steps[i].name, steps[i].ref))
      steps[i].maneuver.kind = sameName ? .continue : .turn
    }
    // Arrival: a step of no length at the end, its one road the way the route came in.
    let end = points[points.count - 1]
    let arrivingBearing = Geo.bearing(fixed(points[points.count - 2]), fixed(end))
    let lastEdge = network.edges[Int(lastSpan.edge)]
    steps.append(
      RouteStep(
        maneuver: RouteStep.Maneuver(
          location: end, bearingBefore: Self.wholeDegrees(arrivingBearing), bearingAfter: 0, kind: .arrive,
          modifier: sideModifier(asked: destination, snapped: end, road: points[points.count - 2], arriving: true),
          exit: nil),
        name: network.names[Int(lastEdge.nameIndex)], ref: network.names[Int(lastEdge.refIndex)],
        destinations: "", exits: "", rotaryName: "", isFerry: lastEdge.isFerry, drivingSide: lastEdge.drivingSide,
        geometry: [end, end], distance: 0, duration: 0, weight: 0,
        intersections: [
          RouteStep.Intersection(
            location: end, bearings: [Self.wholeDegrees(Geo.reverse(arrivingBearing))], entry: [true], arrivingRoad: 0,
            leavingRoad: nil, classes: [])
        ]))
    return steps
  }

  /// Steps this short, with no intersection along them, are one maneuver with the next in the
  /// cases OSRM collapses (collapse_scenario_detection.cpp): a name change or a straight turn
  /// just before a maneuver, and two turns that together turn back onto the road they left.
  static let collapseDistance = 30.0

  static func collapsed(_ steps: [RouteStep]) -> [RouteStep] {
    let followers: Set<RouteStep.Kind> = [.newName, .turn, .continue, .fork, .endOfRoad, .notification]
    var result: [RouteStep] = []
    for step in steps {
      // Undisturbed: no junction of three roads or more along it (OSRM's
      // `noIntermediaryIntersections`).
      guard var last = result.last, last.distance <= collapseDistance,
        last.intersections.dropFirst().allSatisfy({ $0.bearings.count == 2 }),
        followers.contains(step.maneuver.kind)
      else {
        result.append(step)
        continue
      }
      let kind = last.maneuver.kind
      let isNameChange =
        kind == .newName || kind == .notification
        || ((kind == .turn || kind == .continue) && last.maneuver.modifier == .straight)
      let turnsBack =
        [.turn, .continue, .endOfRoad].contains(kind)
        && Self.bearingsAreReversed(Double(last.maneuver.bearingBefore), Double(step.maneuver.bearingAfter))
        && result.count >= 2
        && !Self.requiresNameAnnounced(
          from: (result[result.count - 2].name, result[result.count - 2].ref), to: (step.name, step.ref))
      if isNameChange && step.maneuver.modifier != .uturn {
        last.maneuver.kind = step.maneuver.kind
        if last.maneuver.kind != .fork {
          last.maneuver.modifier = RouteStep.Modifier(
            turnAngle: Geo.angleBetween(Double(last.maneuver.bearingBefore), Double(step.maneuver.bearingAfter)))
        }
      } else if turnsBack {
        last.maneuver.kind = .continue
        last.maneuver.modifier = .uturn
      } else {
        result.append(step)
        continue
      }
      last.name = step.name
      last.ref = step.ref
      last.destinations = step.destinations
      last.exits = step.exits
      last.absorb(step)
      result[result.count - 1] = last
    }
    return result
  }

  /// OSRM's `bearingsAreReversed`: leaving nearly opposite the way one came.
  static func bearingsAreReversed(_ bearingIn: Double, _ bearingOut: Double) -> Bool {
    let leftTurnAngle = bearingOut <= bearingIn ? bearingIn - bearingOut : bearingIn + 360 - bearingOut
    return abs(leftTurnAngle - 180) <= 35
  }

  /// A new name is not said when the road had that name already, or when it lasts less than
  /// this (OSRM's `suppressShortNameSegments`): its metres join the step before.
  static let nameSegmentCutoff = 105.0

  static func withoutShortNameChanges(_ steps: [RouteStep]) -> [RouteStep] {
    var result: [RouteStep] = []
    for step in steps {
      guard step.maneuver.kind == .newName, var previous = result.last, previous.isFerry == step.isFerry else {
        result.append(step)
        continue
      }
      let sameName =
        !(previous.name.isEmpty && previous.ref.isEmpty) && previous.name == step.name && previous.ref == step.ref
      guard sameName || step.distance < nameSegmentCutoff else {
        result.append(step)
        continue
      }
      previous.absorb(step)
      result[result.count - 1] = previous
    }
    return result
  }

  // MARK: - Roundabouts

  /// OSRM's radius bounds: a named roundabout larger than this is a rotary; an unnamed one
  /// smaller, with few ways off it, is said as a turn.
  static let rotaryRadius = 15.0
  static let roundaboutTurnRadius = 15.0

  /// What kind of roundabout the route enters by `directed`, as OSRM tells them apart: by the
  /// ring's length, its name, and the ways that join it.
  func roundaboutKind(entering directed: Int32) -> RouteStep.Kind {
    var current = directed
    var length = 0.0
    var exits = Set<Int32>()
    // The bearings of the ways off the ring, and whether every exit is one simple road.
    var exitBearings: [Double] = []
    var simpleExits = true
    var ringNames = Set<Int32>()
    var joiningNames = Set<Int32>()
    var circular = false
    let first = network.edges[TurnGraph.edge(of: directed)]
    let start = TurnGraph.isReversed(directed) ? first.to : first.from
    for _ in 0..<10_000 {
      let edge = network.edges[TurnGraph.edge(of: current)]
      length += edge.length
      circular = circular || edge.flags.contains(.circular)
      if edge.nameIndex != 0 { ringNames.insert(edge.nameIndex) }
      let junction = TurnGraph.isReversed(current) ? edge.from : edge.to
      let roads = junctions.roads[Int(junction)]
      if roads.count > 2 { exits.insert(junction) }
      if roads.count > 3 { simpleExits = false }
      for road in roads where !network.edges[road.edge].isRoundabout {
        joiningNames.insert(network.edges[road.edge].nameIndex)
      }
      // OSRM takes one way off the ring per exit: the first it finds.
      if roads.count > 2, let off = roads.first(where: { !network.edges[$0.edge].isRoundabout }) {
        exitBearings.append(off.perceivedBearing)
      }
      if junction == start { break }
      guard
        let next = roads.first(where: {
          $0.leaving != nil && $0.edge != TurnGraph.edge(of: current) && network.edges[$0.edge].isRoundabout
        })?.leaving
      else { return circular ? .rotary : .roundabout }
      current = next
    }
    let radius = length / (2 * .pi)
    if exits.count == 1 && !circular { return .roundaboutTurn }
    if ringNames.count == 1,
      circular || (!joiningNames.contains(ringNames.first!) && radius > Self.rotaryRadius)
    {
      return .rotary
    }
    // Looks like an intersection: at most four simple ways off it, no two within a narrow
    // angle of each other (OSRM's `qualifiesAsRoundaboutIntersection`, which compares the last
    // bearing with the first without going round).
    let sorted = exitBearings.sorted()
    let apart = sorted.indices.allSatisfy { i in
      abs(sorted[(i + 1) % sorted.count] - sorted[i]) > Self.narrowTurnAngle
    }
    if !circular && exits.count <= 4 && simpleExits && apart && radius < Self.roundaboutTurnRadius {
      return .roundaboutTurn
    }
    return circular ? .rotary : .roundabout
  }

  // MARK: - Junctions

  /// The junction between two consecutive spans as the driver meets it, and what to announce.
  func pass(from inSpan: RouteSpan, to outSpan: RouteSpan, leg: RouteLeg) -> JunctionPass? {
    let arriving = TurnGraph.directed(Int(inSpan.edge), reversed: inSpan.reversed)
    let leaving = TurnGraph.directed(Int(outSpan.edge), reversed: outSpan.reversed)
    let inEdge = network.edges[Int(inSpan.edge)]
    let outEdge = network.edges[Int(outSpan.edge)]
    let junction = inSpan.reversed ? inEdge.from : inEdge.to
    let roads = junctions.roads[Int(junction)]
    guard let a = roads.firstIndex(where: { $0.arriving == arriving }),
      let b = roads.firstIndex(where: { $0.leaving == leaving })
    else { return nil }
    var targets = Set<Int32>()
    for arc in turns.arcs(from: arriving) { targets.insert(turns.arcTarget[arc]) }
    let allowed = roads.map { road in road.leaving.map(targets.contains) ?? false }
    let view = junctions.turns(from: a, at: Int(junction), allowed: allowed)
    let angle = view.first(where: { $0.road == b })?.angle ?? 180
    let isUTurn = a == b || (view.first(where: { $0.road == b })?.isUTurn ?? false)
    let options = view.filter { allowed[$0.road] && !$0.isUTurn }

    // The intersection as OSRM lists it: the roads a driver sees (a dual carriageway's two
    // halves as one), by bearing.
    let shown = roads.indices.filter { !roads[$0].isMergedAway || $0 == a || $0 == b }
      .map { (road: $0, bearing: Self.wholeDegrees(roads[$0].perceivedBearing)) }
      .sorted { ($0.bearing, $0.road) < ($1.bearing, $1.road) }
    let location = leg.geometry[outSpan.firstPoint]
    let classes = outEdge.cost(reversed: outSpan.reversed)?.classes.names ?? []
    let intersection = RouteStep.Intersection(
      location: location, bearings: shown.map(\.bearing), entry: shown.map { allowed[$0.road] || $0.road == b },
      arrivingRoad: shown.firstIndex { $0.road == a }, leavingRoad: shown.firstIndex { $0.road == b },
      classes: classes)

    var pass = JunctionPass(
      intersection: intersection, isIntersection: shown.count >= 3, announcement: nil,
      angle: isUTurn ? 0 : angle, otherExits: options.filter { $0.road != b }.count)
    pass.announcement = announcement(
      from: inEdge, to: outEdge, angle: pass.angle, isUTurn: isUTurn, route: b, options: options, view: view,
      roads: roads,
      arrivedBy: a, allowed: allowed, junction: junction, leavingReversed: outSpan.reversed)
    return pass
  }

  /// What to say at a junction off roundabouts, or nil when the way on goes without saying.
  func announcement(
    from inEdge: RoadEdge, to outEdge: RoadEdge, angle: Double, isUTurn: Bool, route: Int,
    options: [JunctionGeometry.Turn], view: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road], arrivedBy: Int,
    allowed: [Bool], junction: Int32, leavingReversed: Bool
  ) -> (kind: RouteStep.Kind, modifier: RouteStep.Modifier)? {
    let modifier = RouteStep.Modifier(turnAngle: angle)
    let renamed = Self.requiresNameAnnounced(
      from: (network.names[Int(inEdge.nameIndex)], network.names[Int(inEdge.refIndex)]),
      to: (network.names[Int(outEdge.nameIndex)], network.names[Int(outEdge.refIndex)]))
    if isUTurn { return (.continue, .uturn) }
    if inEdge.isFerry != outEdge.isFerry { return (.notification, modifier) }
    if let ramp = Self.ramp(from: inEdge.roadClass, to: outEdge.roadClass), options.count > 1 || ramp != .onRamp {
      return (ramp, modifier)
    }
    let obvious = ObviousTurn(network: network, view: view, roads: roads, allowed: allowed, arrivedBy: arrivedBy).find()
    if let obvious, view[obvious].road == route {
      guard renamed else { return nil }
      // Onto a road that goes on both ways from here is a turn, even the obvious one (OSRM's
      // `isThroughStreet`: the same name and class, lanes included, leaving nearly opposite).
      let routeAngle = view.first { $0.road == route }?.angle ?? angle
      let isThroughStreet =
        !(outEdge.nameIndex == 0 && outEdge.refIndex == 0)
        && view.contains { other in
          let otherEdge = network.edges[roads[other.road].edge]
          return other.road != route && other.road != arrivedBy
            && otherEdge.nameIndex == outEdge.nameIndex && otherEdge.refIndex == outEdge.refIndex
            && otherEdge.roadClass == outEdge.roadClass && otherEdge.lanes == outEdge.lanes
            && Self.angularDeviation(other.angle, routeAngle) > 180 - Self.fuzzyAngleDifference
        }
      guard isThroughStreet else { return (.newName, modifier) }
      // Onto a through street nearly straight on, and on it for a while, is said as straight
      // (OSRM's `getInstructionForObvious`: within a narrow angle, and the road's next junction
      // more than twice the collapsing distance away, in a straight line).
      let far = leavingReversed ? outEdge.from : outEdge.to
      let reach = Geo.distance(network.coordinate(ofJunction: junction), network.coordinate(ofJunction: far))
      let nearlyStraight = Self.deviation(routeAngle) < Self.narrowTurnAngle && reach > 2 * Self.collapseDistance
      return (.turn, nearlyStraight ? .straight : modifier)
    }
    let named = { (edge: RoadEdge) in edge.nameIndex != 0 || edge.refIndex != 0 }
    // Continuing is staying on a named road; between unnamed roads every turn is a turn.
    let basicKind: RouteStep.Kind = !renamed && named(inEdge) && named(outEdge) ? .continue : .turn
    if let obvious {
      // Another way on is the obvious one: this is a plain turn off it, never a fork or an end
      // of road (OSRM's `handleThreeWayTurn` and `handleComplexTurn`). Both nearly straight:
      // the route is the slight one on its side.
      var direction = modifier
      if direction == .straight, view.count == 3, RouteStep.Modifier(turnAngle: view[obvious].angle) == .straight {
        direction = obvious == 1 ? .slightLeft : .slightRight
      }
      return (basicKind, direction)
    }
    if let forkModifier = fork(route: route, view: view, options: options, roads: roads, arrivedBy: arrivedBy) {
      // Of two ways on, one all but straight and the same road, the other bending away: the
      // straight one goes without saying and the other is a plain turn or continue (OSRM's
      // `assignFork`).
      let enterable = Set(options.map(\.road))
      let members = view.filter { $0.road != arrivedBy && enterable.contains($0.road) }
      if members.count == 2, let straight = members.first(where: { Self.deviation($0.angle) < Self.noTurnDeviation }),
        let bending = members.first(where: { $0.road != straight.road }),
        Self.deviation(bending.angle) > Self.fuzzyAngleDifference,
        !Self.requiresAnnouncement(from: inEdge, to: network.edges[roads[straight.road].edge])
      {
        guard bending.road == route else { return nil }
        let keepsName =
          !(inEdge.nameIndex == 0 && inEdge.refIndex == 0) && !(outEdge.nameIndex == 0 && outEdge.refIndex == 0)
          && !renamed
        return (keepsName ? .continue : .turn, bending.angle > 180 ? .slightLeft : .slightRight)
      }
      return (.fork, forkModifier)
    }
    // The end of a road: a T, the two ways on near right angles to either side (OSRM's
    // `isEndOfRoad`, three-way junctions only).
    let ways = view.filter { $0.road != arrivedBy }
    if ways.count == 2, abs(ways[0].angle - 90) < Self.narrowTurnAngle, abs(ways[1].angle - 270) < Self.narrowTurnAngle,
      ways[1].angle - ways[0].angle > 2 * Self.narrowTurnAngle
    {
      return (.endOfRoad, modifier)
    }
    return (basicKind, modifier)
  }

  /// OSRM's `MAXIMAL_ALLOWED_NO_TURN_DEVIATION`: this close to straight on is no turn at all.
  static let noTurnDeviation = 3.0

  /// Whether going from one road onto another is more than driving on (OSRM's
  /// `requiresAnnouncement`: another class, a one-way change, or names that do not combine).
  static func requiresAnnouncement(from a: RoadEdge, to b: RoadEdge) -> Bool {
    a.roadClass != b.roadClass || a.isRoundabout != b.isRoundabout || a.nameIndex != b.nameIndex
      || a.refIndex != b.refIndex
      || ((a.forward == nil) != (a.backward == nil)) != ((b.forward == nil) != (b.backward == nil))
  }

  /// The route's side at a fork, as OSRM finds forks: two or three ways on near straight ahead,
  /// each within a narrow angle of the next, set apart from every other road at the junction,
  /// all enterable and all slip roads or none.
  func fork(
    route: Int, view: [JunctionGeometry.Turn], options: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road],
    arrivedBy: Int
  ) -> RouteStep.Modifier? {
    guard view.count >= 3,
      let straightmost = view.indices.min(by: { Self.deviation(view[$0].angle) < Self.deviation(view[$1].angle) }),
      Self.deviation(view[straightmost].angle) <= Self.narrowTurnAngle
    else { return nil }
    let isNeighbour = { (a: Int, b: Int) in
      abs(view[a].angle - view[b].angle) < Self.narrowTurnAngle && Self.deviation(view[b].angle) < Self.groupAngle
    }
    var right = straightmost
    while right - 1 >= 1 && isNeighbour(right, right - 1) { right -= 1 }
    var left = straightmost
    while left + 1 < view.count && isNeighbour(left, left + 1) { left += 1 }
    guard left > right, left - right < 3, right >= 1 else { return nil }
    let beyondLeft = left + 1 < view.count ? view[left + 1].angle : 360
    guard beyondLeft - view[left].angle >= Self.groupAngle, view[right].angle - view[right - 1].angle >= Self.groupAngle
    else { return nil }
    let enterable = Set(options.map(\.road))
    let members = view[right...left]
    guard members.allSatisfy({ enterable.contains($0.road) }),
      let position = members.firstIndex(where: { $0.road == route })
    else { return nil }
    // Forks are never obvious: not one way much straighter than its neighbour, none of a much
    // more important class (OSRM's `hasObvious`, `isCompatibleByRoadClass`).
    let inClass = network.edges[roads[arrivedBy].edge].roadClass
    for (a, b) in zip(members, members.dropFirst()) {
      let (da, db) = (Self.deviation(a.angle), Self.deviation(b.angle))
      for (x, y) in [(da, db), (db, da)] where y / max(x, 1e-9) > 1.4 && abs(y - x) > Self.fuzzyAngleDifference {
        return nil
      }
    }
    for a in members {
      for b in members where a.road != b.road {
        let classes = (network.edges[roads[a.road].edge].roadClass, network.edges[roads[b.road].edge].roadClass)
        if Self.isObviousByRoadClass(from: inClass, route: classes.0, over: classes.1) { return nil }
      }
    }
    let links: Set<RoadClass> = [.motorwayLink, .trunkLink, .primaryLink, .secondaryLink, .tertiaryLink]
    guard Set(members.map { links.contains(network.edges[roads[$0.road].edge].roadClass) }).count == 1 else {
      return nil
    }
    return position == right ? .slightRight : position == left ? .slightLeft : .straight
  }

  static func deviation(_ angle: Double) -> Double { abs(180 - angle) }

  static func angularDeviation(_ a: Double, _ b: Double) -> Double {
    let difference = abs(a - b).truncatingRemainder(dividingBy: 360)
    return min(difference, 360 - difference)
  }

  /// OSRM's road priorities (`RoadPriorityClass`): lower is more important.
  static func priority(_ roadClass: RoadClass) -> Double {
    switch roadClass {
    case .motorway: 0
    case .motorwayLink: 1
    case .trunk: 2
    case .trunkLink: 3
    case .primary: 4
    case .primaryLink: 5
    case .secondary: 6
    case .secondaryLink: 7
    case .tertiary: 8
    case .tertiaryLink: 9
    case .residential: 10
    case .livingStreet: 11
    case .service: 12
    case .unclassified: 15
    case .track: 16
    case .footPath: 18
    case .other: 31
    }
  }

  /// OSRM's `obviousByRoadClass`: staying on a road's class when the other way is of a much
  /// lower priority, or leaving minor roads aside on a major one.
  static func isObviousByRoadClass(from inClass: RoadClass, route: RoadClass, over other: RoadClass) -> Bool {
    let higherPriority = 1.75 * priority(route) < priority(other)
    return (higherPriority && inClass == route)
      || (!route.isLowPriority && !inClass.isLowPriority && other.isLowPriority)
  }

  /// Onto a slip road from a motorway-like road, onto one from elsewhere, or from one onto a
  /// motorway-like road.
  static func ramp(from: RoadClass, to: RoadClass) -> RouteStep.Kind? {
    let motorways: Set<RoadClass> = [.motorway, .trunk]
    let links: Set<RoadClass> = [.motorwayLink, .trunkLink]
    if motorways.contains(from) && links.contains(to) { return .offRamp }
    if links.contains(from) && motorways.contains(to) { return .merge }
    if !links.contains(from) && !motorways.contains(from) && links.contains(to) { return .onRamp }
    return nil
  }

  /// OSRM's rule for when a change of road must be said (`requiresNameAnnounced`): a name that
  /// only gains or loses a part, or a reference that is kept, is the same road to a driver.
  static func requiresNameAnnounced(from: (name: String, ref: String), to: (name: String, ref: String)) -> Bool {
    if from.name.isEmpty && from.ref.isEmpty && !(to.name.isEmpty && to.ref.isEmpty) { return true }
    let namesAreEmpty = from.name.isEmpty && to.name.isEmpty
    let nameIsContained = from.name.hasPrefix(to.name) || to.name.hasPrefix(from.name)
    let namesAreEqual = from.name == to.name || nameIsContained
    let nameIsRemoved = !from.name.isEmpty && to.name.isEmpty
    let refsAreEmpty = from.ref.isEmpty && to.ref.isEmpty
    let refIsContained =
      from.ref.isEmpty || to.ref.isEmpty || from.ref.contains(to.ref) || to.ref.contains(from.ref)
    let refIsRemoved = !from.ref.isEmpty && to.ref.isEmpty
    let obviousChange =
      (namesAreEmpty && refsAreEmpty) || (namesAreEqual && refIsContained) || (namesAreEqual && refsAreEmpty)
      || (refIsContained && nameIsRemoved) || (namesAreEmpty && refIsRemoved)
    // "(Ref)" becoming "Name" and the reverse are said.
    let swapsNameForRef =
      (from.name.isEmpty && !from.ref.isEmpty && !to.name.isEmpty && to.ref.isEmpty)
      || (!from.name.isEmpty && from.ref.isEmpty && to.name.isEmpty && !to.ref.isEmpty)
    return !obviousChange || swapsNameForRef
  }

  // MARK: - Ends

  func departure(points: [LatLng], span: RouteSpan) -> RouteStep.Intersection {
    let bearing = Self.wholeDegrees(Geo.bearing(fixed(points[0]), fixed(points[1])))
    let edge = network.edges[Int(span.edge)]
    return RouteStep.Intersection(
      location: points[0], bearings: [bearing], entry: [true], arrivingRoad: nil, leavingRoad: 0,
      classes: edge.cost(reversed: span.reversed)?.classes.names ?? [])
  }

  /// Which side of the road the asked point is on, when it is a few metres off it: by the angle
  /// at the snapped point between the point and the road's next point (departing) or between
  /// the road's previous point and the point (arriving).
  func sideModifier(asked: LatLng, snapped: LatLng, road: LatLng, arriving: Bool) -> RouteStep.Modifier? {
    let (a, s, r) = (fixed(asked), fixed(snapped), fixed(road))
    guard Self.sideDistance.contains(Geo.distance(a, s)) else { return nil }
    return RouteStep.Modifier(sideAngle: arriving ? Geo.turnAngleOSRM(r, s, a) : Geo.turnAngleOSRM(a, s, r))
  }

  func fixed(_ point: LatLng) -> FixedCoordinate {
    FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
  }

  static func wholeDegrees(_ bearing: Double) -> Int {
    let degrees = Int(bearing.rounded())
    return degrees >= 360 ? degrees - 360 : degrees
  }
}
