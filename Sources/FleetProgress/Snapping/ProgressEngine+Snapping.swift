import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// Road snapping: each reported fix onto the planned route, a map-matched road or the nearest one.
extension ProgressEngine {
  public func locate(_ vehicle: ResourceName, fixes: [VehicleLocation]) -> [VehicleLocation] {
    slot(vehicle).state.withLock { nav in
      nav.trace.ingest(fixes.compactMap { fix in fix.location.flatMap { p in fix.updateTime.map { (p, $0) } } })
      return fixes.map { snap($0, nav: &nav) }
    }
  }

  /// One fix as the vehicle is believed to have been: on its planned route when it is near it;
  /// where it was snapped last when it has not moved; on the nearest road when no other is
  /// plausible; else map-matched with the fixes before it, else on the nearest road within
  /// reach. A fix no car could have reached is left raw and unsnapped.
  func snap(_ fix: VehicleLocation, nav: inout VehicleNavigation) -> VehicleLocation {
    guard let point = fix.location, let time = fix.updateTime, fix.isRoadSnapped != true else { return fix }
    guard let index = nav.trace.fixes.lastIndex(where: { $0.time == time && $0.point == point }),
      nav.trace.fixes[index].isPlausible
    else {
      var unsnapped = fix
      unsnapped.isRoadSnapped = false
      return unsnapped
    }
    let tolerance = tolerance(fix.latlngAccuracy)
    var snapped: LatLng?
    if let projection = nav.plan?.project(point, tolerance: tolerance) {
      snapped = projection.location
    } else if let last = nav.lastSnap, last.raw.distance(to: point) <= max(2, fix.latlngAccuracy ?? 0) {
      // Standing still (within the fix's accuracy of the last one snapped): where it was.
      snapped = last.snapped
    } else {
      let candidates = (try? routing.nearest(point, count: 4, radius: tolerance)) ?? []
      if let nearest = candidates.first, Self.isUnambiguous(candidates) {
        // One road is plausible: the fixes before it would choose it too, at a fraction of the
        // cost (map matching is the report's dearest step, and most fixes need none).
        snapped = nearest.location
      } else {
        let recent = nav.trace.fixes[...index].filter(\.isPlausible).suffix(5)
        if recent.count >= 2, let matched = try? routing.match(recent.map(\.point)),
          let last = matched.tracepoints.last, let match = last, match.snapped.distance <= tolerance
        {
          snapped = match.snapped.location
        } else if let nearest = candidates.first {
          snapped = nearest.location
        }
      }
      nav.lastSnap = snapped.map { (point, $0) }
    }
    var result = fix
    guard let snapped else {
      result.isRoadSnapped = false
      return result
    }
    if result.rawLocation == nil {
      result.rawLocation = point
      result.rawLocationTime = time
      result.rawLocationAccuracy = fix.latlngAccuracy
      result.rawLocationSensor = fix.locationSensor
    }
    result.location = snapped
    result.isRoadSnapped = true
    return result
  }

  /// Whether the nearest road is the only plausible one for a fix: every other road within reach
  /// is more than twice as far and at least 10 m farther, or meets it where it snapped (the arms
  /// of a junction). Otherwise (a parallel road, a slip road beside the main one) the fixes
  /// before it decide, by map matching.
  static func isUnambiguous(_ candidates: [SnappedPoint]) -> Bool {
    guard let nearest = candidates.first else { return false }
    return candidates.dropFirst().allSatisfy { other in
      other.distance > max(2 * nearest.distance, nearest.distance + 10)
        || other.location.distance(to: nearest.location) <= 3
    }
  }
}
