import FleetCore
import FleetProto
import SwiftProtobuf

/// AIP-157 partial responses for the vehicles a report stream's acknowledgements carry: only
/// the top-level fields named are sent. A driver following its waypoints need not have the
/// route and position it has just reported sent back with every acknowledgement.
struct VehicleReadMask: Sendable {
  /// The fields named; nil sends every field.
  let fields: Set<String>?

  /// The Vehicle fields a response carries, by their proto names.
  static let returned: Set<String> = [
    "name", "vehicle_state", "supported_trip_types", "current_trips", "last_location", "maximum_capacity",
    "attributes", "vehicle_type", "license_plate", "current_route_segment", "current_route_segment_version",
    "current_route_segment_end_point", "remaining_distance_meters", "eta_to_first_waypoint", "waypoints",
    "waypoints_version", "back_to_back_enabled", "navigation_status",
  ]

  private init(fields: Set<String>?) { self.fields = fields }

  /// What a report stream's (or batch's) acknowledgements carry of each vehicle, from its
  /// `return_vehicles` and `read_mask`: nil when no vehicle.
  static func acknowledgements(of request: Fleetkit_V1_ReportLocationsRequest) throws(FleetError) -> VehicleReadMask? {
    guard request.returnVehicles else {
      guard request.readMask.paths.isEmpty else {
        throw .invalid("read_mask: set only with return_vehicles, as acknowledgements carry no vehicle without it")
      }
      return nil
    }
    return try VehicleReadMask(request.readMask, field: "read_mask")
  }

  init(_ mask: Google_Protobuf_FieldMask, field: String) throws(FleetError) {
    let paths = FieldPaths.split(mask.paths)
    guard !paths.isEmpty else {
      self.init(fields: nil)
      return
    }
    for path in paths where !Self.returned.contains(path) {
      throw .invalid(
        "\(field): '\(path)' is not a field of a returned vehicle; name top-level fields such as waypoints, current_trips or vehicle_state"
      )
    }
    self.init(fields: Set(paths))
  }

  /// The wire vehicle with only the fields named.
  func apply(to vehicle: Vehicle) -> Maps_Fleetengine_V1_Vehicle {
    Maps_Fleetengine_V1_Vehicle(vehicle, fields: fields)
  }
}
