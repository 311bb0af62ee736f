import FleetCore
import FleetGeometry
import Foundation

/// A ride's phase, in SiriKit's vocabulary (`INRidePhase`).
public enum RidePhase: String, Sendable, Hashable, Codable, CaseIterable {
  /// Not a phase: a status with it is invalid and is never delivered.
  case unknown
  /// Booked; no vehicle yet.
  case received
  /// A vehicle is assigned and on its way.
  case confirmed
  /// The vehicle is about to reach the pickup point.
  case approachingPickup
  /// The vehicle is at the pickup point.
  case pickup
  /// The passenger is on board.
  case ongoing
  /// Over: arrived, or canceled (see the completion status).
  case completed
}

/// How a completed ride ended (`INRideCompletionStatus`).
public struct RideCompletionStatus: Sendable, Hashable, Codable {
  public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
    case completed
    case canceledByUser
    case canceledByService
    case canceledMissedPickup
  }

  public var outcome: Outcome
  /// What the passenger still owes, for a completed ride.
  public var amountDue: CurrencyAmount?

  public init(outcome: Outcome, amountDue: CurrencyAmount? = nil) {
    self.outcome = outcome
    self.amountDue = amountDue
  }

  public var isCanceled: Bool { outcome != .completed }
}

/// An amount of money: a decimal string, so that no cent is lost to floating point.
public struct CurrencyAmount: Sendable, Hashable, Codable {
  /// "12.50".
  public var amount: String
  /// ISO 4217: "EUR".
  public var currencyCode: String

  public init(amount: String, currencyCode: String) {
    self.amount = amount
    self.currencyCode = currencyCode
  }
}

/// A fare range (`INPriceRange`).
public struct PriceRange: Sendable, Hashable, Codable {
  public var minimum: String
  public var maximum: String
  public var currencyCode: String

  public init(minimum: String, maximum: String, currencyCode: String) {
    self.minimum = minimum
    self.maximum = maximum
    self.currencyCode = currencyCode
  }
}

/// A place on the ride: pickup, drop-off, a stop.
public struct RidePlace: Sendable, Hashable, Codable {
  public var coordinate: LatLng
  public var name: String?

  public init(coordinate: LatLng, name: String? = nil) {
    self.coordinate = coordinate
    self.name = name
  }
}

/// The vehicle (`INRideVehicle`).
public struct RideVehicle: Sendable, Hashable, Codable {
  public var location: LatLng?
  /// Degrees clockwise from north.
  public var heading: Double?
  public var registrationPlate: String?
  public var manufacturer: String?
  public var model: String?
  /// The image the map shows for the vehicle; SiriKit shows no vehicle without one.
  public var mapAnnotationImageName: String?

  public init(
    location: LatLng? = nil, heading: Double? = nil, registrationPlate: String? = nil, manufacturer: String? = nil,
    model: String? = nil, mapAnnotationImageName: String? = nil
  ) {
    self.location = location
    self.heading = heading
    self.registrationPlate = registrationPlate
    self.manufacturer = manufacturer
    self.model = model
    self.mapAnnotationImageName = mapAnnotationImageName
  }
}

/// The driver (`INRideDriver`).
public struct RideDriver: Sendable, Hashable, Codable {
  public var name: String?
  public var phoneNumber: String?
  /// As the app shows it: "4.9".
  public var rating: String?

  public init(name: String? = nil, phoneNumber: String? = nil, rating: String? = nil) {
    self.name = name
    self.phoneNumber = phoneNumber
    self.rating = rating
  }
}

/// The kind of ride booked (`INRideOption`).
public struct RideOption: Sendable, Hashable, Codable {
  public var name: String
  public var estimatedPickupDate: Date?
  public var priceRange: PriceRange?

  public init(name: String, estimatedPickupDate: Date?, priceRange: PriceRange? = nil) {
    self.name = name
    self.estimatedPickupDate = estimatedPickupDate
    self.priceRange = priceRange
  }
}

/// A ride's live status, platform-neutral, in SiriKit's ride-status vocabulary (`INRideStatus`):
/// what a voice assistant or maps app shows between booking and arrival.
public struct RideStatus: Sendable, Hashable, Codable {
  /// The identifier given at booking; every update must carry the same one.
  public var rideIdentifier: String
  public var phase: RidePhase
  /// Present exactly when the phase is `completed`.
  public var completionStatus: RideCompletionStatus?
  public var estimatedPickupDate: Date?
  public var estimatedDropOffDate: Date?
  public var pickupLocation: RidePlace?
  public var dropOffLocation: RidePlace?
  /// Stops between pickup and drop-off still ahead.
  public var waypoints: [RidePlace]
  public var vehicle: RideVehicle?
  public var driver: RideDriver?
  public var rideOption: RideOption?

  public init(
    rideIdentifier: String, phase: RidePhase, completionStatus: RideCompletionStatus? = nil,
    estimatedPickupDate: Date? = nil, estimatedDropOffDate: Date? = nil, pickupLocation: RidePlace? = nil,
    dropOffLocation: RidePlace? = nil, waypoints: [RidePlace] = [], vehicle: RideVehicle? = nil,
    driver: RideDriver? = nil, rideOption: RideOption? = nil
  ) {
    self.rideIdentifier = rideIdentifier
    self.phase = phase
    self.completionStatus = completionStatus
    self.estimatedPickupDate = estimatedPickupDate
    self.estimatedDropOffDate = estimatedDropOffDate
    self.pickupLocation = pickupLocation
    self.dropOffLocation = dropOffLocation
    self.waypoints = waypoints
    self.vehicle = vehicle
    self.driver = driver
    self.rideOption = rideOption
  }
}
