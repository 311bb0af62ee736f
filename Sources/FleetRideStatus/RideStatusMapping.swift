import FleetCore
import FleetGeometry
import Foundation

/// What the mapping reads from fleetd: a trip, its vehicle, its ETAs. Built from a trip
/// snapshot on fleetd or from a trip as a client receives it.
public struct RideFacts: Sendable, Hashable {
  public var tripID: String
  public var status: TripStatus
  /// Empty while no vehicle is assigned.
  public var vehicleID: String
  public var pickup: LatLng?
  public var dropoff: LatLng?
  public var intermediateDestinations: [LatLng]
  /// The stop the vehicle is heading to or at (Fleet Engine's `intermediate_destination_index`).
  public var intermediateDestinationIndex: Int
  public var pickupETA: Date?
  public var dropoffETA: Date?
  public var vehicleLocation: LatLng?
  public var vehicleHeading: Double?
  public var licensePlate: String?
  /// When the trip was booked: the ride option's pickup date before any ETA exists.
  public var bookedAt: Date?
  /// String-valued trip attributes: `ride_option`, `price_min`, `price_max`, `currency`,
  /// `amount_due` ("12.50 EUR"), `canceled_by` (user, service, missed_pickup).
  public var tripAttributes: [String: String]
  /// String-valued vehicle attributes: `make`, `model`, `map_annotation_image`, `driver_name`,
  /// `driver_phone`, `driver_rating`.
  public var vehicleAttributes: [String: String]

  public init(
    tripID: String, status: TripStatus, vehicleID: String = "", pickup: LatLng? = nil, dropoff: LatLng? = nil,
    intermediateDestinations: [LatLng] = [], intermediateDestinationIndex: Int = 0, pickupETA: Date? = nil,
    dropoffETA: Date? = nil, vehicleLocation: LatLng? = nil, vehicleHeading: Double? = nil,
    licensePlate: String? = nil, bookedAt: Date? = nil, tripAttributes: [String: String] = [:],
    vehicleAttributes: [String: String] = [:]
  ) {
    self.tripID = tripID
    self.status = status
    self.vehicleID = vehicleID
    self.pickup = pickup
    self.dropoff = dropoff
    self.intermediateDestinations = intermediateDestinations
    self.intermediateDestinationIndex = intermediateDestinationIndex
    self.pickupETA = pickupETA
    self.dropoffETA = dropoffETA
    self.vehicleLocation = vehicleLocation
    self.vehicleHeading = vehicleHeading
    self.licensePlate = licensePlate
    self.bookedAt = bookedAt
    self.tripAttributes = tripAttributes
    self.vehicleAttributes = vehicleAttributes
  }
}

/// Fleet Engine's trip statuses in SiriKit's ride phases.
public struct RideStatusMapping: Sendable {
  public struct Configuration: Sendable, Hashable {
    /// ENROUTE_TO_PICKUP becomes "approaching pickup" when the pickup ETA is nearer than this.
    public var approachingPickupThreshold: TimeInterval
    /// The vehicle's map image when its `map_annotation_image` attribute does not name one.
    public var mapAnnotationImageName: String
    /// The ride option's name when the trip's `ride_option` attribute does not give one.
    public var rideOptionName: String

    public init(
      approachingPickupThreshold: TimeInterval = 120, mapAnnotationImageName: String = "vehicle",
      rideOptionName: String = "Ride"
    ) {
      self.approachingPickupThreshold = approachingPickupThreshold
      self.mapAnnotationImageName = mapAnnotationImageName
      self.rideOptionName = rideOptionName
    }
  }

  public var configuration: Configuration

  public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

  public func phase(of facts: RideFacts, now: Date) -> RidePhase {
    switch facts.status {
    case .new: facts.vehicleID.isEmpty ? .received : .confirmed
    case .enrouteToPickup:
      if let eta = facts.pickupETA, eta.timeIntervalSince(now) < configuration.approachingPickupThreshold {
        .approachingPickup
      } else {
        .confirmed
      }
    case .arrivedAtPickup: .pickup
    case .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination, .enrouteToDropoff: .ongoing
    case .complete, .canceled: .completed
    case .unknown: .unknown
    }
  }

  public func status(for facts: RideFacts, rideIdentifier: String, now: Date) -> RideStatus {
    let phase = phase(of: facts, now: now)
    var status = RideStatus(rideIdentifier: rideIdentifier, phase: phase)
    status.completionStatus = completion(of: facts)
    status.pickupLocation = facts.pickup.map { RidePlace(coordinate: $0) }
    status.dropOffLocation = facts.dropoff.map { RidePlace(coordinate: $0) }
    status.waypoints = stopsAhead(facts).map { RidePlace(coordinate: $0) }
    status.estimatedPickupDate = facts.pickupETA
    status.estimatedDropOffDate = facts.dropoffETA
    if !facts.vehicleID.isEmpty {
      let attributes = facts.vehicleAttributes
      status.vehicle = RideVehicle(
        location: facts.vehicleLocation,
        heading: facts.vehicleHeading.map {
          ($0.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360)
        },
        registrationPlate: facts.licensePlate, manufacturer: attributes["make"], model: attributes["model"],
        mapAnnotationImageName: attributes["map_annotation_image"] ?? configuration.mapAnnotationImageName)
      let driver = RideDriver(
        name: attributes["driver_name"], phoneNumber: attributes["driver_phone"], rating: attributes["driver_rating"])
      if driver != RideDriver() { status.driver = driver }
    }
    let trip = facts.tripAttributes
    var price: PriceRange?
    if let low = trip["price_min"], let high = trip["price_max"], let currency = trip["currency"] {
      price = PriceRange(minimum: low, maximum: high, currencyCode: currency)
    }
    // SiriKit needs a pickup date on the option; before an ETA exists the booking time stands
    // (a stable one, so that an unchanged ride does not look changed).
    status.rideOption = RideOption(
      name: trip["ride_option"] ?? configuration.rideOptionName,
      estimatedPickupDate: facts.pickupETA ?? facts.bookedAt ?? now,
      priceRange: price)
    return status
  }

  func completion(of facts: RideFacts) -> RideCompletionStatus? {
    switch facts.status {
    case .complete:
      return RideCompletionStatus(
        outcome: .completed, amountDue: facts.tripAttributes["amount_due"].flatMap(Self.amount))
    case .canceled:
      let outcome: RideCompletionStatus.Outcome =
        switch facts.tripAttributes["canceled_by"] {
        case "user": .canceledByUser
        case "missed_pickup": .canceledMissedPickup
        default: .canceledByService
        }
      return RideCompletionStatus(outcome: outcome)
    default:
      return nil
    }
  }

  /// The intermediate stops still ahead.
  func stopsAhead(_ facts: RideFacts) -> [LatLng] {
    let stops = facts.intermediateDestinations
    let index = max(0, facts.intermediateDestinationIndex)
    switch facts.status {
    case .new, .enrouteToPickup, .arrivedAtPickup: return stops
    case .enrouteToIntermediateDestination: return Array(stops.dropFirst(index))
    case .arrivedAtIntermediateDestination: return Array(stops.dropFirst(index + 1))
    default: return []
    }
  }

  /// "12.50 EUR".
  static func amount(_ text: String) -> CurrencyAmount? {
    let parts = text.split(separator: " ")
    guard parts.count == 2 else { return nil }
    return CurrencyAmount(amount: String(parts[0]), currencyCode: String(parts[1]))
  }
}
