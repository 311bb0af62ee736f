import Foundation

/// The port to the engine that turns reported positions into progress (FleetProgress, on the
/// road network). `Fleet` calls it outside its lock; it keeps its own per-vehicle state.
public protocol TripProgressEngine: Sendable {
  /// Takes a vehicle's newly reported positions (any order, each stamped with a time) into its
  /// recent trace and returns them as the vehicle is believed to have been: snapped to the road
  /// where the trace allows (`is_road_snapped`, the reported point kept as `raw_location`).
  func locate(_ vehicle: ResourceName, fixes: [VehicleLocation]) -> [VehicleLocation]
  /// The vehicle's progress through its waypoints from its latest trusted position; nil when it
  /// has no position.
  func progress(of vehicle: Vehicle, now: Date) -> VehicleRouteProgress?
  /// Drops what is kept for a deleted vehicle.
  func forget(_ vehicle: ResourceName)
}
