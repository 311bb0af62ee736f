import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// The route a vehicle is following through its remaining waypoints, and how far along its
/// first leg it has come. Progress along it is read by projecting positions onto it; a new
/// route is planned only when the waypoints change or the vehicle leaves it.
struct PlannedRoute: Sendable {
  struct Leg: Sendable {
    var waypoint: TripWaypoint
    /// The leg's shape, in the router's metres (so that distances left agree with the route's
    /// and with its spans' starts).
    var path: MeasuredPath
    /// The shape as an encoded polyline: the legs after the first are sent unchanged many times.
    var encodedPoints: String
    var spans: [RouteSpan]
    /// Metres from the leg's start where each span starts.
    var spanStarts: [Double]
    var distance: Double { path.length }
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
      var starts: [Double] = []
      var metres = 0.0
      for span in leg.spans {
        starts.append(metres)
        metres += span.distance
      }
      return Leg(
        waypoint: waypoint, path: MeasuredPath(leg.geometry, length: leg.distance),
        encodedPoints: Polyline.encode(leg.geometry), spans: leg.spans, spanStarts: starts)
    }
  }

  /// Where `point` falls on the first leg, within `tolerance`: of the stretches of it that pass
  /// that close and are not more than `tolerance` behind the vehicle, the first one, and within
  /// it the nearest point.
  func project(_ point: LatLng, tolerance: Double) -> MeasuredPath.Projection? {
    guard let leg = legs.first, leg.path.points.count >= 2 else { return nil }
    return leg.path.project(point, from: offset - tolerance, tolerance: tolerance)
  }

  /// The first leg from `offset` on: its remaining shape (starting at the vehicle's place on it)
  /// and the parts of its spans still ahead, each with the metres left of it.
  func remainderOfFirstLeg() -> (
    points: [LatLng], spans: [(span: RouteSpan, metres: Double, firstPoint: Int, lastPoint: Int)]
  ) {
    guard let leg = legs.first else { return ([], []) }
    let offset = min(max(0, self.offset), leg.distance)
    let shape = leg.path.points
    // The first point strictly ahead of the vehicle.
    var next = leg.path.along.partitioningIndex { $0 > offset }
    if next == 0 { next = 1 }
    var points = [leg.path.point(at: offset)]
    points.append(contentsOf: shape[min(next, shape.count)...])
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
}
