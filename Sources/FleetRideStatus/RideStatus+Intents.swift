// SiriKit's ride-status types from RideStatus. Compiled only where the Intents framework has the
// ride-booking domain (iOS; it is unavailable on macOS, and INRideCompletionStatus on watchOS).
#if canImport(Intents) && os(iOS)
  import Contacts
  import CoreLocation
  import Foundation
  import Intents

  extension INRideStatus {
    /// SiriKit's status for `status`. Send only valid statuses (`RideStatusUpdater` sends no
    /// other): SiriKit stops listening after an invalid one.
    public convenience init(_ status: RideStatus) {
      self.init()
      rideIdentifier = status.rideIdentifier
      phase = INRidePhase(status.phase)
      completionStatus = status.completionStatus.map(INRideCompletionStatus.make)
      estimatedPickupDate = status.estimatedPickupDate
      estimatedDropOffDate = status.estimatedDropOffDate
      pickupLocation = status.pickupLocation.map(CLPlacemark.make)
      dropOffLocation = status.dropOffLocation.map(CLPlacemark.make)
      waypoints = status.waypoints.isEmpty ? nil : status.waypoints.map(CLPlacemark.make)
      vehicle = status.vehicle.map(INRideVehicle.make)
      driver = status.driver.flatMap(INRideDriver.make)
      rideOption = status.rideOption.flatMap(INRideOption.make)
    }
  }

  extension INRidePhase {
    init(_ phase: RidePhase) {
      switch phase {
      case .unknown: self = .unknown
      case .received: self = .received
      case .confirmed: self = .confirmed
      case .approachingPickup: self = .approachingPickup
      case .pickup: self = .pickup
      case .ongoing: self = .ongoing
      case .completed: self = .completed
      }
    }
  }

  extension INRideCompletionStatus {
    static func make(_ status: RideCompletionStatus) -> INRideCompletionStatus {
      switch status.outcome {
      case .completed:
        // An amount still due is outstanding: SiriKit offers to settle it in the app.
        if let due = status.amountDue.flatMap(INCurrencyAmount.make) { return .completed(outstanding: due) }
        return .completed()
      case .canceledByUser: return .canceledByUser()
      case .canceledByService: return .canceledByService()
      case .canceledMissedPickup: return .canceledMissedPickup()
      }
    }
  }

  extension INCurrencyAmount {
    static func make(_ amount: CurrencyAmount) -> INCurrencyAmount? {
      let number = NSDecimalNumber(string: amount.amount, locale: Locale(identifier: "en_US_POSIX"))
      guard number != .notANumber else { return nil }
      return INCurrencyAmount(amount: number, currencyCode: amount.currencyCode)
    }
  }

  extension CLPlacemark {
    static func make(_ place: RidePlace) -> CLPlacemark {
      let location = CLLocation(latitude: place.coordinate.latitude, longitude: place.coordinate.longitude)
      return CLPlacemark(location: location, name: place.name, postalAddress: nil)
    }
  }

  extension INRideVehicle {
    static func make(_ vehicle: RideVehicle) -> INRideVehicle {
      let made = INRideVehicle()
      if let position = vehicle.location {
        // SiriKit rotates the map image to the location's course.
        made.location = CLLocation(
          coordinate: CLLocationCoordinate2D(latitude: position.latitude, longitude: position.longitude),
          altitude: 0, horizontalAccuracy: 0, verticalAccuracy: -1, course: vehicle.heading ?? -1, speed: -1,
          timestamp: Date())
      }
      made.registrationPlate = vehicle.registrationPlate
      made.manufacturer = vehicle.manufacturer
      made.model = vehicle.model
      made.mapAnnotationImage = vehicle.mapAnnotationImageName.map { INImage(named: $0) }
      return made
    }
  }

  extension INRideDriver {
    static func make(_ driver: RideDriver) -> INRideDriver? {
      guard driver.name != nil || driver.phoneNumber != nil else { return nil }
      let components = driver.name.flatMap { PersonNameComponentsFormatter().personNameComponents(from: $0) }
      return INRideDriver(
        phoneNumber: driver.phoneNumber ?? "", nameComponents: components, displayName: driver.name, image: nil,
        rating: driver.rating)
    }
  }

  extension INRideOption {
    static func make(_ option: RideOption) -> INRideOption? {
      guard let pickup = option.estimatedPickupDate else { return nil }
      let made = INRideOption(name: option.name, estimatedPickupDate: pickup)
      if let range = option.priceRange {
        let posix = Locale(identifier: "en_US_POSIX")
        let low = NSDecimalNumber(string: range.minimum, locale: posix)
        let high = NSDecimalNumber(string: range.maximum, locale: posix)
        if low != .notANumber, high != .notANumber {
          made.priceRange = INPriceRange(firstPrice: low, secondPrice: high, currencyCode: range.currencyCode)
        }
      }
      return made
    }
  }

  /// Hands the updater's statuses to SiriKit: in `INGetRideStatusIntentHandling`'s
  /// `startSendingUpdates(for:to:)`, start the updater with
  /// `IntentsRideStatusReceiver(observer: observer)`, and stop it in `stopSendingUpdates(for:)`.
  public final class IntentsRideStatusReceiver: RideStatusReceiver, @unchecked Sendable {
    // Unchecked: SiriKit's observer may be called from any thread, and the updater calls it one
    // status at a time.
    let observer: any INGetRideStatusIntentResponseObserver

    public init(observer: any INGetRideStatusIntentResponseObserver) { self.observer = observer }

    public func send(_ status: RideStatus) {
      let response = INGetRideStatusIntentResponse(code: .success, userActivity: nil)
      response.rideStatus = INRideStatus(status)
      observer.didUpdate(getRideStatus: response)
    }

    /// After too many failures SiriKit is told the service is unavailable, not left waiting.
    public func rideStatusUpdatesStopped(_ reason: RideStatusUpdatesStopReason) {
      guard case .sourceFailing = reason else { return }
      observer.didUpdate(
        getRideStatus: INGetRideStatusIntentResponse(
          code: .failureRequiringAppLaunchServiceTemporarilyUnavailable, userActivity: nil))
    }
  }
#endif
