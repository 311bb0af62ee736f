import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// ETAs: the remaining legs from the vehicle's place on its route, at learned speeds.
extension ProgressEngine {
  /// The legs to every remaining waypoint from where the vehicle is on its plan, with durations
  /// from learned traffic and ETAs counted from `now`.
  func legs(of plan: PlannedRoute, now: Date) -> [WaypointProgress] {
    var result: [WaypointProgress] = []
    var elapsed: TimeInterval = 0
    for (i, leg) in plan.legs.enumerated() {
      let points: [LatLng]
      let encoded: String
      let spans: [(span: RouteSpan, metres: Double, firstPoint: Int, lastPoint: Int)]
      if i == 0 {
        (points, spans) = plan.remainderOfFirstLeg()
        encoded = Polyline.encode(points)
      } else {
        points = leg.path.points
        encoded = leg.encodedPoints
        spans = leg.spans.map { ($0, $0.distance, $0.firstPoint, $0.lastPoint) }
      }
      var seconds = 0.0
      var intervals: [SpeedInterval] = []
      let estimates =
        configuration.learnsTraffic
        ? traffic.estimate(spans.map { ($0.span, $0.metres) }, at: now)
        : spans.map {
          ($0.span.distance > 0 ? $0.span.freeFlowDuration * $0.metres / $0.span.distance : 0, TrafficSpeed.normal)
        }
      for ((_, _, first, last), (spanSeconds, speed)) in zip(spans, estimates) {
        seconds += spanSeconds
        if let previous = intervals.last, previous.speed == speed, previous.end >= first {
          intervals[intervals.count - 1].end = max(previous.end, last)
        } else if last > first {
          intervals.append(SpeedInterval(start: first, end: last, speed: speed))
        }
      }
      elapsed += seconds
      let distance = i == 0 ? max(0, leg.distance - plan.offset) : leg.distance
      result.append(
        WaypointProgress(
          waypoint: leg.waypoint, path: points, encodedPath: encoded, traffic: intervals, distanceMeters: distance,
          duration: seconds,
          eta: now.addingTimeInterval(elapsed)))
    }
    return result
  }
}
