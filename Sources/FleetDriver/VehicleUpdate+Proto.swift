import FleetCore
import FleetGeometry
import FleetPositioning
import FleetProto
import Foundation
import SwiftProtobuf

extension Maps_Fleetengine_V1_UpdateVehicleRequest {
  /// The request for an update; its mask names exactly the fields it sets.
  init(_ update: VehicleUpdate) {
    self.init()
    name = update.vehicleName
    if let state = update.vehicleState { vehicle.vehicleState = state == .online ? .online : .offline }
    if let location = update.location { vehicle.lastLocation = .init(location) }
    vehicle.pastLocations = update.pastLocations.map(Maps_Fleetengine_V1_VehicleLocation.init)
    if let route = update.route {
      vehicle.currentRouteSegment = Polyline.encode(route.path)
      if route.remainingDistanceMeters.isFinite {
        vehicle.remainingDistanceMeters = .init(Int32(clamping: Int(max(0, route.remainingDistanceMeters).rounded())))
      }
      vehicle.remainingTimeSeconds = .init(Int32(clamping: route.remainingTime.components.seconds))
    }
    updateMask.paths = update.updateMask
  }
}

extension Maps_Fleetengine_V1_VehicleLocation {
  /// A fix as Fleet Engine's Driver SDK reports it: the road-snapped position as `location`
  /// (sensor ROAD_SNAPPED_LOCATION_PROVIDER) with the measured one as `raw_location`.
  init(_ fix: LocationFix) {
    self.init()
    location = .init(fix.coordinate)
    // A source may report NaN or infinity (a bad track file, a confused receiver): such a
    // value is left out rather than sent, or trapping on the conversion to an integer.
    if let accuracy = finite(fix.horizontalAccuracy) { latlngAccuracy = .init(accuracy) }
    if let heading = finite(fix.heading) {
      let degrees = heading.truncatingRemainder(dividingBy: 360)
      self.heading = .init(Int32((degrees < 0 ? degrees + 360 : degrees).rounded()) % 360)
    }
    if let accuracy = finite(fix.headingAccuracy) { headingAccuracy = .init(accuracy) }
    if let altitude = finite(fix.altitude) { self.altitude = .init(altitude) }
    if let accuracy = finite(fix.verticalAccuracy) { altitudeAccuracy = .init(accuracy) }
    if let speed = finite(fix.speed) { self.speed = .init(speed) }
    if let accuracy = finite(fix.speedAccuracy) { speedAccuracy = .init(accuracy) }
    updateTime = .init(date: fix.time)
    locationSensor = Maps_Fleetengine_V1_LocationSensor(rawValue: fix.sensor.rawValue) ?? .unknownSensor
    if let raw = fix.rawCoordinate {
      isRoadSnapped = .init(true)
      rawLocation = .init(raw)
      rawLocationTime = .init(date: fix.time)
      rawLocationSensor =
        Maps_Fleetengine_V1_LocationSensor(rawValue: (fix.rawSensor ?? .gps).rawValue) ?? .unknownSensor
      if let accuracy = finite(fix.horizontalAccuracy) { rawLocationAccuracy = .init(accuracy) }
    }
  }
}

func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }

extension Google_Type_LatLng {
  init(_ point: LatLng) {
    self.init()
    latitude = point.latitude
    longitude = point.longitude
  }
}

extension ReportedVehicle {
  init(_ vehicle: Maps_Fleetengine_V1_Vehicle) {
    state = vehicle.vehicleState == .online ? .online : vehicle.vehicleState == .offline ? .offline : .unknown
    waypoints = vehicle.waypoints.map { waypoint in
      Waypoint(
        tripID: waypoint.tripID, type: WaypointType(rawValue: waypoint.waypointType.rawValue) ?? .unknown,
        location: LatLng(latitude: waypoint.location.point.latitude, longitude: waypoint.location.point.longitude))
    }
    currentTrips = vehicle.currentTrips
    currentRouteSegment = vehicle.currentRouteSegment
    remainingDistanceMeters = vehicle.hasRemainingDistanceMeters ? Int(vehicle.remainingDistanceMeters.value) : nil
    etaToFirstWaypoint = vehicle.hasEtaToFirstWaypoint ? vehicle.etaToFirstWaypoint.date : nil
    lastLocation =
      vehicle.hasLastLocation
      ? LatLng(latitude: vehicle.lastLocation.location.latitude, longitude: vehicle.lastLocation.location.longitude)
      : nil
  }
}
