import Foundation

/// OSRM's graph walker for its mergeable-road tests (`node_based_graph_walker.cpp`): a road
/// followed from a junction through the intersections on its way, at each by the road of its
/// name that goes on most nearly straight, with what is read on the way gathered by an
/// accumulator that also says when to stop.
protocol RoadWalkAccumulator {
  /// Road `road` at `junction` is driven; `view` is the intersection it reaches (nil when it comes
  /// back to `junction`).
  mutating func update(_ merging: RoadMerging, from junction: Int, road: Int, reaching view: RoadMerging.WalkView?)
  /// Whether the walk stops at the intersection last reached.
  mutating func terminate() -> Bool
}

extension RoadMerging {
  /// OSRM's `FUZZY_ANGLE_DIFFERENCE` and `GROUP_ANGLE`, for the walk's choice of road.
  static let fuzzyAngle = 25.0
  static let groupAngle = 60.0

  /// An intersection seen arriving by a road: every road's turn angle from its bearing (the
  /// walk's are by the roads' first metres, nothing merged, as OSRM's `getConnectedRoads<true>`);
  /// the road arrived by is the U-turn, at 0.
  struct WalkView {
    let junction: Int
    let arriving: Int
    let bearings: [Double]
    let angles: [Double]
    var count: Int { angles.count }

    init(junction: Int, arriving: Int, bearings: [Double]) {
      self.junction = junction
      self.arriving = arriving
      self.bearings = bearings
      let entry = Geo.reverse(bearings[arriving])
      angles = bearings.indices.map { $0 == arriving ? 0 : Geo.angleBetween(entry, bearings[$0]) }
    }

    /// The road whose angle is nearest `target` (OSRM's `findClosestTurn`).
    func closestTurn(_ target: Double) -> Int {
      angles.indices.min {
        PerceivedBearing.angularDeviation(angles[$0], target) < PerceivedBearing.angularDeviation(angles[$1], target)
      }!
    }
  }

  /// What OSRM's `SelectStraightmostRoadByNameAndOnlyChoice` is set up with: the name to follow,
  /// the bearing the road started with, and whether a sharp turn with another as sharp beside
  /// it, or a road straight on, ends the walk.
  struct RoadSelector {
    /// The road followed: the way on is a road with its label (OSRM's name id).
    let followed: RoadEdge
    let bearing: Double
    let stopOnAmbiguousTurns: Bool
  }

  func selector(following road: JunctionGeometry.Road, bearing: Double, stopOnAmbiguousTurns: Bool) -> RoadSelector {
    let edge = network.edges[road.edge]
    return RoadSelector(
      followed: edge, bearing: bearing, stopOnAmbiguousTurns: stopOnAmbiguousTurns)
  }

  /// The road at `junction` that a walk along `lastEdge` arrives by.
  func arrivingRoad(at junction: Int, by lastEdge: Int) -> Int? {
    roads[junction].firstIndex { $0.edge == lastEdge }
  }

  func walkView(at junction: Int, arriving: Int) -> WalkView {
    WalkView(
      junction: junction, arriving: arriving,
      bearings: shapes[junction].map { Geo.bearing($0.shape[0], PerceivedBearing.closeToTurn($0.shape)) })
  }

  /// The intersection road `road` at `junction` reaches; nil when it comes back to `junction`.
  func reaching(from junction: Int, road: Int) -> WalkView? {
    let (_, far, loops, lastEdge) = shapes[junction][road]
    guard !loops, let arriving = arrivingRoad(at: Int(far), by: lastEdge) else { return nil }
    return walkView(at: Int(far), arriving: arriving)
  }

  /// OSRM's `TraverseRoad`: drives `road` from `junction`, hands each road driven to the
  /// accumulator, and goes on by the selector's choice until it comes back to `junction`, meets
  /// a dead end or no choice, or the accumulator says stop.
  func traverse<Accumulator: RoadWalkAccumulator>(
    from junction: Int, road: Int, selector: RoadSelector, into accumulator: inout Accumulator
  ) {
    var (at, current) = (junction, road)
    for _ in 0..<1000 {
      let view = reaching(from: at, road: current)
      accumulator.update(self, from: at, road: current, reaching: view)
      guard let view, view.junction != junction, view.count > 1,
        let next = straightmost(view, selector: selector), !accumulator.terminate()
      else { return }
      (at, current) = (view.junction, next)
    }
  }

  /// OSRM's `SelectStraightmostRoadByNameAndOnlyChoice`: the road of the name nearest straight
  /// on, if it is the obvious way on, or the only one of the name and no turn of 100° or more
  /// (nor, when asked, a sharp turn with one as sharp to the other side or a road straight on).
  func straightmost(_ view: WalkView, selector: RoadSelector) -> Int? {
    let there = roads[view.junction]
    let named = { (road: Int) in
      let edge = self.network.edges[there[road].edge]
      return edge.hasSameLabel(as: selector.followed)
    }
    let deviation = PerceivedBearing.angularDeviation
    guard there.indices.filter(named).count <= 2 else { return nil }
    let score = { (road: Int) in (named(road) ? 0 : 180) + deviation(view.angles[road], 180) }
    guard let best = there.indices.filter({ $0 != view.arriving }).min(by: { score($0) < score($1) }) else {
      return nil
    }
    let angle = view.angles[best]
    if (view.count == 2 || view.closestTurn(180) == best) && deviation(angle, 180) < Self.narrowTurn
      && deviation(selector.bearing, view.bearings[best]) < Self.narrowTurn
    {
      return best
    }
    if selector.stopOnAmbiguousTurns && deviation(180, angle) > Self.groupAngle {
      let opposite = view.closestTurn(Geo.reverse(angle))
      if deviation(angle, view.angles[opposite]) > 180 - Self.fuzzyAngle { return nil }
      if deviation(view.angles[view.closestTurn(180)], 180) < Self.fuzzyAngle { return nil }
    }
    return named(best) && deviation(angle, 180) < 100 ? best : nil
  }

  /// OSRM's `LengthLimitedCoordinateAccumulator`: the line driven, cut at `limit` metres.
  struct LineAccumulator: RoadWalkAccumulator {
    let limit: Double
    var length = 0.0
    var line: [FixedCoordinate] = []

    mutating func update(_ merging: RoadMerging, from junction: Int, road: Int, reaching view: WalkView?) {
      let shape = merging.shapes[junction][road].shape
      let piece = Geo.length(of: shape)
      line += piece + length > limit ? PerceivedBearing.trimmed(shape, to: limit - length) : shape
      length = min(limit, length + piece)
    }

    func terminate() -> Bool { length >= limit }
  }

  /// OSRM's `IntersectionFinderAccumulator`: the first intersection of three roads or more, or
  /// the one reached after `limit` roads.
  struct IntersectionFinder: RoadWalkAccumulator {
    let limit: Int
    var hops = 0
    /// The intersection last reached.
    var view: WalkView?

    mutating func update(_ merging: RoadMerging, from junction: Int, road: Int, reaching view: WalkView?) {
      hops += 1
      self.view = view
    }

    mutating func terminate() -> Bool {
      guard (view?.count ?? 0) > 2 || hops == limit else { return false }
      hops = 0
      return true
    }
  }
}
