import Foundation

/// OSRM's last two tests of its mergeable-road detector (`HaveSameDirection` and
/// `IsCircularShape`): two halves are one road when, followed 120 m by name through the
/// intersections on their way, they run parallel and close, unless together they close a circle
/// (a ring read as a roundabout is not a dual carriageway).
extension RoadMerging {
  /// OSRM's `distance_to_extract`: how far both tests follow a road.
  static let directionReading = 120.0
  /// OSRM's `MINIMUM_LENGTH_FOR_PARALLEL_DETECTION`: a road read no farther is too short to tell.
  static let minimumParallelLength = 40.0
  /// OSRM's `MAXIMAL_ALLOWED_SEPARATION_WIDTH`, beyond the roads' own lanes.
  static let maximumSeparation = 12.0
  /// Area over squared perimeter from which a closed shape is a circle (OSRM's lower bound).
  static let circularRatio = 0.85 / (4 * Double.pi)

  /// OSRM's `HaveSameDirection`: both halves, read 120 m, run parallel (their first thirds left
  /// out unless they meet again) and their middles lie within the roads' width plus 12 m.
  func haveSameDirection(_ junction: Int, _ roads: [JunctionGeometry.Road], _ l: Int, _ r: Int) -> Bool {
    let bearing = roads[l].perceivedBearing
    let (leftLength, leftLine) = along(from: junction, road: l, bearing: bearing, stopOnAmbiguousTurns: true)
    guard leftLength > Self.minimumParallelLength else { return false }
    let (rightLength, rightLine) = along(from: junction, road: r, bearing: bearing, stopOnAmbiguousTurns: true)
    guard rightLength > Self.minimumParallelLength else { return false }
    let meet = leftLine.last == rightLine.last
    var left = PerceivedBearing.sampled(leftLine, maximumLength: Self.directionReading, rate: 5)
    var right = PerceivedBearing.sampled(rightLine, maximumLength: Self.directionReading, rate: 5)
    guard left.count >= 3, right.count >= 3 else { return false }
    if !meet {
      left.removeFirst(left.count / 3)
      right.removeFirst(right.count / 3)
    }
    guard areParallel(left, right) else { return false }
    let distance = min(closestDistance(left[left.count / 2], right), closestDistance(right[right.count / 2], left))
    let lanes = (network.edges[roads[l].edge].lanes, network.edges[roads[r].edge].lanes)
    let width = 0.5 * Double(max(1, Int(lanes.0)) + max(1, Int(lanes.1))) * PerceivedBearing.laneWidth
    return distance <= width + Self.maximumSeparation
  }

  /// OSRM's `IsCircularShape`: both halves, read 120 m, end at one point and the left one closes a
  /// shape whose area is nearly a circle's of its perimeter.
  func isCircularShape(_ junction: Int, _ roads: [JunctionGeometry.Road], _ l: Int, _ r: Int) -> Bool {
    let bearing = roads[l].perceivedBearing
    let (perimeter, left) = along(from: junction, road: l, bearing: bearing, stopOnAmbiguousTurns: false)
    let (_, right) = along(from: junction, road: r, bearing: bearing, stopOnAmbiguousTurns: false)
    guard left.last == right.last, left.first == left.last, perimeter > 0 else { return false }
    return abs(Self.area(left)) / (perimeter * perimeter) >= Self.circularRatio
  }

  /// A road read from `junction` for up to 120 m, on by its name (`traverse`), with the bearing of
  /// the left half as OSRM's tests set it.
  func along(from junction: Int, road: Int, bearing: Double, stopOnAmbiguousTurns: Bool) -> (
    length: Double, line: [FixedCoordinate]
  ) {
    var accumulator = LineAccumulator(limit: Self.directionReading)
    let selector = selector(
      following: roads[junction][road], bearing: bearing, stopOnAmbiguousTurns: stopOnAmbiguousTurns)
    traverse(from: junction, road: road, selector: selector, into: &accumulator)
    return (accumulator.length, accumulator.line)
  }

  /// OSRM's `computeArea` of a closed line: the shoelace sum over strips down to its southernmost
  /// latitude, in square metres (signed by the line's direction).
  static func area(_ polygon: [FixedCoordinate]) -> Double {
    guard let south = polygon.map(\.latitudeE6).min() else { return 0 }
    let base = { (point: FixedCoordinate) in FixedCoordinate(latitudeE6: south, longitudeE6: point.longitudeE6) }
    var area = 0.0
    for (a, b) in zip(polygon, polygon.dropFirst()) {
      let strip = Geo.distance(base(a), base(b)) * (Geo.distance(base(a), a) + Geo.distance(base(b), b))
      area += b.longitudeE6 >= a.longitudeE6 ? strip : -strip
    }
    return area / 2
  }
}
