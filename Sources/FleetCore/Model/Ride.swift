import FleetGeometry
import Foundation

/// Where a booked ride stands (raw values are `fleetkit.v1.Ride.State`'s numbers).
public enum RideState: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  /// The dispatcher is looking for a vehicle.
  case waiting = 1
  case assigned = 2
  /// Nobody could serve it in time; its trip was canceled.
  case noVehicleFound = 3
  case canceled = 4
  case completed = 5
  /// Booked for a later pickup time; released to WAITING early enough for a car to get there.
  case scheduled = 6

  public var wireName: String {
    switch self {
    case .unspecified: "STATE_UNSPECIFIED"
    case .waiting: "WAITING"
    case .assigned: "ASSIGNED"
    case .noVehicleFound: "NO_VEHICLE_FOUND"
    case .canceled: "CANCELED"
    case .completed: "COMPLETED"
    case .scheduled: "SCHEDULED"
    }
  }
}

/// What a rider asked for, in the Trip message's terms.
public struct RideRequest: Sendable, Hashable, Codable {
  public var pickupPoint: TerminalLocation?
  public var dropoffPoint: TerminalLocation?
  public var intermediateDestinations: [TerminalLocation] = []
  /// 1 when not given.
  public var numberOfPassengers: Int32 = 0
  /// EXCLUSIVE when not given.
  public var tripType: TripType = .unknown
  public var requiredAttributes: [Attribute] = []
  public var filter = ""
  /// When the rider is to be picked up; nil for a ride now.
  public var pickupTime: Date?
  /// A quote to book (its product at its price).
  public var quoteID: String?
  /// The product asked for, when there is no quote.
  public var product: String?

  public init() {}
}

/// A booked ride as fleetd stores it: the request, and what the dispatcher did with it. Its
/// trip (same ID) carries the journey itself.
public struct Ride: Sendable, Hashable, Codable {
  public var provider: String
  public var id: String
  public var request: RideRequest
  /// WAITING, ASSIGNED, NO_VEHICLE_FOUND or CANCELED as dispatch and the API set it; the trip
  /// finishing overrides it when the ride is shown (`RideView`).
  public var dispatchState: RideState = .waiting
  /// The vehicle dispatch assigned; empty while waiting.
  public var vehicleID = ""
  /// The vehicle the ride was last taken from (offline or stale before the pickup).
  public var releasedFrom = ""
  /// Since when it has been waiting for a vehicle (booking, or its last release).
  public var waitingSince: Date = .distantPast
  public var assignTime: Date?
  public var assignedPickupETA: Date?
  /// How many times a vehicle was assigned (more than one after re-dispatches).
  public var assignments = 0
  public var createTime: Date = .distantPast
  public var updateTime: Date = .distantPast
  /// Store revision; increases with every change (see `FleetStore`).
  public var revision: UInt64 = 0
  /// The product booked (with a tariff file): the quote's, the one asked for, or the first
  /// that fits; nil without tariffs.
  public var product: String?
  public var pricing: Product.Pricing?
  /// The kind of vehicle the product sends; nil: any.
  public var vehicleCategory: VehicleCategory?
  /// The price agreed at booking.
  public var fare: Fare?
  /// What the rider pays, once the ride completed or was canceled after an assignment.
  public var finalFare: Fare?
  /// The vehicle's odometer and the time when the rider was picked up: where a metered fare
  /// starts counting.
  public var meterStart: MeterReading?
  /// The route the fare was priced on (pickup, stops, drop-off), routed again when the stops or
  /// the drop-off change, so that an upfront fare can be priced anew at completion.
  public var route: PlannedRoute?
  /// Why the final fare differs from the agreed one ("the drop-off changed"); nil when it
  /// does not, or for a metered product.
  public var finalFareReason: String?
  /// A shared ride's bounds once it rides with others: the latest pickup and drop-off the
  /// dispatcher promised, which later riders may not push it past, and the direct drive's
  /// seconds its detour is measured by.
  public var latestPickup: Date?
  public var latestDropoff: Date?
  public var directSeconds: Double?
  /// A shared ride's own bounds, its product's at booking; nil: the dispatcher's.
  public var pooling: PoolingBounds?

  public init(provider: String, id: String, request: RideRequest) {
    self.provider = provider
    self.id = id
    self.request = request
  }

  public var name: ResourceName { ResourceName(provider: provider, kind: .rides, id: id) }

  /// The dispatcher gave the ride to `vehicleID`, expected at the pickup at `pickupETA`.
  public mutating func assign(to vehicleID: String, pickupETA: Date, now: Date) {
    dispatchState = .assigned
    self.vehicleID = vehicleID
    assignTime = now
    assignedPickupETA = pickupETA
    assignments += 1
    updateTime = now
  }

  /// Whether the dispatcher still has work with it: releasing it when scheduled, matching it
  /// when waiting, watching its vehicle until the pickup when assigned.
  public var isDispatcherWatching: Bool {
    dispatchState == .scheduled || dispatchState == .waiting || dispatchState == .assigned
  }

  /// Whether the dispatcher still watches the ride, given its trip: until the rider is aboard
  /// (or the trip ends, or is deleted), its car may go offline or a better one come free.
  func isInDispatch(trip: Trip?) -> Bool {
    guard isDispatcherWatching, let trip else { return false }
    return trip.status == .new || trip.status == .enrouteToPickup || trip.status == .arrivedAtPickup
  }

  public var tripName: ResourceName { ResourceName(provider: provider, kind: .trips, id: id) }
}

/// A drive through given points, as routed when it was priced.
public struct PlannedRoute: Sendable, Hashable, Codable {
  public var points: [LatLng]
  public var metres: Double
  public var seconds: Double

  public init(points: [LatLng], metres: Double, seconds: Double) {
    self.points = points
    self.metres = metres
    self.seconds = seconds
  }
}

/// A vehicle's odometer at a moment.
public struct MeterReading: Sendable, Hashable, Codable {
  public var meters: Double
  public var time: Date

  public init(meters: Double, time: Date) {
    self.meters = meters
    self.time = time
  }
}

/// A ride as the booking API shows it: its state follows its trip's end.
public struct RideView: Sendable, Hashable {
  public var ride: Ride
  public var state: RideState
  /// The vehicle serving it while ASSIGNED (and the last one once COMPLETED).
  public var vehicleID: String

  /// A view as it was recorded (an event's ride).
  public init(ride: Ride, state: RideState, vehicleID: String) {
    self.ride = ride
    self.state = state
    self.vehicleID = vehicleID
  }

  init(_ ride: Ride, trip: Trip?) {
    self.ride = ride
    switch trip?.status {
    case .complete?:
      state = .completed
    case .canceled?:
      state = ride.dispatchState == .noVehicleFound ? .noVehicleFound : .canceled
    default:
      state = ride.dispatchState
    }
    vehicleID = state == .assigned || state == .completed ? (trip?.vehicleID ?? ride.vehicleID) : ""
  }
}
