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
    /// Whether OSRM keeps a silent step here when nothing is announced (its `Suppressed`, not
    /// `NoTurn`): at intersections, and at joints where the road's classes change.
    var keepsSilentStep: Bool
    /// The route's OSRM turn angle here.
    var angle: Double
    /// Roads other than the route's own that could be driven onto from the road arrived by.
    var otherExits: Int
    /// The route takes a sliproad here: said as the turn where it ends (OSRM's `Sliproad`).
    var isSliproad = false
    /// The junction, and the road the route leaves it by there.
    var junction = 0
    var leavingRoad = 0
    /// The step's `bearing_before` and `bearing_after` when one begins here.
    var maneuverBearings: (before: Int, after: Int)
  }

  func steps(of leg: RouteLeg, from origin: LatLng, to destination: LatLng) -> [RouteStep] {
    let points = leg.geometry
    let spans = leg.spans
    guard let firstSpan = spans.first, let lastSpan = spans.last, points.count >= 2 else { return [] }

    // Where steps begin (span index), what they announce, and how collapsing treats them.
    // Roundabout steps also keep the span they leave the roundabout by, which names them.
    var starts:
      [(
        span: Int, kind: RouteStep.Kind, modifier: RouteStep.Modifier?, exit: Int?, exitSpan: Int?,
        instruction: StepCollapsing.Instruction
      )] = [
        (
          0, .depart, sideModifier(asked: origin, snapped: points[0], road: points[1], arriving: false), nil, nil,
          .waypoint
        )
      ]
    var passes: [Int: JunctionPass] = [:]
    // The roundabout being driven round: its entry step, exits passed, and the bearing entered at.
    var roundabout: (step: Int, exits: Int, entryBearing: Double)?
    for k in 0..<(spans.count - 1) {
      guard var pass = pass(from: spans[k], to: spans[k + 1], leg: leg) else { continue }
      let inEdge = network.edges[Int(spans[k].edge)]
      let outEdge = network.edges[Int(spans[k + 1].edge)]
      // The bearings OSRM turns by: the junction's listed bearings of the road in and out.
      let listed = pass.intersection
      let bearingIn = listed.arrivingRoad.map { Geo.reverse(Double(listed.bearings[$0])) } ?? 0
      let bearingOut = listed.leavingRoad.map { Double(listed.bearings[$0]) } ?? 0
      // A ring OSRM's roundabout rules do not apply to is driven as any road.
      let ring = inEdge.isRoundabout || outEdge.isRoundabout ? roundaboutKind(at: Int32(pass.junction)) : nil
      switch (inEdge.isRoundabout && ring != nil, outEdge.isRoundabout && ring != nil) {
      case (false, true):
        let kind = ring!
        starts.append((k + 1, kind, RouteStep.Modifier(turnAngle: pass.angle), nil, nil, .announced(kind)))
        roundabout = (starts.count - 1, 0, bearingIn)
        pass.announcement = nil
      case (true, true):
        if pass.otherExits > 0 { roundabout?.exits += 1 }
        pass.announcement = nil
      case (true, false):
        var exitKind: RouteStep.Kind? = ring == .rotary ? .exitRotary : .exitRoundabout
        // Leaving says the exit's number again, as entering does.
        var exit: Int?
        if let entered = roundabout {
          exit = entered.exits + 1
          starts[entered.step].exit = exit
          starts[entered.step].exitSpan = k + 1
          switch starts[entered.step].kind {
          case .rotary: exitKind = .exitRotary
          case .roundaboutTurn:
            // Said as one turn: from the way in to the way out, with no step for leaving.
            starts[entered.step].modifier = RouteStep.Modifier(
              turnAngle: Geo.angleBetween(entered.entryBearing, bearingOut))
            exitKind = nil
          default: exitKind = .exitRoundabout
          }
        }
        roundabout = nil
        if let exitKind {
          starts.append((k + 1, exitKind, RouteStep.Modifier(turnAngle: pass.angle), exit, nil, .announced(exitKind)))
        }
        pass.announcement = nil
      case (false, false):
        if let (kind, modifier) = pass.announcement {
          // A ring entered and left at once is left by its first exit.
          let exit = kind.leavesRoundabout ? 1 : nil
          starts.append((k + 1, kind, modifier, exit, nil, pass.isSliproad ? .sliproad : .announced(kind)))
        } else if pass.keepsSilentStep {
          starts.append((k + 1, .turn, RouteStep.Modifier(turnAngle: pass.angle), nil, nil, .suppressed))
        }
      }
      passes[k + 1] = pass
    }
    // A small roundabout the leg ends on is entered, not turned at: no way out to turn onto
    // (OSRM's `processRoundaboutExits` for a roundabout that is not left).
    if let entered = roundabout, starts[entered.step].kind == .roundaboutTurn {
      starts[entered.step].kind = .roundabout
      starts[entered.step].instruction = .announced(.roundabout)
    }

    var drafts: [StepCollapsing.Draft] = []
    for (n, start) in starts.enumerated() {
      let endSpan = n + 1 < starts.count ? starts[n + 1].span : spans.count
      let stepSpans = spans[start.span..<endSpan]
      let first = stepSpans.first!.firstPoint
      let last = stepSpans.last!.lastPoint
      // A roundabout step is named after the road it leaves the roundabout by.
      var named = network.edges[Int(stepSpans.first!.edge)]
      var rotary = RoadLabel()
      if start.kind.entersRoundabout {
        if start.kind == .rotary { rotary = network.label(of: named) }
        if let exitSpan = start.exitSpan { named = network.edges[Int(spans[exitSpan].edge)] }
      }
      var intersections: [RouteStep.Intersection] = []
      if start.span == 0 {
        intersections.append(departure(points: points, span: firstSpan))
      }
      // A step lists the junction it begins at; those passed silently join it as their steps
      // merge into it (OSRM's `ElongateBy`). Round a roundabout: its junctions and the joints
      // where the road changes, up to the junction it is left by (a turn at a small roundabout
      // has no step for leaving; past it, as on any road).
      for k in start.span..<endSpan {
        guard let pass = passes[k],
          k == start.span
            || (start.kind.entersRoundabout && k <= start.exitSpan ?? endSpan
              && (pass.isIntersection
                || Self.requiresAnnouncement(
                  from: network.edges[Int(spans[k - 1].edge)], to: network.edges[Int(spans[k].edge)])))
        else { continue }
        intersections.append(pass.intersection)
      }
      let location = points[first]
      // A turn's bearings are the junction's (OSRM's `TurnBearing`); the departure, the only step
      // without a junction, sets off along its first metres.
      let bearings = passes[start.span]?.maneuverBearings ?? (before: 0, after: leadingBearing(points[first...]))
      let road = network.label(of: named)
      let step = RouteStep(
        maneuver: RouteStep.Maneuver(
          location: location, bearingBefore: bearings.before, bearingAfter: bearings.after,
          kind: start.kind, modifier: start.modifier, exit: start.exit),
        name: road.name, ref: road.ref, destinations: road.destinations, exits: road.exits,
        rotaryName: rotary.name, pronunciation: road.pronunciation, rotaryPronunciation: rotary.pronunciation,
        isFerry: named.isFerry, drivingSide: named.drivingSide,
        geometry: Array(points[first...max(last, first)]),
        distance: stepSpans.reduce(0) { $0 + $1.distance }, duration: stepSpans.reduce(0) { $0 + $1.duration },
        weight: stepSpans.reduce(0) { $0 + $1.weight }, intersections: intersections)
      let segregated = passes[start.span].map { isSegregated(junction: $0.junction, road: $0.leavingRoad) } ?? false
      let leavesRingJustEntered =
        start.span > 0 && start.kind.leavesRoundabout
        && !network.edges[Int(spans[start.span - 1].edge)].isRoundabout
      drafts.append(
        .init(
          instruction: start.instruction, step: step, isSegregated: segregated,
          entersAndLeavesRing: leavesRingJustEntered))
    }
    // Arrival: a step of no length at the end, its one road the way the route came in.
    let end = points[points.count - 1]
    let arrivingBearing = Double(leadingBearing(Array(points.suffix(8).reversed())[...]))
    let lastEdge = network.edges[Int(lastSpan.edge)]
    let arrivedOn = network.label(of: lastEdge)
    let arrival = RouteStep(
      maneuver: RouteStep.Maneuver(
        location: end, bearingBefore: Self.wholeDegrees(Geo.reverse(arrivingBearing)), bearingAfter: 0, kind: .arrive,
        modifier: sideModifier(asked: destination, snapped: end, road: points[points.count - 2], arriving: true),
        exit: nil),
      name: arrivedOn.name, ref: arrivedOn.ref, destinations: arrivedOn.destinations, exits: arrivedOn.exits,
      rotaryName: "", pronunciation: arrivedOn.pronunciation, isFerry: lastEdge.isFerry,
      drivingSide: lastEdge.drivingSide,
      geometry: [end, end], distance: 0, duration: 0, weight: 0,
      intersections: [
        RouteStep.Intersection(
          location: end, bearings: [Self.wholeDegrees(arrivingBearing)], entry: [true], arrivingRoad: 0,
          leavingRoad: nil, classes: [])
      ])
    drafts.append(.init(instruction: .waypoint, step: arrival))
    return Self.withoutShortNameChanges(StepCollapsing.steps(of: trimmingEndsOfNoLength(drafts)))
  }

  /// OSRM's `trimShortSegments`: a route that starts on a junction (a first step of a metre or
  /// less) departs with the step after, and one that ends on a junction arrives with the step
  /// before; a step of no length there would announce a turn nobody drives.
  func trimmingEndsOfNoLength(_ drafts: [StepCollapsing.Draft]) -> [StepCollapsing.Draft] {
    var drafts = drafts
    if drafts.count > 2, drafts[0].step.distance <= 1 {
      let depart = drafts.removeFirst().step
      var first = drafts[0].step
      first.maneuver.kind = .depart
      first.maneuver.modifier = depart.maneuver.modifier
      first.maneuver.exit = nil
      first.maneuver.bearingBefore = 0
      first.maneuver.bearingAfter = leadingBearing(first.geometry[...])
      first.intersections[0] = RouteStep.Intersection(
        location: first.intersections[0].location, bearings: [first.maneuver.bearingAfter], entry: [true],
        arrivingRoad: nil, leavingRoad: 0, classes: first.intersections[0].classes)
      first.distance += depart.distance
      first.duration += depart.duration
      first.weight += depart.weight
      drafts[0] = StepCollapsing.Draft(instruction: .waypoint, step: first)
    }
    if drafts.count > 2, drafts[drafts.count - 2].step.distance <= 1 {
      let arrival = drafts.removeLast().step
      var last = drafts[drafts.count - 1].step
      let before = drafts[drafts.count - 2].step
      last.maneuver.kind = .arrive
      last.maneuver.modifier = arrival.maneuver.modifier
      last.maneuver.exit = nil
      last.maneuver.bearingAfter = 0
      let junction = last.intersections[0]
      last.intersections = [
        RouteStep.Intersection(
          location: junction.location, bearings: junction.arrivingRoad.map { [junction.bearings[$0]] } ?? [0],
          entry: [true], arrivingRoad: 0, leavingRoad: nil, classes: [])
      ]
      last.adaptSignage(from: before)
      drafts[drafts.count - 2].step.distance += last.distance
      drafts[drafts.count - 2].step.duration += last.duration
      drafts[drafts.count - 2].step.weight += last.weight
      (last.distance, last.duration, last.weight) = (0, 0, 0)
      drafts[drafts.count - 1] = StepCollapsing.Draft(instruction: .waypoint, step: last)
    }
    return drafts
  }

  /// OSRM's `MAX_COLLAPSE_DISTANCE`.
  static let collapseDistance = StepCollapsing.distance

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
      guard previous.hasSameName(as: step) || step.distance < nameSegmentCutoff else {
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

  /// What kind of roundabout meets the route at `junction`, as OSRM tells them apart
  /// (`getRoundaboutType`): walking the ring from there, by its length, its name and the ways
  /// that join it. Nil where OSRM's roundabout rules do not apply (its `None`): a ring that does
  /// not close or that forks, a junction of a roundabout and a `junction=circular`, a circular
  /// way that is not a rotary. Its turns are then said as on any road.
  func roundaboutKind(at junction: Int32) -> RouteStep.Kind? {
    let atJunction = junctions.roads[Int(junction)]
    let roundabout = atJunction.contains { network.edges[$0.edge].flags.contains(.roundabout) }
    let circular = atJunction.contains { network.edges[$0.edge].flags.contains(.circular) }
    guard roundabout != circular else { return nil }
    var node = junction
    var length = 0.0
    // OSRM's roundabout nodes: the ring's junctions with a way off it.
    var exits = Set<Int32>()
    // The bearings of the ways off the ring, and whether every exit is one simple road.
    var exitBearings: [Double] = []
    var simpleExits = true
    // The ring's names, one per name a driver would hear as different; the joining ways' names.
    var ringNames: [RoadEdge] = []
    var joiningNames = Set<RoadLabel>()
    while !exits.contains(node) {
      let roads = junctions.roads[Int(node)]
      if roads.count > 2 {
        exits.insert(node)
        // OSRM takes one way off the ring per exit: the first it finds.
        if let off = roads.first(where: { !network.edges[$0.edge].isRoundabout }) {
          exitBearings.append(off.perceivedBearing)
        }
      }
      if roads.count > 3 { simpleExits = false }
      guard roads.count(where: { network.edges[$0.edge].isRoundabout }) == 2 else { return nil }
      // The one way on round the ring; a ring that forks is not one.
      var next: Int32?
      for road in roads {
        let edge = network.edges[road.edge]
        if let leaving = road.leaving, edge.flags.contains(.roundabout) == roundabout,
          edge.flags.contains(.circular) == circular
        {
          guard next == nil else { return nil }
          if edge.nameIndex != 0,
            ringNames.allSatisfy({ RoadNames.requiresNameAnnounced(from: label($0), to: label(edge)) })
          {
            ringNames.append(edge)
          }
          next = leaving
        } else if !edge.isRoundabout {
          joiningNames.insert(label(edge))
        }
      }
      guard let next else { return nil }
      let edge = network.edges[TurnGraph.edge(of: next)]
      length += edge.length
      node = TurnGraph.isReversed(next) ? edge.from : edge.to
      if node == junction { break }
    }
    guard !exits.isEmpty else { return nil }
    if exits.count == 1 && roundabout { return .roundaboutTurn }
    let radius = length / (2 * .pi)
    if ringNames.count == 1,
      circular || (!joiningNames.contains(label(ringNames[0])) && radius > Self.rotaryRadius)
    {
      return .rotary
    }
    if circular { return nil }
    // Looks like an intersection: at most four simple ways off it, no two within a narrow
    // angle of each other (OSRM's `qualifiesAsRoundaboutIntersection`, which compares the last
    // bearing with the first without going round).
    let sorted = exitBearings.sorted()
    let apart = sorted.indices.allSatisfy { i in
      abs(sorted[(i + 1) % sorted.count] - sorted[i]) > Self.narrowTurnAngle
    }
    if exits.count <= 4 && simpleExits && apart && radius < Self.roundaboutTurnRadius {
      return .roundaboutTurn
    }
    return .roundabout
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
    let here = arrivalView(at: Int(junction), arrivingBy: a)
    let (view, allowed) = (here.turns, here.allowed)
    let angle = view.first(where: { $0.road == b })?.angle ?? 180
    let isUTurn = a == b || (view.first(where: { $0.road == b })?.isUTurn ?? false)
    let options = view.filter { allowed[$0.road] && !$0.isUTurn }

    // The intersection as OSRM lists it: the roads a driver sees (a dual carriageway's two
    // halves as one: the half arrived by is listed as the half it merges with), by bearing.
    let listedArrival =
      roads[a].isMergedAway
      ? roads.indices.first {
        $0 != a && !roads[$0].isMergedAway && roads[$0].perceivedBearing == roads[a].perceivedBearing
      }
        ?? a : a
    let sorted = roads.indices.filter { !roads[$0].isMergedAway || $0 == listedArrival || $0 == b }
      .sorted { (roads[$0].perceivedBearing, $0) < (roads[$1].perceivedBearing, $1) }
    let shown = zip(sorted, Self.listedBearings(sorted.map { roads[$0].perceivedBearing })).map {
      (road: $0.0, bearing: $0.1)
    }.sorted { $0.bearing < $1.bearing }
    let location = leg.geometry[outSpan.firstPoint]
    let classes = outEdge.cost(reversed: outSpan.reversed)?.classes.names ?? []
    let intersection = RouteStep.Intersection(
      location: location, bearings: shown.map(\.bearing), entry: shown.map { allowed[$0.road] || $0.road == b },
      arrivingRoad: shown.firstIndex { $0.road == listedArrival }, leavingRoad: shown.firstIndex { $0.road == b },
      classes: classes)

    let inClasses = inEdge.cost(reversed: inSpan.reversed)?.classes
    let outClasses = outEdge.cost(reversed: outSpan.reversed)?.classes
    let decision = decision(
      at: here, roads: roads, route: b, keepsSilentStep: shown.count >= 3 || inClasses != outClasses)
    var pass = JunctionPass(
      intersection: intersection, isIntersection: shown.count >= 3, announcement: decision.announcement,
      keepsSilentStep: decision.keepsSilentStep, angle: isUTurn ? 0 : angle,
      otherExits: options.filter { $0.road != b }.count, isSliproad: decision.isSliproad, junction: Int(junction),
      leavingRoad: b,
      maneuverBearings: Self.maneuverBearings(arriving: roads[a].perceivedBearing, leaving: roads[b].perceivedBearing))
    if let lanes = lanes(at: here, roads: roads, route: b) {
      pass.intersection.laneDescription = lanes.description
      pass.intersection.turnLanes = lanes.range
    }
    return pass
  }

  /// What guidance says for one way on at a junction.
  struct TurnDecision {
    var announcement: (kind: RouteStep.Kind, modifier: RouteStep.Modifier)?
    /// Whether a silent step stays here when nothing is announced (see `JunctionPass`).
    var keepsSilentStep: Bool
    var isSliproad = false
  }

  /// What is said for taking road `b` at the junction of `here`, by OSRM's handlers in its order:
  /// driveways, motorways, then every other junction; sliproads after them.
  func decision(at here: ArrivalView, roads: [JunctionGeometry.Road], route b: Int, keepsSilentStep: Bool)
    -> TurnDecision
  {
    let a = here.arrivedBy
    let junction = Int32(here.junction)
    let (view, allowed) = (here.turns, here.allowed)
    let inEdge = network.edges[roads[a].edge]
    let outEdge = network.edges[roads[b].edge]
    let angle = view.first(where: { $0.road == b })?.angle ?? 180
    let isUTurn = a == b || (view.first(where: { $0.road == b })?.isUTurn ?? false)
    let options = view.filter { allowed[$0.road] && !$0.isUTurn }
    var result = TurnDecision(announcement: nil, keepsSilentStep: keepsSilentStep)
    let byHandlers = !isUTurn && inEdge.isFerry == outEdge.isFerry
    if byHandlers, let touch = ringTouch(at: here, roads: roads, route: b) {
      switch touch {
      case .leaves(let kind): result.announcement = (kind, RouteStep.Modifier(turnAngle: angle))
      case .crosses:
        let throughStreet = isThroughStreet(b, view: view, roads: roads, arrivedBy: a)
        result.announcement = obviousInstruction(
          from: inEdge, to: outEdge, angle: angle, throughStreet: throughStreet, junction: junction, route: b)
      }
    } else if byHandlers,
      let driveway = drivewayInstruction(
        route: b, angle: angle, from: inEdge, to: outEdge, view: view, roads: roads, arrivedBy: a, allowed: allowed)
    {
      result.announcement = driveway.announcement
      result.keepsSilentStep = driveway.keepsSilentStep
    } else if byHandlers,
      let instruction = motorwayInstruction(route: b, here: here, roads: roads, view: view)
    {
      switch instruction {
      case .announced(let kind, let modifier): result.announcement = (kind, modifier)
      case .silent: result.announcement = nil
      case .obvious(let throughStreet):
        result.announcement = obviousInstruction(
          from: inEdge, to: outEdge, angle: angle, throughStreet: throughStreet, junction: junction, route: b)
      }
    } else {
      result.announcement = announcement(
        from: inEdge, to: outEdge, angle: isUTurn ? 0 : angle, isUTurn: isUTurn, route: b, options: options,
        view: view, roads: roads, arrivedBy: a, allowed: allowed, junction: junction)
    }
    if !isUTurn, !inEdge.isRoundabout, !outEdge.isRoundabout {
      sliproadDecision(&result, angle: angle, route: b, here: here, roads: roads)
    }
    // Onto a slip road from a motorway is off it.
    if result.announcement?.kind == .onRamp, inEdge.roadClass.isMotorway {
      result.announcement?.kind = .offRamp
    }
    return result
  }

  /// What the route does at a junction of a ring it neither arrives nor leaves by.
  enum RingTouch: Equatable {
    /// Said as entering the ring and leaving it at its first exit: `exit roundabout` or `exit
    /// rotary`, exit 1.
    case leaves(RouteStep.Kind)
    /// Straight across the ring: said as any obvious way on.
    case crosses
  }

  /// OSRM's roundabout handler where a road meets a ring at one of its junctions and the route
  /// may enter the ring there but does not (`RoundaboutHandler`, not on the roundabout and
  /// `can_enter`): every other way on enters the ring and leaves it at once, unless it goes on
  /// within 25 degrees of straight on the other side of the ring. The sides are told apart by
  /// going round the junction from the road arrived by, the two ring roads switching between
  /// them. Nil elsewhere, and at rings OSRM's roundabout rules do not apply to.
  func ringTouch(at here: ArrivalView, roads: [JunctionGeometry.Road], route b: Int) -> RingTouch? {
    let isRing = { (road: Int) in self.network.edges[roads[road].edge].isRoundabout }
    guard !isRing(here.arrivedBy), !isRing(b),
      here.full.contains(where: { here.allowed[$0.road] && isRing($0.road) }),
      let kind = roundaboutKind(at: Int32(here.junction))
    else { return nil }
    let leftHand = network.edges[roads[here.arrivedBy].edge].drivingSide == .left
    var acrossRing = false
    for turn in leftHand ? Array(here.full.reversed()) : here.full {
      if isRing(turn.road) { acrossRing.toggle() }
      guard turn.road == b else { continue }
      if acrossRing && Self.deviation(turn.angle) < Self.fuzzyAngleDifference { return .crosses }
      return .leaves(kind == .rotary ? .exitRotary : .exitRoundabout)
    }
    return nil
  }

  /// Marks the route's way as a sliproad when it is one; on the main road at a fork with a
  /// sliproad beside it, what OSRM says instead of the fork.
  func sliproadDecision(
    _ decision: inout TurnDecision, angle: Double, route: Int, here: ArrivalView, roads: [JunctionGeometry.Road]
  ) {
    let (view, allowed, arrivedBy) = (here.turns, here.allowed, here.arrivedBy)
    guard let routeIndex = here.full.firstIndex(where: { $0.road == route }) else { return }
    let isFork = decision.announcement?.kind == .fork
    // Only a way within 80 degrees of straight on can be a sliproad; only a fork changes on the
    // main road.
    guard isFork || Self.deviation(here.full[routeIndex].angle) <= 2 * Self.narrowTurnAngle else { return }
    let obvious = ObviousTurn(network: network, view: view, roads: roads, allowed: allowed, arrivedBy: arrivedBy)
      .find().map { $0 + here.full.count - view.count }
    // A sliproad leaves beside the obvious way on.
    if !isFork, let obvious, abs(routeIndex - obvious) != 1 { return }
    guard let slip = sliproad(at: here, obvious: obvious) else { return }
    if slip == routeIndex {
      decision.isSliproad = true
      if decision.announcement == nil { decision.announcement = (.turn, RouteStep.Modifier(turnAngle: angle)) }
    } else if isFork, routeIndex == obviousWithSliproads(here, obvious: obvious) {
      let inEdge = network.edges[roads[arrivedBy].edge]
      let mainEdge = network.edges[roads[route].edge]
      let direction = RouteStep.Modifier(turnAngle: here.full[routeIndex].angle)
      if isSameName(inEdge, mainEdge) {
        decision.announcement = Self.deviation(here.full[routeIndex].angle) < 5 ? nil : (.continue, direction)
      } else {
        decision.announcement = label(mainEdge).name.isEmpty ? nil : (.newName, direction)
      }
    }
  }

  /// The route's instruction where motorways and their slip roads meet, nil elsewhere.
  func motorwayInstruction(
    route: Int, here: ArrivalView, roads: [JunctionGeometry.Road], view: [JunctionGeometry.Turn]
  ) -> MotorwayTurns.Instruction? {
    let (allowed, arrivedBy) = (here.allowed, here.arrivedBy)
    let road = { (turn: JunctionGeometry.Turn) -> MotorwayTurns.Road in
      let edge = self.network.edges[roads[turn.road].edge]
      return MotorwayTurns.Road(
        angle: turn.road == arrivedBy ? 0 : turn.angle, allowed: allowed[turn.road], roadClass: edge.roadClass,
        label: self.network.label(of: edge),
        isThroughStreet: self.isThroughStreet(turn.road, view: view, roads: roads, arrivedBy: arrivedBy),
        requiresAnnouncement: Self.requiresAnnouncement(
          from: self.network.edges[roads[arrivedBy].edge], to: edge))
    }
    let motorwayRoads = here.full.map(road)
    guard MotorwayTurns.applies(to: motorwayRoads), let index = here.full.firstIndex(where: { $0.road == route })
    else { return nil }
    return MotorwayTurns.assigned(motorwayRoads).instructions[index]
  }

  /// At a junction of a main road where every other road is minor, what is said (OSRM's
  /// `DrivewayHandler`): on the main road nothing when it keeps its name (not even a silent step),
  /// else a new name, whichever way it bends; the minor roads are plain turns, slight to their
  /// side where both they and the main road are straight on. Nil at other junctions.
  func drivewayInstruction(
    route: Int, angle: Double, from inEdge: RoadEdge, to outEdge: RoadEdge, view: [JunctionGeometry.Turn],
    roads: [JunctionGeometry.Road], arrivedBy: Int, allowed: [Bool]
  ) -> (announcement: (kind: RouteStep.Kind, modifier: RouteStep.Modifier)?, keepsSilentStep: Bool)? {
    guard let main = drivewayMainRoad(view: view, roads: roads, arrivedBy: arrivedBy),
      let index = view.firstIndex(where: { $0.road == route })
    else { return nil }
    let direction = RouteStep.Modifier(turnAngle: angle)
    if index == main {
      return (isSameName(inEdge, outEdge) ? nil : (.newName, direction), false)
    }
    if allowed[view[main].road], direction == .straight, RouteStep.Modifier(turnAngle: view[main].angle) == .straight {
      return ((.turn, index < main ? .slightRight : .slightLeft), true)
    }
    return ((.turn, direction), true)
  }

  /// OSRM's `isSameName`: both roads named, and the change not one to say.
  func isSameName(_ a: RoadEdge, _ b: RoadEdge) -> Bool {
    hasName(a) && hasName(b) && !RoadNames.requiresNameAnnounced(from: label(a), to: label(b))
  }

  /// Named, numbered or signposted (OSRM's name id not empty).
  func isNamed(_ edge: RoadEdge) -> Bool { !edge.hasEmptyLabel }

  /// Named: OSRM's `GetNameForID(…).empty()`, which reads the name alone, not the ref.
  func hasName(_ edge: RoadEdge) -> Bool { edge.nameIndex != 0 }

  func label(_ edge: RoadEdge) -> RoadLabel { network.label(of: edge) }

  /// The one road on at a junction of a main road where every other road is minor (service
  /// roads, tracks: OSRM's low-priority classes), as an index of `view`.
  func drivewayMainRoad(view: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road], arrivedBy: Int) -> Int? {
    let isMinor = { (turn: JunctionGeometry.Turn) in self.network.edges[roads[turn.road].edge].roadClass.isLowPriority }
    // The junction's first road is its U-turn, the road arrived by or the other half of it.
    let full = Self.withArrival(view, arrivedBy: arrivedBy)
    guard full.count > 2, !isMinor(full[0]), full.filter(isMinor).count + 2 == full.count,
      let main = view.firstIndex(where: { $0.road != full[0].road && !isMinor($0) })
    else { return nil }
    return main
  }

  /// What to say at a junction off roundabouts, or nil when the way on goes without saying.
  func announcement(
    from inEdge: RoadEdge, to outEdge: RoadEdge, angle: Double, isUTurn: Bool, route: Int,
    options: [JunctionGeometry.Turn], view: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road], arrivedBy: Int,
    allowed: [Bool], junction: Int32
  ) -> (kind: RouteStep.Kind, modifier: RouteStep.Modifier)? {
    let modifier = RouteStep.Modifier(turnAngle: angle)
    let renamed = RoadNames.requiresNameAnnounced(
      from: label(inEdge),
      to: label(outEdge))
    // Continuing is staying on a named road; between unnamed roads every turn is a turn.
    let basicKind: RouteStep.Kind =
      Self.isOnRamp(from: inEdge, to: outEdge)
      ? .onRamp : !renamed && hasName(inEdge) && hasName(outEdge) ? .continue : .turn
    let full = Self.withArrival(view, arrivedBy: arrivedBy)
    if isUTurn {
      // OSRM's turn handler gives a junction's U-turn its basic type (`findBasicTurnType`); at a
      // dead end or a driveway junction it keeps the default (`setTurnTypes`): back along the
      // road arrived by a continue, onto the other half of a dual carriageway a turn.
      if full.count <= 1 || drivewayMainRoad(view: view, roads: roads, arrivedBy: arrivedBy) != nil {
        return (route == arrivedBy ? .continue : .turn, .uturn)
      }
      return (basicKind, .uturn)
    }
    if inEdge.isFerry != outEdge.isFerry { return (.notification, modifier) }
    let obvious = ObviousTurn(network: network, view: view, roads: roads, allowed: allowed, arrivedBy: arrivedBy).find()
    // Where three links meet, two ways on near straight are a fork even when one is obvious
    // (OSRM's `handleThreeWayTurn`, `all_links`).
    if full.count == 3, full.allSatisfy({ network.edges[roads[$0.road].edge].roadClass.isLink }),
      let members = forkMembers(view: view, options: options, roads: roads, arrivedBy: arrivedBy),
      let position = members.first(where: { view[$0].road == route })
    {
      return forkAnnouncement(
        members: members, position: position, view: view, roads: roads, arrivedBy: arrivedBy, from: inEdge,
        to: outEdge, basicKind: basicKind, renamed: renamed, modifier: modifier)
    }
    if let obvious, view[obvious].road == route {
      return obviousInstruction(
        from: inEdge, to: outEdge, angle: view[obvious].angle,
        throughStreet: isThroughStreet(route, view: view, roads: roads, arrivedBy: arrivedBy), junction: junction,
        route: route)
    }
    if let decision = sideDecision(
      route: route, view: view, options: options, roads: roads, arrivedBy: arrivedBy, allowed: allowed, obvious: obvious
    ) {
      switch decision {
      case .asObvious: return renamed ? (.newName, modifier) : nil
      case .turn(let direction): return (basicKind, direction)
      }
    }
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
    if let members = forkMembers(view: view, options: options, roads: roads, arrivedBy: arrivedBy),
      let position = members.first(where: { view[$0].road == route })
    {
      return forkAnnouncement(
        members: members, position: position, view: view, roads: roads, arrivedBy: arrivedBy, from: inEdge,
        to: outEdge, basicKind: basicKind, renamed: renamed, modifier: modifier)
    }
    // The end of a road: a T, the two ways on near right angles to either side (OSRM's
    // `isEndOfRoad`, three-way junctions only), said as right or left whatever the angle. The
    // junction's first road is its U-turn, which may be the other half of the road arrived by.
    let ways = Self.withArrival(view, arrivedBy: arrivedBy).dropFirst()
    if ways.count == 2, let right = ways.first, let left = ways.last,
      abs(right.angle - 90) < Self.narrowTurnAngle, abs(left.angle - 270) < Self.narrowTurnAngle,
      left.angle - right.angle > 2 * Self.narrowTurnAngle
    {
      return (basicKind == .onRamp ? .onRamp : .endOfRoad, route == right.road ? .right : .left)
    }
    return (basicKind, modifier)
  }

  /// At four or more roads, the route's direction told apart from the others' on its side of the
  /// way on, a fork's ways or the straightest road (OSRM's `handleComplexTurn`); nil where OSRM
  /// decides otherwise (the fork's own ways).
  func sideDecision(
    route: Int, view: [JunctionGeometry.Turn], options: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road],
    arrivedBy: Int, allowed: [Bool], obvious: Int?
  ) -> TurnAssignment.Decision? {
    let full = Self.withArrival(view, arrivedBy: arrivedBy)
    let shift = full.count - view.count
    guard full.count >= 4, let routeIndex = view.firstIndex(where: { $0.road == route }) else { return nil }
    var settled = obvious.map { $0...$0 }
    if settled == nil, let fork = forkMembers(view: view, options: options, roads: roads, arrivedBy: arrivedBy) {
      if fork.contains(routeIndex) { return nil }
      settled = fork
    }
    let sides = full.map { turn in
      TurnAssignment.Road(
        angle: turn.angle, allowed: allowed[turn.road],
        priority: Self.priority(network.edges[roads[turn.road].edge].roadClass))
    }
    let assignment = TurnAssignment.assigned(
      sides, around: settled.map { ($0.lowerBound + shift)...($0.upperBound + shift) })
    return assignment.decisions[routeIndex + shift]
  }

  /// OSRM's `MAXIMAL_ALLOWED_NO_TURN_DEVIATION`: this close to straight on is no turn at all.
  static let noTurnDeviation = 3.0

  /// Whether going from one road onto another is more than driving on (OSRM's
  /// `requiresAnnouncement`: another class, a one-way change, or names that do not combine).
  static func requiresAnnouncement(from a: RoadEdge, to b: RoadEdge) -> Bool {
    a.roadClass != b.roadClass || a.isRoundabout != b.isRoundabout || !a.hasSameLabel(as: b)
      || ((a.forward == nil) != (a.backward == nil)) != ((b.forward == nil) != (b.backward == nil))
  }

  /// The route's way at a fork (OSRM's `assignFork`): each side a fork, unless only one side is a
  /// minor road (that side a plain turn, the other on without a word); of three, the middle one
  /// straight on goes without saying when the road stays the same. At four roads or more, two
  /// ways of classes far apart are the more important road on and a turn off it.
  func forkAnnouncement(
    members: ClosedRange<Int>, position: Int, view: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road],
    arrivedBy: Int, from inEdge: RoadEdge, to outEdge: RoadEdge, basicKind: RouteStep.Kind, renamed: Bool,
    modifier: RouteStep.Modifier
  ) -> (kind: RouteStep.Kind, modifier: RouteStep.Modifier)? {
    let roadClass = { (i: Int) in self.network.edges[roads[view[i].road].edge].roadClass }
    guard members.count == 2 else {
      if position == members.upperBound { return (.fork, .slightLeft) }
      if position == members.lowerBound { return (.fork, .slightRight) }
      if Self.deviation(view[position].angle) < Self.noTurnDeviation
        && !Self.requiresAnnouncement(from: inEdge, to: outEdge)
      {
        return nil
      }
      return (.fork, .straight)
    }
    let (right, left) = (members.lowerBound, members.upperBound)
    let isLeft = position == left
    let side: RouteStep.Modifier = isLeft ? .slightLeft : .slightRight
    let isComplex = Self.withArrival(view, arrivedBy: arrivedBy).count >= 4
    if isComplex, abs(Self.priority(roadClass(left)) - Self.priority(roadClass(right))) > 1 {
      // Not a fork: the less important way turns off the other (`canBeSeenAsFork`).
      let leftIsMinor = Self.priority(roadClass(left)) > Self.priority(roadClass(right))
      if isLeft == leftIsMinor { return (basicKind, side) }
      return renamed ? (.newName, modifier) : nil
    }
    let (mine, other) = isLeft ? (roadClass(left), roadClass(right)) : (roadClass(right), roadClass(left))
    if other.isLowPriority && !mine.isLowPriority { return nil }
    if mine.isLowPriority && !other.isLowPriority { return (.turn, side) }
    return (.fork, side)
  }

  /// The indices in `view` of a fork's ways on, right to left.
  func forkMembers(
    view: [JunctionGeometry.Turn], options: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road], arrivedBy: Int
  ) -> ClosedRange<Int>? {
    guard view.count >= 3,
      let straightmost = view.indices.min(by: { Self.deviation(view[$0].angle) < Self.deviation(view[$1].angle) }),
      Self.deviation(view[straightmost].angle) <= Self.narrowTurnAngle
    else { return nil }
    // The next road out is a candidate too when it is near straight on itself, or close to a road
    // that is (OSRM's `isOutermostForkCandidate`).
    let isNeighbour = { (a: Int, b: Int) in
      Self.deviation(view[b].angle) <= Self.narrowTurnAngle
        || (Self.angularDeviation(view[a].angle, view[b].angle) <= Self.narrowTurnAngle
          && Self.deviation(view[a].angle) <= Self.groupAngle)
    }
    var right = straightmost
    while right - 1 >= 0 && isNeighbour(right, right - 1) { right -= 1 }
    var left = straightmost
    while left + 1 < view.count && isNeighbour(left, left + 1) { left += 1 }
    guard left > right, left - right < 3, right >= 1 else { return nil }
    let beyondLeft = left + 1 < view.count ? view[left + 1].angle : 360
    guard beyondLeft - view[left].angle >= Self.groupAngle, view[right].angle - view[right - 1].angle >= Self.groupAngle
    else { return nil }
    let enterable = Set(options.map(\.road))
    let members = view[right...left]
    guard members.allSatisfy({ enterable.contains($0.road) }) else { return nil }
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
    guard Set(members.map { network.edges[roads[$0.road].edge].roadClass.isLink }).count == 1 else {
      return nil
    }
    return right...left
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

  /// Onto a motorway's slip road from any other road (OSRM's `OnRamp` basic type; off a motorway
  /// it is said as an off ramp).
  static func isOnRamp(from inEdge: RoadEdge, to outEdge: RoadEdge) -> Bool {
    !inEdge.roadClass.isRamp && outEdge.roadClass.isRamp
  }

  /// What OSRM says on the obvious way on (`getInstructionForObvious`), nil when nothing: onto a
  /// slip road, an on ramp; a kept name, nothing; another name, a new name, or onto a through
  /// street a merge (motorways), nothing (slip road to slip road), or a turn, straight when within a
  /// narrow angle and the road's next junction over twice the collapsing distance away.
  func obviousInstruction(
    from inEdge: RoadEdge, to outEdge: RoadEdge, angle: Double, throughStreet: Bool, junction: Int32,
    route: Int
  ) -> (kind: RouteStep.Kind, modifier: RouteStep.Modifier)? {
    let modifier = RouteStep.Modifier(turnAngle: angle)
    if Self.isOnRamp(from: inEdge, to: outEdge) { return (.onRamp, modifier) }
    if angle < 0.01 { return (.continue, .uturn) }
    let renamed = RoadNames.requiresNameAnnounced(
      from: label(inEdge),
      to: label(outEdge))
    guard renamed else { return nil }
    guard throughStreet else { return (.newName, modifier) }
    if outEdge.roadClass.isMotorway { return (.merge, angle > 180 ? .slightRight : .slightLeft) }
    if inEdge.roadClass.isRamp && outEdge.roadClass.isRamp { return nil }
    // To the road's next junction, through junctions that only join its pieces (OSRM's target of
    // its compressed edge).
    let far = junctions.next(from: Int(junction), road: route, network: network, limit: 0)?.junction ?? Int(junction)
    let reach = Geo.distance(network.coordinate(ofJunction: junction), network.coordinate(ofJunction: Int32(far)))
    let nearlyStraight = Self.deviation(angle) < Self.narrowTurnAngle && reach > 2 * Self.collapseDistance
    return (.turn, nearlyStraight ? .straight : modifier)
  }

  /// OSRM's `isThroughStreet`: a named road that goes on both ways from here, another road of its
  /// name (OSRM's `HaveIdenticalNames`) and class leaving nearly opposite.
  func isThroughStreet(
    _ road: Int, view: [JunctionGeometry.Turn], roads: [JunctionGeometry.Road], arrivedBy: Int
  ) -> Bool {
    let edge = network.edges[roads[road].edge]
    guard isNamed(edge), let angle = view.first(where: { $0.road == road })?.angle else { return false }
    // Not the junction's first road, its U-turn.
    return Self.withArrival(view, arrivedBy: arrivedBy).dropFirst().contains { other in
      let otherEdge = network.edges[roads[other.road].edge]
      return other.road != road && RoadNames.areIdentical(label(edge), label(otherEdge))
        && otherEdge.roadClass == edge.roadClass
        && Self.angularDeviation(other.angle, angle) > 180 - Self.fuzzyAngleDifference
    }
  }

  // MARK: - Ends

  /// The way a line sets off (a route from its start, or from its end read backwards), as OSRM's
  /// `trimShortSegments` leaves a route's ends: a first point within a metre of the next (an end
  /// on or beside a node) does not count, and a repeated one is passed.
  func leadingBearing(_ points: ArraySlice<LatLng>) -> Int {
    var points = points
    if points.count > 2, Geo.distance(fixed(points[points.startIndex]), fixed(points[points.startIndex + 1])) <= 1 {
      points = points.dropFirst()
    }
    guard let start = points.first else { return 0 }
    let ahead = points.dropFirst().first { $0 != start } ?? start
    return Self.wholeDegrees(Geo.bearing(fixed(start), fixed(ahead)))
  }

  func departure(points: [LatLng], span: RouteSpan) -> RouteStep.Intersection {
    let bearing = leadingBearing(points[...])
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
    return RouteStep.Modifier(sideAngle: arriving ? Geo.turnAngle(r, s, a) : Geo.turnAngle(a, s, r))
  }

  func fixed(_ point: LatLng) -> FixedCoordinate {
    FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
  }

  /// An intersection's bearings as OSRM lists them (turn_classification.cpp): each in its
  /// 15-degree sector when no two roads share one, else each to the whole degree. `perceived`
  /// ascends.
  static func listedBearings(_ perceived: [Double]) -> [Int] {
    let sector = { (bearing: Double) -> Int in
      let shifted = bearing.rounded() + 7.5
      return Int((shifted >= 360 ? shifted - 360 : shifted) / 15)
    }
    let sectors = perceived.map(sector)
    let distinct = sectors.count <= 1 || sectors.indices.allSatisfy { sectors[$0] != sectors[($0 + 1) % sectors.count] }
    return distinct ? sectors.map { $0 * 15 } : perceived.map(wholeDegrees)
  }

  /// A turn's maneuver bearings as OSRM gives them: the perceived bearings of the road arrived by
  /// and the road left by, each kept in 256 steps to the circle (`TurnBearing`) and then taken down
  /// to the whole degree; `bearing_before` the first reversed, the way the car faces.
  static func maneuverBearings(arriving: Double, leaving: Double) -> (before: Int, after: Int) {
    let step = 360.0 / 256
    let kept = { (bearing: Double) in Int((bearing / step).rounded(.towardZero) * step) }
    return (Int(Geo.reverse(Double(kept(arriving)))), kept(leaving))
  }

  static func wholeDegrees(_ bearing: Double) -> Int {
    let degrees = Int(bearing.rounded())
    return degrees >= 360 ? degrees - 360 : degrees
  }
}
