import FleetCore
import FleetProto
import Foundation

extension VehicleInput {
  /// The client-settable fields of a wire Vehicle.
  init(_ p: Maps_Fleetengine_V1_Vehicle, provider: String, id: String) throws(FleetError) {
    var v = Vehicle(provider: provider, id: id)
    v.state = try domainEnum(p.vehicleState, "vehicle.vehicle_state")
    v.supportedTripTypes = try p.supportedTripTypes.enumerated().map { (i, t) throws(FleetError) in
      try domainEnum(t, "vehicle.supported_trip_types[\(i)]")
    }
    v.lastLocation = p.hasLastLocation ? try VehicleLocation(p.lastLocation, field: "vehicle.last_location") : nil
    v.maximumCapacity = p.maximumCapacity
    v.attributes = try p.attributes.enumerated().map { (i, a) throws(FleetError) in
      try Attribute(a, field: "vehicle.attributes[\(i)]")
    }
    v.category = p.hasVehicleType ? try domainEnum(p.vehicleType.category, "vehicle.vehicle_type.category") : .unknown
    v.licensePlate =
      p.hasLicensePlate
      ? LicensePlate(countryCode: p.licensePlate.countryCode, lastCharacter: p.licensePlate.lastCharacter) : nil
    v.currentRouteSegment = p.currentRouteSegment
    v.currentRouteSegmentEndPoint =
      p.hasCurrentRouteSegmentEndPoint
      ? try TripWaypoint(p.currentRouteSegmentEndPoint, field: "vehicle.current_route_segment_end_point") : nil
    v.remainingDistanceMeters = p.hasRemainingDistanceMeters ? p.remainingDistanceMeters.value : nil
    v.etaToFirstWaypoint = p.hasEtaToFirstWaypoint ? Date(p.etaToFirstWaypoint) : nil
    v.waypoints = try tripWaypoints(p.waypoints, field: "vehicle.waypoints")
    v.backToBackEnabled = p.backToBackEnabled
    v.navigationStatus = try domainEnum(p.navigationStatus, "vehicle.navigation_status")
    let past = try p.pastLocations.enumerated().map { (i, l) throws(FleetError) in
      try VehicleLocation(l, field: "vehicle.past_locations[\(i)]")
    }
    self.init(
      vehicle: v, pastLocations: past,
      remainingTimeSeconds: p.hasRemainingTimeSeconds ? p.remainingTimeSeconds.value : nil)
  }
}

extension Maps_Fleetengine_V1_Vehicle {
  /// The wire Vehicle for a response. Input-only fields are never returned.
  init(_ v: Vehicle) { self.init(v, fields: nil) }

  /// The wire Vehicle with only the top-level `fields` named (proto names; nil, all of them):
  /// built field by field, since a report's acknowledgement wants one or two of them, thousands
  /// of times a second.
  init(_ v: Vehicle, fields: Set<String>?) {
    self.init()
    func wanted(_ field: String) -> Bool { fields?.contains(field) ?? true }
    if wanted("name") { name = v.name.description }
    if wanted("vehicle_state") { vehicleState = wireEnum(v.state) }
    if wanted("supported_trip_types") { supportedTripTypes = v.supportedTripTypes.map(wireEnum) }
    if wanted("current_trips") { currentTrips = v.currentTrips }
    if wanted("last_location"), let location = v.lastLocation { lastLocation = location.proto }
    if wanted("maximum_capacity") { maximumCapacity = v.maximumCapacity }
    if wanted("attributes") { attributes = v.attributes.map(\.vehicleProto) }
    if wanted("vehicle_type") { vehicleType.category = wireEnum(v.category) }
    if wanted("license_plate"), let plate = v.licensePlate {
      licensePlate.countryCode = plate.countryCode
      licensePlate.lastCharacter = plate.lastCharacter
    }
    if wanted("current_route_segment") { currentRouteSegment = v.currentRouteSegment }
    if wanted("current_route_segment_version"), let version = v.currentRouteSegmentVersion {
      currentRouteSegmentVersion = version.proto
    }
    if wanted("current_route_segment_end_point"), let end = v.currentRouteSegmentEndPoint {
      currentRouteSegmentEndPoint = end.proto
    }
    if wanted("remaining_distance_meters"), let meters = v.remainingDistanceMeters {
      remainingDistanceMeters = .init(meters)
    }
    if wanted("eta_to_first_waypoint"), let eta = v.etaToFirstWaypoint { etaToFirstWaypoint = eta.proto }
    if wanted("waypoints") { waypoints = v.waypoints.map(\.proto) }
    if wanted("waypoints_version"), let version = v.waypointsVersion { waypointsVersion = version.proto }
    if wanted("back_to_back_enabled") { backToBackEnabled = v.backToBackEnabled }
    if wanted("navigation_status") { navigationStatus = wireEnum(v.navigationStatus) }
  }
}
