import FleetGeometry
import Foundation

/// A vehicle as fleetd stores it.
public struct Vehicle: Sendable, Hashable, Codable {
  public var provider: String
  public var id: String
  public var state: VehicleState = .unknown
  public var supportedTripTypes: [TripType] = []
  /// IDs of assigned trips that are not finished, in assignment order.
  public var currentTrips: [String] = []
  public var lastLocation: VehicleLocation?
  public var maximumCapacity: Int32 = 0
  public var attributes: [Attribute] = []
  public var category: VehicleCategory = .unknown
  public var licensePlate: LicensePlate?
  public var currentRouteSegment: String = ""
  public var currentRouteSegmentVersion: Date?
  public var currentRouteSegmentEndPoint: TripWaypoint?
  public var remainingDistanceMeters: Int32?
  public var etaToFirstWaypoint: Date?
  public var waypoints: [TripWaypoint] = []
  public var waypointsVersion: Date?
  public var backToBackEnabled = false
  public var navigationStatus: NavigationStatus = .unknown
  public var createTime: Date = .distantPast
  public var updateTime: Date = .distantPast
  /// Store revision; increases with every change (see `FleetStore`).
  public var revision: UInt64 = 0
  /// The distance driven as its positions tell it: what metered fares count.
  public var odometer: Odometer?

  public init(provider: String, id: String) {
    self.provider = provider
    self.id = id
  }

  public var name: ResourceName { ResourceName(provider: provider, kind: .vehicles, id: id) }
}

/// A vehicle's distance driven, summed over its reported positions. A step counts once the
/// vehicle is far enough from where the last counted step ended (`anchor`) that it is movement,
/// not the jitter of a standing car's fixes.
public struct Odometer: Sendable, Hashable, Codable {
  public var meters: Double
  public var anchor: LatLng

  public init(meters: Double, anchor: LatLng) {
    self.meters = meters
    self.anchor = anchor
  }
}

/// What a client may send for a vehicle beyond the stored fields.
public struct VehicleInput: Sendable, Hashable {
  public var vehicle: Vehicle
  /// Positions recorded while offline (input only).
  public var pastLocations: [VehicleLocation] = []
  /// Input only; takes precedence over `eta_to_first_waypoint`.
  public var remainingTimeSeconds: Int32?

  public init(vehicle: Vehicle, pastLocations: [VehicleLocation] = [], remainingTimeSeconds: Int32? = nil) {
    self.vehicle = vehicle
    self.pastLocations = pastLocations
    self.remainingTimeSeconds = remainingTimeSeconds
  }
}
