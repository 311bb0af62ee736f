import FleetGeometry
import Foundation

/// How SearchVehicles orders its matches (Fleet Engine's `VehicleMatchOrder`; raw values are
/// the wire numbers).
public enum VehicleMatchOrder: Int, Sendable, Hashable, CaseIterable {
  case unknown = 0
  /// Driving time to the pickup.
  case pickupPointETA = 1
  /// Driving distance to the pickup.
  case pickupPointDistance = 2
  /// Driving time to the drop-off, through every stop before it.
  case dropoffPointETA = 3
  /// Straight-line distance from the vehicle to the pickup.
  case pickupPointStraightDistance = 4
  /// `MatchCostWeights`: a weighting of the pickup ETA and the straight-line distance.
  case cost = 5

  public var wireName: String {
    switch self {
    case .unknown: "UNKNOWN_VEHICLE_MATCH_ORDER"
    case .pickupPointETA: "PICKUP_POINT_ETA"
    case .pickupPointDistance: "PICKUP_POINT_DISTANCE"
    case .dropoffPointETA: "DROPOFF_POINT_ETA"
    case .pickupPointStraightDistance: "PICKUP_POINT_STRAIGHT_DISTANCE"
    case .cost: "COST"
    }
  }
}

/// Which vehicles with trips a search may match (Fleet Engine's `CurrentTripsPresent`).
public enum CurrentTripsPresent: Int, Sendable, Hashable, CaseIterable {
  /// `include_back_to_back` decides.
  case unspecified = 0
  /// Only vehicles without trips.
  case none = 1
  /// Vehicles with at most 5 current trips and 10 waypoints too.
  case any = 2
}

/// How a matched vehicle would serve the trip (Fleet Engine's `VehicleMatchType`).
public enum VehicleMatchType: Int, Sendable, Hashable, CaseIterable {
  case unknown = 0
  /// No trip assigned: straight to the pickup.
  case exclusive = 1
  /// Finishes its current trips first.
  case backToBack = 2
  /// Picks the rider up between its other riders' stops.
  case carpool = 3
  /// A shared ride that starts after the vehicle's current stops.
  case carpoolBackToBack = 4
}

/// The COST order's weights: cost = `secondsOfETA` × pickup ETA in seconds
/// + `metresOfStraightLine` × straight-line metres to the pickup. Lower is better.
public struct MatchCostWeights: Sendable, Hashable {
  public var secondsOfETA: Double
  public var metresOfStraightLine: Double

  /// One point per second of driving and one per 10 m as the crow flies: a car five minutes
  /// away beats one two minutes away only if it is 1.8 km nearer in a straight line.
  public init(secondsOfETA: Double = 1, metresOfStraightLine: Double = 0.1) {
    self.secondsOfETA = secondsOfETA
    self.metresOfStraightLine = metresOfStraightLine
  }
}

/// A SearchVehicles request in domain terms.
public struct VehicleSearch: Sendable, Hashable {
  public var pickupPoint: TerminalLocation?
  public var dropoffPoint: TerminalLocation?
  public var pickupRadiusMeters: Int32 = 0
  /// Fleet Engine's rule on `pickup_radius_meters`, which the dispatcher's radius keeps too.
  public static let pickupRadii: ClosedRange<Int32> = 400...10_000
  public var count: Int32 = 0
  public var minimumCapacity: Int32 = 0
  public var tripTypes: [TripType] = []
  /// Default five minutes (Fleet Engine).
  public var maximumStaleness: Duration?
  /// The categories of `vehicle_types`.
  public var vehicleTypes: [VehicleCategory] = []
  public var requiredAttributes: [Attribute] = []
  public var requiredOneOfAttributes: [[Attribute]] = []
  public var requiredOneOfAttributeSets: [[Attribute]] = []
  public var filter = ""
  public var orderBy: VehicleMatchOrder = .unknown
  public var includeBackToBack = false
  /// The trip being matched: its own vehicle's stops for it are not counted twice.
  public var tripID = ""
  public var currentTripsPresent: CurrentTripsPresent = .unspecified

  public init() {}
}

/// A stop of a match's route (Fleet Engine's `Waypoint` in a `VehicleMatch`).
public struct MatchWaypoint: Sendable, Hashable {
  public var location: LatLng
  public var eta: Date?

  public init(location: LatLng, eta: Date?) {
    self.location = location
    self.eta = eta
  }
}

/// One vehicle that can serve the searched trip, with its estimates.
public struct VehicleMatch: Sendable, Hashable {
  public var vehicle: Vehicle
  public var pickupETA: Date?
  /// Driving metres to the pickup through the stops before it, plus the pickup's distance
  /// from its road.
  public var pickupDistanceMeters: Int32?
  public var pickupStraightLineDistanceMeters: Int32
  public var dropoffETA: Date?
  /// Driving metres from the pickup to the drop-off alone.
  public var pickupToDropoffDistanceMeters: Int32?
  public var tripType: TripType
  /// The vehicle's position, then its stops up to the searched trip's last one, with ETAs.
  public var waypoints: [MatchWaypoint]
  public var matchType: VehicleMatchType
  public var requestedOrderedBy: VehicleMatchOrder
  public var orderedBy: VehicleMatchOrder
  /// Where the searched trip's pickup and drop-off go in `vehicle.waypoints` (before the
  /// waypoint at that index; `count` for the end), so that an assignment can keep the order
  /// the estimates were made for.
  public var pickupInsertionIndex: Int
  public var dropoffInsertionIndex: Int

  public init(
    vehicle: Vehicle, pickupStraightLineDistanceMeters: Int32, tripType: TripType, matchType: VehicleMatchType,
    requestedOrderedBy: VehicleMatchOrder, orderedBy: VehicleMatchOrder
  ) {
    self.vehicle = vehicle
    self.pickupStraightLineDistanceMeters = pickupStraightLineDistanceMeters
    self.tripType = tripType
    self.waypoints = []
    self.matchType = matchType
    self.requestedOrderedBy = requestedOrderedBy
    self.orderedBy = orderedBy
    self.pickupInsertionIndex = vehicle.waypoints.count
    self.dropoffInsertionIndex = vehicle.waypoints.count
  }
}
