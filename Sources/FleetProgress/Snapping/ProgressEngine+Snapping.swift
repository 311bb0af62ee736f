import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// Road snapping: each reported fix onto the planned route, a map-matched road or the nearest one.
extension ProgressEngine {
  public func locate(_ vehicle: ResourceName, fixes: [VehicleLocation]) -> [VehicleLocation] {
    slot(vehicle).state.withLock { nav in
      nav.trace.ingest(fixes.compactMap { fix in fix.location.flatMap { p in fix.updateTime.map { (p, $0) } } })
      return fixes.map { snap($0, nav: nav) }
    }
  }

  /// One fix as the vehicle is believed to have been: on its planned route when it is near it,
  /// else map-matched with the fixes before it, else on the nearest road within reach. A fix no
  /// car could have reached is left raw and unsnapped.
  func snap(_ fix: VehicleLocation, nav: VehicleNavigation) -> VehicleLocation {
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
    } else {
      let recent = nav.trace.fixes[...index].filter(\.isPlausible).suffix(5)
      if recent.count >= 2, let matched = try? routing.match(recent.map(\.point)), let last = matched.tracepoints.last,
        let match = last, match.snapped.distance <= tolerance
      {
        snapped = match.snapped.location
      } else if let nearest = try? routing.nearest(point, radius: tolerance).first {
        snapped = nearest.location
      }
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
}
