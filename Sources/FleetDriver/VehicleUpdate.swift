import FleetCore
import FleetGeometry
import FleetPositioning
import Foundation

/// One UpdateVehicle the reporter made, as its listeners see it.
public struct VehicleUpdate: Sendable, Hashable {
  public var vehicleName: String
  /// The position sent as `last_location`.
  public var location: LocationFix?
  /// Positions from an outage, sent as `past_locations`, oldest first.
  public var pastLocations: [LocationFix]
  public var vehicleState: VehicleState?
  /// Route progress sent with the location, when the navigation led to the next waypoint.
  public var route: NavigationProgress?
  /// The fields the update set (never empty).
  public var updateMask: [String]
  /// The vehicle as fleetd answered (nil when the update failed).
  public var vehicle: ReportedVehicle?
}

/// The vehicle as fleetd holds it after an update: what a driver app needs from the answer, for a
/// rides vehicle or a delivery vehicle.
public struct ReportedVehicle: Sendable, Hashable {
  public struct Waypoint: Sendable, Hashable {
    public var tripID: String
    public var type: WaypointType
    public var location: LatLng
  }

  public var state: VehicleState
  /// The vehicle's remaining waypoints, in the order it should drive them.
  public var waypoints: [Waypoint]
  public var currentTrips: [String]
  /// The server's route to the first waypoint (encoded polyline), when it computes one.
  public var currentRouteSegment: String
  public var remainingDistanceMeters: Int?
  public var etaToFirstWaypoint: Date?
  public var lastLocation: LatLng?
  /// A delivery vehicle's remaining stops, in order (empty for a rides vehicle, which has
  /// waypoints instead).
  public var stops: [VehicleStop] = []

  /// Where the vehicle goes next: its first waypoint or its first stop.
  public var nextDestination: LatLng? { waypoints.first?.location ?? stops.first?.plannedLocation }
}

/// Told of every update the reporter makes. Held weakly: a listener that goes away simply
/// stops being told. Called on the reporter's task, one update at a time, in order.
public protocol VehicleReporterListener: AnyObject, Sendable {
  func vehicleReporter(_ reporter: VehicleReporter, didSucceed update: VehicleUpdate)
  func vehicleReporter(_ reporter: VehicleReporter, didFail update: VehicleUpdate, with error: FleetClientError)
}

extension VehicleReporterListener {
  public func vehicleReporter(_ reporter: VehicleReporter, didSucceed update: VehicleUpdate) {}
  public func vehicleReporter(_ reporter: VehicleReporter, didFail update: VehicleUpdate, with error: FleetClientError)
  {}
}
