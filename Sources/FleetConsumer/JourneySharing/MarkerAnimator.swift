import FleetCore
import FleetGeometry
import Foundation

/// Moves the vehicle marker smoothly from one reported position to the next along the route,
/// never backwards along it. A plain value: `update` takes a new report, `position(at:)` says
/// where to draw the marker at any moment.
///
/// The marker travels on a reference path that starts where the marker was when the last
/// report came: the stretch of the previous route up to the new position, then the new route.
/// It takes as long as reports are apart (at most `maximumAnimation`), so it lags one report
/// behind and moves at the vehicle's own pace. A report behind the marker holds it still; a
/// report off the route (a reroute, a jump) places it at once.
struct MarkerAnimator: Sendable {
  /// How far from the path a report may be and still count as on it.
  var tolerance: Double = 30
  var maximumAnimation: TimeInterval = 5

  private(set) var path = MeasuredPath([])
  private(set) var from = 0.0
  private(set) var to = 0.0
  private(set) var start = Date.distantPast
  private(set) var duration: TimeInterval = 0
  /// Where the server's route begins on `path`, and that route (for its traffic).
  private(set) var routeOffset = 0.0
  private(set) var route: TrafficRoute?
  private(set) var reportedHeading: Double?
  private var lastReport: Date?

  var hasPosition: Bool { !path.points.isEmpty }

  /// Metres along `path` of the marker at `time`.
  func along(at time: Date) -> Double {
    guard duration > 0 else { return to }
    let progress = min(max(time.timeIntervalSince(start) / duration, 0), 1)
    return from + (to - from) * progress
  }

  /// Where to draw the marker at `time`, and which way it faces.
  func position(at time: Date) -> (coordinate: LatLng, heading: Double?)? {
    guard hasPosition else { return nil }
    let distance = along(at: time)
    return (path.point(at: distance), path.heading(at: distance) ?? reportedHeading)
  }

  /// A new report of the vehicle, received at `now`, with the route from it if there is one.
  mutating func update(vehicle: LatLng, heading: Double?, route newRoute: TrafficRoute?, at now: Date) {
    reportedHeading = heading
    let pace = lastReport.map { min(max(now.timeIntervalSince($0), 0.3), maximumAnimation) } ?? 0
    lastReport = now
    guard hasPosition else {
      rebase(on: [vehicle], route: newRoute, moving: 0, now: now, duration: 0)
      return
    }
    let current = along(at: now)
    if let ahead = path.project(vehicle, from: current, tolerance: tolerance) {
      let travelled = path.slice(from: current, to: ahead.along)
      if let newRoute {
        // The new route starts at the report, which may be a little behind where the marker
        // will stop (noise across the street): it joins the path where the marker stops.
        let joined = MeasuredPath(newRoute.points)
        let join = joined.project(path.point(at: ahead.along), tolerance: tolerance)?.along ?? 0
        rebase(on: travelled, route: newRoute, joiningAt: join, moving: ahead.along - current, now: now, duration: pace)
      } else {
        // Without a new route, what is left of the old one stays ahead of the marker.
        let rest = route.map { _ in TrafficRoute(points: path.slice(from: ahead.along, to: path.length)) }
        rebase(on: travelled, route: rest, moving: ahead.along - current, now: now, duration: pace)
      }
    } else if path.project(vehicle, from: 0, tolerance: tolerance) != nil {
      // Behind the marker: hold it where it is (the next report will be ahead of it).
      rebase(
        on: [path.point(at: current)], route: TrafficRoute(points: path.slice(from: current, to: path.length)),
        moving: 0, now: now, duration: 0)
    } else {
      // Off the route: there is no way along it to animate on.
      rebase(on: [vehicle], route: newRoute, moving: 0, now: now, duration: 0)
    }
  }

  /// The marker at the start of `lead`, moving `distance` metres along it, then `route` from
  /// `join` metres on.
  private mutating func rebase(
    on lead: [LatLng], route next: TrafficRoute?, joiningAt join: Double = 0, moving distance: Double, now: Date,
    duration: TimeInterval
  ) {
    var points = lead
    let leadLength = MeasuredPath(lead).length
    if let next, next.points.count >= 1 {
      let measured = MeasuredPath(next.points)
      let rest = join > 0 ? measured.slice(from: join, to: measured.length) : next.points
      points += rest.first == lead.last ? Array(rest.dropFirst()) : rest
    }
    path = MeasuredPath(points)
    route = next
    // The route's own metre 0 on `path`: its traffic is placed from there.
    routeOffset = leadLength - join
    from = 0
    to = min(max(distance, 0), path.length)
    start = now
    self.duration = to > 0 ? duration : 0
  }
}
