import FleetCore
import FleetGeometry
import Foundation

/// A rule a ride status broke. The receiver (SiriKit) stops listening after one invalid update,
/// so none leaves FleetKit: each rule is checked before delivery.
public struct RideStatusViolation: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Rule: String, Sendable, Hashable, CaseIterable {
    /// The phase must be one of SiriKit's, never unknown.
    case unknownPhase
    /// A completed ride needs a completion status, and only a completed one has it.
    case completionStatusMismatch
    /// Every update carries the identifier given at booking.
    case rideIdentifierMismatch
    /// A ride option with a name and a valid estimated pickup date.
    case invalidRideOption
    /// A vehicle needs a map annotation image, and its position must be on the globe.
    case invalidVehicle
    /// Coordinates on the globe, drop-off not before pickup, a price range that is a range.
    case inconsistentDetail
  }

  public var rule: Rule
  /// Names the field and what is wrong with it.
  public var message: String

  public init(_ rule: Rule, _ message: String) {
    self.rule = rule
    self.message = message
  }

  public var description: String { "\(rule.rawValue): \(message)" }
}

/// Checks a status against SiriKit's ride-status rules for the ride booked as `rideIdentifier`.
public struct RideStatusValidator: Sendable {
  public var rideIdentifier: String

  public init(rideIdentifier: String) { self.rideIdentifier = rideIdentifier }

  /// Every rule the status breaks, in the order of `Rule`; empty when it is valid.
  public func violations(of status: RideStatus) -> [RideStatusViolation] {
    var found: [RideStatusViolation] = []
    if status.phase == .unknown {
      found.append(
        .init(.unknownPhase, "phase must be one of received, confirmed, approachingPickup, pickup, ongoing, completed"))
    }
    switch (status.phase, status.completionStatus) {
    case (.completed, nil):
      found.append(.init(.completionStatusMismatch, "completionStatus is required when phase is completed"))
    case (let phase, _?) where phase != .completed:
      found.append(
        .init(.completionStatusMismatch, "completionStatus must be absent while phase is \(phase.rawValue)"))
    default: break
    }
    if status.rideIdentifier.isEmpty || status.rideIdentifier != rideIdentifier {
      found.append(
        .init(
          .rideIdentifierMismatch,
          "rideIdentifier must be '\(rideIdentifier)' as at booking, got '\(status.rideIdentifier)'"))
    }
    if let option = status.rideOption {
      if option.name.trimmingCharacters(in: .whitespaces).isEmpty {
        found.append(.init(.invalidRideOption, "rideOption.name is required"))
      }
      if let date = option.estimatedPickupDate, !Self.isPlausible(date) {
        found.append(.init(.invalidRideOption, "rideOption.estimatedPickupDate must be a real date, got \(date)"))
      } else if option.estimatedPickupDate == nil {
        found.append(.init(.invalidRideOption, "rideOption.estimatedPickupDate is required"))
      }
    } else {
      found.append(.init(.invalidRideOption, "rideOption is required"))
    }
    if let vehicle = status.vehicle {
      if (vehicle.mapAnnotationImageName ?? "").isEmpty {
        found.append(.init(.invalidVehicle, "vehicle.mapAnnotationImageName is required whenever there is a vehicle"))
      }
      if let location = vehicle.location, !Self.isOnGlobe(location) {
        found.append(.init(.invalidVehicle, "vehicle.location must have latitude in -90…90 and longitude in -180…180"))
      }
      if let heading = vehicle.heading, !(0..<360).contains(heading) {
        found.append(.init(.invalidVehicle, "vehicle.heading must be in 0…360, got \(heading)"))
      }
    }
    for (name, place) in [("pickupLocation", status.pickupLocation), ("dropOffLocation", status.dropOffLocation)] {
      if let place, !Self.isOnGlobe(place.coordinate) {
        found.append(.init(.inconsistentDetail, "\(name) must be on the globe"))
      }
    }
    for (index, place) in status.waypoints.enumerated() where !Self.isOnGlobe(place.coordinate) {
      found.append(.init(.inconsistentDetail, "waypoints[\(index)] must be on the globe"))
    }
    for (name, date) in [
      ("estimatedPickupDate", status.estimatedPickupDate), ("estimatedDropOffDate", status.estimatedDropOffDate),
    ] {
      if let date, !Self.isPlausible(date) {
        found.append(.init(.inconsistentDetail, "\(name) must be a real date, got \(date)"))
      }
    }
    if let pickup = status.estimatedPickupDate, let dropOff = status.estimatedDropOffDate, dropOff < pickup {
      found.append(.init(.inconsistentDetail, "estimatedDropOffDate must not be before estimatedPickupDate"))
    }
    if let range = status.rideOption?.priceRange {
      if let low = Decimal(string: range.minimum), let high = Decimal(string: range.maximum) {
        if low > high || low < 0 {
          found.append(.init(.inconsistentDetail, "rideOption.priceRange must have 0 ≤ minimum ≤ maximum"))
        }
      } else {
        found.append(.init(.inconsistentDetail, "rideOption.priceRange amounts must be decimal numbers"))
      }
      if !Self.isCurrencyCode(range.currencyCode) {
        found.append(.init(.inconsistentDetail, "rideOption.priceRange.currencyCode must be ISO 4217 (3 letters)"))
      }
    }
    if let due = status.completionStatus?.amountDue {
      if Decimal(string: due.amount) == nil {
        found.append(.init(.inconsistentDetail, "completionStatus.amountDue.amount must be a decimal number"))
      }
      if !Self.isCurrencyCode(due.currencyCode) {
        found.append(.init(.inconsistentDetail, "completionStatus.amountDue.currencyCode must be ISO 4217 (3 letters)"))
      }
    }
    return found
  }

  /// Throws the first rule the status breaks.
  public func validate(_ status: RideStatus) throws(RideStatusViolation) {
    if let first = violations(of: status).first { throw first }
  }

  static func isOnGlobe(_ point: LatLng) -> Bool {
    (-90...90).contains(point.latitude) && (-180...180).contains(point.longitude)
  }

  /// Between 2000 and 2200: not a zero, a sentinel or a unit mix-up.
  static func isPlausible(_ date: Date) -> Bool {
    (946_684_800...7_258_118_400).contains(date.timeIntervalSince1970)
  }

  static func isCurrencyCode(_ code: String) -> Bool {
    code.count == 3 && code.allSatisfy { $0.isASCII && $0.isUppercase }
  }
}
