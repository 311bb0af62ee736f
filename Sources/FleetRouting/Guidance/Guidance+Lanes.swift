/// Turn lanes at the junctions a route passes: OSRM's `TurnLaneHandler` (which scenario a
/// junction's lanes are in, the lanes of a road just before it, sliproads) over the matching of
/// `LaneMatching`.
extension Guidance {
  /// OSRM's `findPreviousIntersection`: roads shorter than this may carry the lanes of the
  /// junction before them.
  static let laneCarryDistance = 30.0

  /// The lanes shown at the junction of `here` and the range of them that serves road `route`
  /// (OSRM's `assignTurnLanes`); nil where no lanes are said.
  func lanes(at here: ArrivalView, roads: [JunctionGeometry.Road], route: Int) -> (
    description: [LaneIndications], range: RouteStep.LaneRange
  )? {
    let full = here.full
    // A joint OSRM's graph compresses away is no junction at all.
    guard full.count > 1, !junctions.passThrough[here.junction],
      let routeIndex = full.firstIndex(where: { $0.road == route })
    else { return nil }
    // No lanes round roundabouts, nor where one is entered or left.
    guard !full.contains(where: { network.edges[roads[$0.road].edge].isRoundabout }) else { return nil }
    let arrival = chain(from: here.junction, road: here.arrivedBy)
    let via = arrival.lanesArriving
    let previous = arrival.length <= Self.laneCarryDistance ? previousJunction(before: here, chain: arrival) : nil
    let previousLanes = previous.map { chain(from: $0.junction, road: $0.arrivedBy).lanesArriving } ?? 0
    guard via != 0 || previousLanes != 0 else { return nil }

    let atJunction = laneRoads(here, roads)
    var data = LaneMatching.laneData(network.turnLanes[Int(via)])
    // Lanes that go on unchanged past a junction of two roads are said at the next one.
    if full.count == 2, via != 0, via == chain(from: here.junction, road: full[1].road).lanesLeaving,
      Self.angularDeviation(full[1].angle, 180) < Self.fuzzyAngleDifference
    {
      return nil
    }
    if via != 0, data.isEmpty { return nil }
    if via != 0, data.count == 1, data[0].tag == .none { return nil }

    let matched = {
      (data: [LaneMatching.LaneData], description: UInt32) -> (
        description: [LaneIndications], range: RouteStep.LaneRange
      )? in
      guard let range = LaneMatching.simpleMatch(atJunction, data)?[routeIndex] else { return nil }
      return (self.network.turnLanes[Int(description)], range)
    }
    let next = { (junction: Int, road: Int) -> [LaneMatching.Road]? in
      guard let reached = self.junctions.next(from: junction, road: road, network: self.network) else { return nil }
      return self.laneRoads(
        self.arrivalView(at: reached.junction, arrivingBy: reached.arrivingRoad),
        self.junctions.roads[reached.junction])
    }

    var previousRoads: [LaneMatching.Road] = []
    var previousData: [LaneMatching.LaneData] = []
    var previousView: ArrivalView?
    if let previous {
      let view = arrivalView(at: previous.junction, arrivingBy: previous.arrivedBy)
      let atPrevious = junctions.roads[previous.junction]
      previousView = view
      previousRoads = laneRoads(view, atPrevious)
      previousData = LaneMatching.laneData(network.turnLanes[Int(previousLanes)])
      if let viaIndex = view.full.firstIndex(where: { $0.road == previous.toward }),
        let slip = previousRoads.indices.first(where: { previousRoads[$0].kind == .sliproad })
      {
        let main = Self.closestRoad(to: slip, previousRoads)
        if viaIndex == slip || viaIndex == main {
          let leaving = { (index: Int) in self.chain(from: previous.junction, road: view.full[index].road).lanesLeaving
          }
          return sliproadLanes(
            roads: atJunction, route: routeIndex, via: via, data: data,
            main: (leaving(main), previousRoads[main].angle),
            sliproad: (leaving(slip), previousRoads[slip].angle))
        }
      }
    }

    let possibleEntries = LaneMatching.allowedCount(atJunction)
    if LaneMatching.hasTag([.mergeToLeft, .mergeToRight], data) { return nil }
    if atJunction[0].allowed, !LaneMatching.hasTag([.none, .left, .sharpLeft, .uturn], data),
      data.count + 1 == possibleEntries
    {
      return nil
    }
    // A U-turn from the leftmost lane, allowed but not painted.
    if !data.isEmpty, LaneMatching.canMatchTrivially(atJunction, data), atJunction[0].allowed,
      data.count != (!LaneMatching.hasTag(.uturn, data) ? 1 : 0) + possibleEntries,
      !LaneMatching.hasTag(.none, data)
    {
      data.append(LaneMatching.LaneData(tag: .uturn, from: data.last!.to, to: data.last!.to))
    }
    if LaneMatching.isSimple(data, atJunction) {
      return matched(LaneMatching.handleNone(data, atJunction), via)
    }
    if !data.isEmpty {
      // Lanes for this junction and the next one close ahead: this junction's part.
      guard data.count >= possibleEntries else { return nil }
      let first = LaneMatching.partition(data, atJunction) { next(here.junction, full[$0].road) }.first
      guard first.count == possibleEntries, LaneMatching.isSimple(first, atJunction) else { return nil }
      return matched(LaneMatching.handleNone(first, atJunction), via)
    }
    guard via == 0, let previous, let previousView, !previousData.isEmpty else { return nil }
    // The lanes of the road just before, carried over.
    if LaneMatching.hasTag([.mergeToLeft, .mergeToRight], previousData) { return nil }
    if LaneMatching.isSimple(previousData, atJunction), previousRoads.count == 2 {
      return matched(LaneMatching.handleNone(previousData, atJunction), previousLanes)
    }
    guard previousData.count >= LaneMatching.allowedCount(previousRoads), previousRoads.count != 2 else { return nil }
    let second = LaneMatching.stableSorted(
      LaneMatching.partition(previousData, previousRoads) { next(previous.junction, previousView.full[$0].road) }
        .second)
    guard second.count == possibleEntries, LaneMatching.isSimple(second, atJunction) else { return nil }
    return matched(LaneMatching.handleNone(second, atJunction), previousLanes)
  }

