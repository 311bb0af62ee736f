import FleetCore
import Foundation

/// A polyline measured in metres from its start: points at a distance, headings, projection
/// of a position onto it, and pieces of it.
struct RoutePath: Sendable, Hashable {
  let points: [LatLng]
  /// Metres from the start at each point.
  let along: [Double]

  init(_ points: [LatLng]) {
    self.points = points
    var along = [0.0]
    along.reserveCapacity(points.count)
    for (a, b) in zip(points, points.dropFirst()) { along.append(along.last! + a.distance(to: b)) }
    self.along = points.isEmpty ? [] : along
  }

  var length: Double { along.last ?? 0 }

  /// The segment a distance falls on: the index of its first point.
  func segment(at distance: Double) -> Int {
    guard points.count >= 2 else { return 0 }
    return min(max(0, along.partitioningIndex { $0 > distance } - 1), points.count - 2)
  }

  /// The point `distance` metres from the start (clamped to the ends).
  func point(at distance: Double) -> LatLng {
    guard let first = points.first else { return LatLng(latitude: 0, longitude: 0) }
    guard points.count >= 2 else { return first }
    let d = min(max(distance, 0), length)
    let k = segment(at: d)
    let span = along[k + 1] - along[k]
    let t = span > 0 ? (d - along[k]) / span : 0
    let a = points[k]
    let b = points[k + 1]
    return LatLng(
      latitude: a.latitude + t * (b.latitude - a.latitude), longitude: a.longitude + t * (b.longitude - a.longitude))
  }

  /// Degrees clockwise from north of the way the path goes at `distance`; nil where it has no
  /// length.
  func heading(at distance: Double) -> Double? {
    guard points.count >= 2, length > 0 else { return nil }
    var k = segment(at: min(max(distance, 0), length))
    // A zero-length segment has no direction: use the next one that has.
    while k < points.count - 2, along[k + 1] - along[k] < 0.01 { k += 1 }
    guard along[k + 1] - along[k] >= 0.01 else { return nil }
    return points[k].bearing(to: points[k + 1])
  }

  /// Where `position` falls on the path at or after `from` metres: the distance along the path
  /// of the nearest point within `tolerance` metres of it, on the first stretch that passes
  /// that close (a route may pass the same street twice). Nil when the path does not pass
  /// within `tolerance`.
  func project(_ position: LatLng, from start: Double = 0, tolerance: Double) -> (along: Double, offset: Double)? {
    guard points.count >= 2 else {
      if let only = points.first, only.distance(to: position) <= tolerance { return (0, only.distance(to: position)) }
      return nil
    }
    var best: (along: Double, offset: Double)?
    let cosine = position.localCosine
    for k in segment(at: max(0, start))..<(points.count - 1) {
      let segmentLength = along[k + 1] - along[k]
      // Never before `start` on its own segment.
      let minimum = segmentLength > 0 && along[k] < start ? (start - along[k]) / segmentLength : 0
      let (t, offset) = position.projection(onto: points[k], points[k + 1], minimumFraction: minimum, cosine: cosine)
      guard offset <= tolerance else {
        if best != nil { break }  // The first stretch near the position has ended.
        continue
      }
      if offset < best?.offset ?? .infinity { best = (along[k] + t * segmentLength, offset) }
    }
    return best
  }

  /// The path from `start` to `end` metres, with interpolated end points.
  func slice(from start: Double, to end: Double) -> [LatLng] {
    guard points.count >= 2 else { return points }
    let s = min(max(start, 0), length)
    let e = min(max(end, s), length)
    var result = [point(at: s)]
    for k in points.indices where along[k] > s && along[k] < e { result.append(points[k]) }
    result.append(point(at: e))
    return result
  }
}
