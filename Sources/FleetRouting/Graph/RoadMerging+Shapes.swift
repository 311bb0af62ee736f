import Foundation

/// OSRM's narrow-triangle and link-road tests of its mergeable-road detector
/// (`mergable_road_detector.cpp`): a road that splits into its two halves just before an
/// intersection is one road, and a short link between two parallel roads of one name is not.
extension RoadMerging {
  /// OSRM's `NARROW_TURN_ANGLE` and the limits of `IsNarrowTriangle`.
  static let narrowTurn = 40.0
  static let triangleRange = 80.0
  static let trafficIslandWidth = 10.0
  static let walkHops = 5

  /// The next intersection of three roads or more that a road leads to, read on through joints of
  /// two (OSRM's `skipDegreeTwoNodes`); nil when it comes back.
  func nextIntersection(from junction: Int, road: Int) -> (junction: Int, arrivingRoad: Int)? {
    var (at, current) = (junction, road)
    for _ in 0..<10_000 {
      let (_, far, loops, lastEdge) = shapes[at][current]
      guard !loops, far != Int32(junction), let arriving = arrivingRoad(at: Int(far), by: lastEdge) else { return nil }
      guard roads[Int(far)].count == 2 else { return (Int(far), arriving) }
      (at, current) = (Int(far), arriving == 0 ? 1 : 0)
    }
    return nil
  }

  /// OSRM's `IsNarrowTriangle`: both halves, followed by the left one's name, soon reach
  /// intersections (past one small side street if there is no turn towards the other half)
  /// within a road's width of each other, and the left one's turn to the right leads to the
  /// right one's. Angles there are by the roads' first metres, as OSRM's walk reads them.
  func isNarrowTriangle(_ junction: Int, _ junctionRoads: [JunctionGeometry.Road], _ l: Int, _ r: Int) -> Bool {
    let selector = selector(
      following: junctionRoads[l], bearing: junctionRoads[l].perceivedBearing,
      stopOnAmbiguousTurns: false)
    let corner = { (road: Int, side: Double) -> WalkView? in
      var finder = IntersectionFinder(limit: Self.walkHops)
      self.traverse(from: junction, road: road, selector: selector, into: &finder)
      guard let first = finder.view else { return nil }
      if PerceivedBearing.angularDeviation(first.angles[first.closestTurn(side)], side) > Self.narrowTurn {
        self.traverse(from: first.junction, road: first.closestTurn(180), selector: selector, into: &finder)
      }
      return finder.view
    }
    guard let left = corner(l, 90),
      Geo.distance(
        network.coordinate(ofJunction: Int32(junction)), network.coordinate(ofJunction: Int32(left.junction)))
        <= Self.triangleRange,
      let right = corner(r, 270)
    else { return false }
    let connector = left.closestTurn(90)
    guard PerceivedBearing.angularDeviation(left.angles[connector], 90) <= Self.narrowTurn else { return false }
    let lanes = { (road: Int) in Double(max(1, self.network.edges[junctionRoads[road].edge].lanes)) }
    let width = (lanes(l) + lanes(r)) * PerceivedBearing.laneWidth + Self.trafficIslandWidth
    let corners = Geo.distance(
      network.coordinate(ofJunction: Int32(left.junction)), network.coordinate(ofJunction: Int32(right.junction)))
    guard corners <= width else { return false }
    var connection = IntersectionFinder(limit: Self.walkHops)
    traverse(from: left.junction, road: connector, selector: selector, into: &connection)
    return connection.view?.junction == right.junction
  }

  /// OSRM's `IsLinkRoad`: the road leads to a road of its name that goes straight on both ways
  /// there (a link between two parallel roads of one name).
  func isLinkRoad(_ junction: Int, _ road: Int) -> Bool {
    let junctionRoads = roads[junction]
    guard let next = nextIntersection(from: junction, road: road) else { return false }
    let there = roads[next.junction]
    // Angles by the roads' perceived bearings, as OSRM's link test reads them.
    let view = WalkView(junction: next.junction, arriving: next.arrivingRoad, bearings: there.map(\.perceivedBearing))
    let deviation = PerceivedBearing.angularDeviation
    let named = there.indices.filter { sameName(junctionRoads[road], there[$0]) }
    guard let along = named.min(by: { deviation(view.angles[$0], 180) < deviation(view.angles[$1], 180) }) else {
      return false
    }
    let alongAngle = view.angles[along]
    let opposite = view.closestTurn(Geo.reverse(alongAngle))
    let oppositeAngle = view.angles[opposite]
    guard opposite != next.arrivingRoad, deviation(deviation(alongAngle, 180), deviation(oppositeAngle, 0)) >= 25
    else { return false }
    let a = network.edges[there[along].edge]
    let b = network.edges[there[opposite].edge]
    return deviation(oppositeAngle, alongAngle) >= 155
      && (there[along].leaving == nil) == (there[opposite].leaving == nil) && !a.isRoundabout
      && !b.isRoundabout && sameName(there[along], there[opposite]) && a.roadClass == b.roadClass
  }
}