  /// OSRM's `handleSliproadTurn`: at the end of a sliproad, or on the main road beside it, the
  /// lanes of both as one road.
  func sliproadLanes(
    roads: [LaneMatching.Road], route: Int, via: UInt32, data: [LaneMatching.LaneData],
    main: (lanes: UInt32, angle: Double), sliproad: (lanes: UInt32, angle: Double)
  ) -> (description: [LaneIndications], range: RouteStep.LaneRange)? {
    guard main.lanes != 0, sliproad.lanes != 0 else { return nil }
    let mainLanes = network.turnLanes[Int(main.lanes)]
    let slipLanes = network.turnLanes[Int(sliproad.lanes)]
    var data = data
    let combined: [LaneIndications]
    let shift: Int
    if main.angle > sliproad.angle {
      // The sliproad leaves to the right of the main road.
      combined = mainLanes + slipLanes
      shift = via == main.lanes ? slipLanes.count : 0
    } else {
      combined = slipLanes + mainLanes
      shift = via == sliproad.lanes ? mainLanes.count : 0
    }
    for i in data.indices {
      data[i].from += shift
      data[i].to += shift
    }
    guard let range = LaneMatching.simpleMatch(roads, data)?[route] else { return nil }
    return (combined, range)
  }

  /// The road beside road `index` with the closer angle (OSRM's main road of a sliproad).
  static func closestRoad(to index: Int, _ roads: [LaneMatching.Road]) -> Int {
    if index + 1 == roads.count { return index - 1 }
    if index == 1 { return index + 1 }
    let before = angularDeviation(roads[index].angle, roads[index - 1].angle)
    let after = angularDeviation(roads[index].angle, roads[index + 1].angle)
    return before < after ? index - 1 : index + 1
  }

