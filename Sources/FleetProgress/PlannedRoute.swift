import FleetCore
import FleetRouting
import Foundation

/// The route a vehicle is following through its remaining waypoints, and how far along its
/// first leg it has come. Progress along it is read by projecting positions onto it; a new
/// route is planned only when the waypoints change or the vehicle leaves it.
struct PlannedRoute: Sendable {
  struct Leg: Sendable {
    var waypoint: TripWaypoint
    var points: [LatLng]
    /// `points` as an encoded polyline: the legs after the first are sent unchanged many times.
    var encodedPoints: String
    /// Metres from the leg's start at each point.
    var along: [Double]
    var spans: [RouteSpan]
    /// Metres from the leg's start where each span starts.
    var spanStarts: [Double]
    var distance: Double { along.last ?? 0 }
  }

  /// Where a position falls on the first leg.
  struct Projection: Sendable {
    var offset: Double
    var location: LatLng
    /// Metres from the position to the route.
    var distance: Double
  }

  var waypoints: [TripWaypoint]
  var legs: [Leg]
  var plannedAt: Date
  /// The position it was planned from: when that is off the road, the route starts at the
  /// nearest road instead, and the same position must not count as leaving the route.
  var origin: LatLng
  /// Metres driven along the first leg; only grows.
  var offset: Double = 0

  init(route: Route, from origin: LatLng, waypoints: [TripWaypoint], at time: Date) {
    self.waypoints = waypoints
    self.origin = origin
    plannedAt = time
    legs = zip(waypoints, route.legs).map { waypoint, leg in
      var along = [0.0]
      for (a, b) in zip(leg.geometry, leg.geometry.dropFirst()) { along.append(along.last! + a.distance(to: b)) }
      // In the router's metres (its earth model differs from the great circle's by up to
      // ~0.5 %), so that distances left agree with the route's and with its spans' starts.
      if let measured = along.last, measured > 0, leg.distance > 0 {
        let scale = leg.distance / measured
        along = along.map { $0 * scale }
      }
      var starts: [Double] = []
      var metres = 0.0
      for span in leg.spans {
        starts.append(metres)
        metres += span.distance
      }
      return Leg(
        waypoint: waypoint, points: leg.geometry, encodedPoints: Polyline.encode(leg.geometry), along: along,
        spans: leg.spans, spanStarts: starts)
    }
  }

  /// The point of the first leg nearest to `point`, within `tolerance`. The route is read in the
  /// order it is driven: of the stretches of it that pass within `tolerance` and are not behind
  /// the vehicle, the first one wins (a route may pass the same street twice), and within that
  /// stretch the nearest point.
  func project(_ point: LatLng, tolerance: Double) -> Projection? {
    guard let leg = legs.first, leg.points.count >= 2 else { return nil }
    var best: Projection?
    let cosine = point.localCosine
    // A stretch ending more than `tolerance` behind the vehicle can never qualify: start after them.
    let behind = self.offset - tolerance
    let first = max(0, leg.along.partitioningIndex { $0 >= behind } - 1)
    for k in first..<(leg.points.count - 1) {
      let a = leg.points[k]
      let b = leg.points[k + 1]
      let (t, distance) = point.projection(onto: a, b, cosine: cosine)
      let offset = leg.along[k] + t * (leg.along[k + 1] - leg.along[k])
      guard distance <= tolerance, offset >= behind else {
        // The first stretch near the position has ended.
        if best != nil { break }
        continue
      }
      if distance < best?.distance ?? .infinity {
        best = Projection(
          offset: offset,
          location: LatLng(
            latitude: a.latitude + t * (b.latitude - a.latitude),
            longitude: a.longitude + t * (b.longitude - a.longitude)),
          distance: distance)
      }
    }
    return best
  }

  /// The first leg from `offset` on: its remaining shape (starting at the vehicle's place on it)
  /// and the parts of its spans still ahead, each with the metres left of it.
  func remainderOfFirstLeg() -> (
    points: [LatLng], spans: [(span: RouteSpan, metres: Double, firstPoint: Int, lastPoint: Int)]
  ) {
    guard let leg = legs.first else { return ([], []) }
    let offset = min(max(0, self.offset), leg.distance)
    // The first point strictly ahead of the vehicle.
    var next = leg.along.partitioningIndex { $0 > offset }
    if next == 0 { next = 1 }
    var points = [location(on: leg, at: offset)]
    points.append(contentsOf: leg.points[min(next, leg.points.count)...])
    if points.count == 1 { points.append(points[0]) }
    // Old point index k becomes k - next + 1 in the trimmed shape.
    var spans: [(span: RouteSpan, metres: Double, firstPoint: Int, lastPoint: Int)] = []
    for (span, start) in zip(leg.spans, leg.spanStarts) where start + span.distance > offset {
      let metres = start + span.distance - max(start, offset)
      spans.append(
        (span, metres, max(0, span.firstPoint - next + 1), max(0, min(points.count - 1, span.lastPoint - next + 1))))
    }
    return (points, spans)
  }

  /// The spans driven between two offsets on the first leg, with the metres driven on each.
  func spansDriven(from start: Double, to end: Double) -> [(span: RouteSpan, metres: Double)] {
    guard let leg = legs.first, end > start else { return [] }
    var driven: [(span: RouteSpan, metres: Double)] = []
    for (span, spanStart) in zip(leg.spans, leg.spanStarts) {
      let overlap = min(end, spanStart + span.distance) - max(start, spanStart)
      if overlap > 0 { driven.append((span, overlap)) }
    }
    return driven
  }

  func location(on leg: Leg, at offset: Double) -> LatLng {
    let k = leg.along.partitioningIndex { $0 > offset } - 1
    guard k >= 0, k + 1 < leg.points.count else {
      return leg.points.last ?? LatLng(latitude: 0, longitude: 0)
    }
    let length = leg.along[k + 1] - leg.along[k]
    let t = length > 0 ? (offset - leg.along[k]) / length : 0
    let a = leg.points[k]
    let b = leg.points[k + 1]
    return LatLng(
      latitude: a.latitude + t * (b.latitude - a.latitude), longitude: a.longitude + t * (b.longitude - a.longitude))
  }
}
