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

  /// Where a road read from a junction first reaches an intersection of three roads or more
  /// (OSRM's `IntersectionFinderAccumulator` with its hop limit), read on through joints of two.
  func reach(from junction: Int, road: Int, hops: inout Int) -> (junction: Int, arrivingRoad: Int)? {
    var (at, current) = (junction, road)
    while true {
      let (shape, far, loops) = shapes[at][current]
      guard !loops,
        let arriving = roads[Int(far)].indices.first(where: {
          shapes[Int(far)][$0].far == Int32(at) && shapes[Int(far)][$0].shape.last == shape.first
        })
      else { return nil }
      hops += 1
      let there = roads[Int(far)]
      guard there.count == 2, hops < Self.walkHops else { return (Int(far), arriving) }
      (at, current) = (Int(far), arriving == 0 ? 1 : 0)
    }
  }

  /// OSRM's turn angle at `junction` from road `from` onto road `to` (180 straight on, below to
  /// the right).
  func angle(at junction: Int, from: Int, to: Int) -> Double {
    let roads = self.roads[junction]
    return Geo.angleBetween(Geo.reverse(roads[from].perceivedBearing), roads[to].perceivedBearing)
  }

  /// The road at `junction` whose angle from `from` is closest to `target`.
  func closestTurn(at junction: Int, from: Int, to target: Double) -> (road: Int, angle: Double) {
    let best = roads[junction].indices.min {
      PerceivedBearing.angularDeviation(angle(at: junction, from: from, to: $0), target)
        < PerceivedBearing.angularDeviation(angle(at: junction, from: from, to: $1), target)
    }!
    return (best, angle(at: junction, from: from, to: best))
  }

  /// Where one half of a possible triangle ends: its first intersection, or the next one when
  /// that has no way on near `side` (90 to the right, 270 to the left), past one small side
  /// street.
  func triangleCorner(from junction: Int, road: Int, side: Double) -> (junction: Int, arrivingRoad: Int)? {
    var hops = 0
    guard let first = reach(from: junction, road: road, hops: &hops) else { return nil }
    let turn = closestTurn(at: first.junction, from: first.arrivingRoad, to: side)
    guard PerceivedBearing.angularDeviation(turn.angle, side) > Self.narrowTurn else { return first }
    let straight = closestTurn(at: first.junction, from: first.arrivingRoad, to: 180).road
    return reach(from: first.junction, road: straight, hops: &hops)
  }

  /// OSRM's `IsNarrowTriangle`: both halves soon reach intersections a road's width apart, the
  /// left one turning right into the right one.
  func isNarrowTriangle(_ junction: Int, _ junctionRoads: [JunctionGeometry.Road], _ l: Int, _ r: Int) -> Bool {
    guard let left = triangleCorner(from: junction, road: l, side: 90),
      Geo.distance(
        network.coordinate(ofJunction: Int32(junction)), network.coordinate(ofJunction: Int32(left.junction)))
        <= Self.triangleRange,
      let right = triangleCorner(from: junction, road: r, side: 270)
    else { return false }
    let connector = closestTurn(at: left.junction, from: left.arrivingRoad, to: 90)
    guard PerceivedBearing.angularDeviation(connector.angle, 90) <= Self.narrowTurn else { return false }
    let lanes = { (road: Int) in Double(max(1, self.network.edges[junctionRoads[road].edge].lanes)) }
    let width = (lanes(l) + lanes(r)) * PerceivedBearing.laneWidth + Self.trafficIslandWidth
    let corners = Geo.distance(
      network.coordinate(ofJunction: Int32(left.junction)), network.coordinate(ofJunction: Int32(right.junction)))
    guard corners <= width else { return false }
    var connectHops = 0
    return reach(from: left.junction, road: connector.road, hops: &connectHops)?.junction == right.junction
  }

  /// OSRM's `IsLinkRoad`: the road leads to a road of its name that goes straight on both ways
  /// there (a link between two parallel roads of one name).
  func isLinkRoad(_ junction: Int, _ road: Int) -> Bool {
    let junctionRoads = roads[junction]
    var hops = 0
    guard let next = reach(from: junction, road: road, hops: &hops) else { return false }
    let there = roads[next.junction]
    let named = there.indices.filter { sameName(junctionRoads[road], there[$0]) }
    guard
      let along = named.min(by: {
        PerceivedBearing.angularDeviation(angle(at: next.junction, from: next.arrivingRoad, to: $0), 180)
          < PerceivedBearing.angularDeviation(angle(at: next.junction, from: next.arrivingRoad, to: $1), 180)
      })
    else { return false }
    let alongAngle = angle(at: next.junction, from: next.arrivingRoad, to: along)
    let opposite = closestTurn(
      at: next.junction, from: next.arrivingRoad, to: (alongAngle + 180).truncatingRemainder(dividingBy: 360))
    guard opposite.road != next.arrivingRoad else { return false }
    if PerceivedBearing.angularDeviation(
      PerceivedBearing.angularDeviation(alongAngle, 180), PerceivedBearing.angularDeviation(opposite.angle, 0))
      < 25
    {
      return false
    }
    let a = network.edges[there[along].edge]
    let b = network.edges[there[opposite.road].edge]
    return PerceivedBearing.angularDeviation(opposite.angle, alongAngle) >= 155
      && (there[along].leaving == nil) == (there[opposite.road].leaving == nil) && !a.isRoundabout
      && !b.isRoundabout && sameName(there[along], there[opposite.road]) && a.roadClass == b.roadClass
  }
}