  /// The roads of a junction as lane matching reads them, with what guidance says for each.
  func laneRoads(_ here: ArrivalView, _ roads: [JunctionGeometry.Road]) -> [LaneMatching.Road] {
    here.full.enumerated().map { index, turn in
      let isDrivable = roads[turn.road].leaving != nil
      guard index > 0 else {
        return LaneMatching.Road(
          angle: turn.angle, allowed: here.allowed[turn.road], kind: .turn, modifier: .uturn, isDrivable: isDrivable)
      }
      let direction = RouteStep.Modifier(turnAngle: turn.angle)
      guard here.allowed[turn.road] else {
        return LaneMatching.Road(
          angle: turn.angle, allowed: false, kind: .turn, modifier: direction, isDrivable: isDrivable)
      }
      let decision = decision(at: here, roads: roads, route: turn.road, keepsSilentStep: true)
      let kind: LaneMatching.Kind
      switch decision.announcement?.kind {
      case _ where decision.isSliproad: kind = .sliproad
      case nil: kind = .suppressed
      case .newName: kind = .newName
      case .merge: kind = .merge
      case .fork: kind = .fork
      case .continue: kind = .continue
      default: kind = .turn
      }
      return LaneMatching.Road(
        angle: turn.angle, allowed: true, kind: kind, modifier: decision.announcement?.modifier ?? direction,
        isDrivable: isDrivable)
    }
  }

  /// A road read from a junction to the next real intersection, as OSRM compresses it into one
  /// edge: its length and the `turn:lanes` it carries each way. Joined pieces keep the lanes of
  /// the piece nearest the end driven to (OSRM's `selectAnnotation`).
  struct LaneChain {
    var length = 0.0
    /// Driving towards the junction read from; 0 when none.
    var lanesArriving: UInt32 = 0
    /// Driving away from it.
    var lanesLeaving: UInt32 = 0
    var far = 0
    var farRoad = 0
  }

  func chain(from junction: Int, road: Int) -> LaneChain {
    var result = LaneChain()
    // No shape is read (a limit of 0): only the edges' lanes and lengths.
    let walk = junctions.follow(from: junction, road: road, network: network, limit: 0) { index, atFrom in
      let edge = network.edges[index]
      result.length += edge.length
      if result.lanesArriving == 0 { result.lanesArriving = edge.turnLanes(reversed: atFrom) }
      let leaving = edge.turnLanes(reversed: !atFrom)
      if leaving != 0 { result.lanesLeaving = leaving }
    }
    result.far = Int(walk.far)
    result.farRoad = junctions.roads[result.far].firstIndex { $0.edge == walk.lastEdge } ?? 0
    return result
  }

  /// OSRM's `findPreviousIntersection`: the junction the road arrived by begins at, the road
  /// straight on behind it (arrived there by), and the road from there towards `here`.
  func previousJunction(before here: ArrivalView, chain: LaneChain) -> (junction: Int, arrivedBy: Int, toward: Int)? {
    let v = chain.far
    let toward = chain.farRoad
    guard v != here.junction else { return nil }
    // Seen from `here` looking back: the road nearest straight on at `v`.
    let back = junctions.turns(from: toward, at: v, allowed: allowedRoads(at: v, arrivingBy: toward))
    guard
      let straightmost = Self.withArrival(back, arrivedBy: toward).min(by: {
        Self.angularDeviation($0.angle, 180) < Self.angularDeviation($1.angle, 180)
      }), Self.angularDeviation(straightmost.angle, 180) <= Self.groupAngle,
      straightmost.road != toward, junctions.roads[v][straightmost.road].arriving != nil
    else { return nil }
    return (v, straightmost.road, toward)
  }
}
