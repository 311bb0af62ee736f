/// A polyline measured in metres from its start: the point at a distance, the heading there, the
/// projection of a position onto it, and pieces of it. fleetd's trip progress and the Consumer
/// SDK's journey-sharing marker both read routes through it.
public struct MeasuredPath: Sendable, Hashable {
  public let points: [LatLng]
  /// Metres from the start at each point.
  public let along: [Double]

  /// Measures `points` along great circles. With `length` (a router's own measure of the same
  /// line, whose earth model differs from the great circle's by up to about 0.5 %) the metres
  /// are scaled to it, so that distances read on the path agree with the router's.
  public init(_ points: [LatLng], length: Double? = nil) {
    self.points = points
    var along = [0.0]
    along.reserveCapacity(points.count)
    for (a, b) in zip(points, points.dropFirst()) { along.append(along.last! + a.distance(to: b)) }
    if let length, let measured = along.last, measured > 0, length > 0 {
      let scale = length / measured
      along = along.map { $0 * scale }
    }
    self.along = points.isEmpty ? [] : along
  }

  public var length: Double { along.last ?? 0 }

  /// The segment a distance falls on: the index of its first point.
  public func segment(at distance: Double) -> Int {
    guard points.count >= 2 else { return 0 }
    return min(max(0, along.partitioningIndex { $0 > distance } - 1), points.count - 2)
  }

  /// The point `distance` metres from the start (clamped to the ends).
  public func point(at distance: Double) -> LatLng {
    guard let first = points.first else { return LatLng(latitude: 0, longitude: 0) }
    guard points.count >= 2 else { return first }
    let d = min(max(distance, 0), length)
    let k = segment(at: d)
    let span = along[k + 1] - along[k]
    return Self.interpolate(points[k], points[k + 1], span > 0 ? (d - along[k]) / span : 0)
  }

  /// Degrees clockwise from north of the way the path goes at `distance`; nil where it has no
  /// length.
  public func heading(at distance: Double) -> Double? {
    guard points.count >= 2, length > 0 else { return nil }
    var k = segment(at: min(max(distance, 0), length))
    // A zero-length segment has no direction: use the next one that has.
    while k < points.count - 2, along[k + 1] - along[k] < 0.01 { k += 1 }
    guard along[k + 1] - along[k] >= 0.01 else { return nil }
    return points[k].bearing(to: points[k + 1])
  }

  /// Where a position falls on the path.
  public struct Projection: Sendable, Hashable {
    /// Metres from the path's start.
    public var along: Double
    /// The point of the path.
    public var location: LatLng
    /// Metres from the position to `location`.
    public var distance: Double
  }

  /// The point nearest to `position` at or after `start` metres, within `tolerance` metres of it,
  /// on the first stretch of the path that passes that close: a route may pass the same street
  /// twice, and is read in the order it is driven. Nil when the path does not pass within
  /// `tolerance`.
  public func project(_ position: LatLng, from start: Double = 0, tolerance: Double) -> Projection? {
    guard points.count >= 2 else {
      guard let only = points.first, only.distance(to: position) <= tolerance else { return nil }
      return Projection(along: 0, location: only, distance: only.distance(to: position))
    }
    var best: Projection?
    let cosine = position.localCosine
    for k in segment(at: max(0, start))..<(points.count - 1) {
      let segmentLength = along[k + 1] - along[k]
      // Never before `start` on its own segment.
      let minimum = segmentLength > 0 && along[k] < start ? (start - along[k]) / segmentLength : 0
      let (t, distance) = position.projection(onto: points[k], points[k + 1], minimumFraction: minimum, cosine: cosine)
      guard distance <= tolerance else {
        if best != nil { break }  // The first stretch near the position has ended.
        continue
      }
      if distance < best?.distance ?? .infinity {
        best = Projection(
          along: along[k] + t * segmentLength, location: Self.interpolate(points[k], points[k + 1], t),
          distance: distance)
      }
    }
    return best
  }

  /// The path from `start` to `end` metres, with interpolated end points.
  public func slice(from start: Double, to end: Double) -> [LatLng] {
    guard points.count >= 2 else { return points }
    let s = min(max(start, 0), length)
    let e = min(max(end, s), length)
    var result = [point(at: s)]
    for k in points.indices where along[k] > s && along[k] < e { result.append(points[k]) }
    result.append(point(at: e))
    return result
  }

  static func interpolate(_ a: LatLng, _ b: LatLng, _ t: Double) -> LatLng {
    LatLng(
      latitude: a.latitude + t * (b.latitude - a.latitude), longitude: a.longitude + t * (b.longitude - a.longitude))
  }
}
