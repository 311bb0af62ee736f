import FleetCore
import FleetGeometry
import Foundation
import Testing

@testable import FleetRideStatus

let now = Date(timeIntervalSince1970: 1_790_000_000)
let pickup = LatLng(latitude: 43.7330, longitude: 7.4250)
let stop = LatLng(latitude: 43.7345, longitude: 7.4230)
let dropoff = LatLng(latitude: 43.7360, longitude: 7.4230)

func facts(_ status: TripStatus, vehicle: String = "v1", pickupIn seconds: TimeInterval? = 600) -> RideFacts {
  RideFacts(
    tripID: "t1", status: status, vehicleID: vehicle, pickup: pickup, dropoff: dropoff,
    intermediateDestinations: [stop], pickupETA: seconds.map { now + $0 }, dropoffETA: now + 1_200,
    vehicleLocation: LatLng(latitude: 43.7315, longitude: 7.4210), vehicleHeading: 90)
}

@Suite struct RideStatusMappingTests {
  let mapping = RideStatusMapping()
  let validator = RideStatusValidator(rideIdentifier: "ride-1")

  @Test(arguments: [
    (TripStatus.new, "", RidePhase.received),
    (.new, "v1", .confirmed),
    (.enrouteToPickup, "v1", .confirmed),
    (.arrivedAtPickup, "v1", .pickup),
    (.enrouteToIntermediateDestination, "v1", .ongoing),
    (.arrivedAtIntermediateDestination, "v1", .ongoing),
    (.enrouteToDropoff, "v1", .ongoing),
    (.complete, "v1", .completed),
    (.canceled, "v1", .completed),
    (.unknown, "v1", .unknown),
  ])
  func everyTripStatusHasItsPhase(status: TripStatus, vehicle: String, phase: RidePhase) {
    let ride = mapping.status(for: facts(status, vehicle: vehicle), rideIdentifier: "ride-1", now: now)
    #expect(ride.phase == phase)
    // Every mapped status is valid, except the one with no phase to give.
    #expect(validator.violations(of: ride).isEmpty == (status != .unknown))
  }

  @Test func enrouteBecomesApproachingUnderTheThreshold() {
    let near = mapping.status(for: facts(.enrouteToPickup, pickupIn: 90), rideIdentifier: "ride-1", now: now)
    #expect(near.phase == .approachingPickup)
    let custom = RideStatusMapping(configuration: .init(approachingPickupThreshold: 60))
    #expect(custom.phase(of: facts(.enrouteToPickup, pickupIn: 90), now: now) == .confirmed)
    #expect(mapping.phase(of: facts(.enrouteToPickup, pickupIn: nil), now: now) == .confirmed)
  }

  @Test func completionSaysHowItEndedAndWhoCanceled() {
    var done = facts(.complete)
    done.tripAttributes["amount_due"] = "12.50 EUR"
    let completed = mapping.status(for: done, rideIdentifier: "ride-1", now: now).completionStatus
    #expect(
      completed
        == RideCompletionStatus(outcome: .completed, amountDue: CurrencyAmount(amount: "12.50", currencyCode: "EUR")))
    for (who, outcome) in [
      ("user", RideCompletionStatus.Outcome.canceledByUser), ("service", .canceledByService),
      ("missed_pickup", .canceledMissedPickup), ("", .canceledByService),
    ] {
      var canceled = facts(.canceled)
      canceled.tripAttributes["canceled_by"] = who
      #expect(mapping.status(for: canceled, rideIdentifier: "ride-1", now: now).completionStatus?.outcome == outcome)
    }
  }

  @Test func theVehicleDriverAndOptionComeFromAttributes() {
    var ride = facts(.enrouteToPickup)
    ride.licensePlate = "AB-123"
    ride.vehicleAttributes = [
      "make": "Renault", "model": "Zoe", "driver_name": "Ana", "driver_phone": "+377 123", "driver_rating": "4.9",
      "map_annotation_image": "taxi",
    ]
    ride.tripAttributes = ["ride_option": "Comfort", "price_min": "18", "price_max": "24", "currency": "EUR"]
    let status = mapping.status(for: ride, rideIdentifier: "ride-1", now: now)
    #expect(status.vehicle?.registrationPlate == "AB-123")
    #expect(status.vehicle?.mapAnnotationImageName == "taxi")
    #expect(status.vehicle?.heading == 90)
    #expect(status.driver == RideDriver(name: "Ana", phoneNumber: "+377 123", rating: "4.9"))
    #expect(
      status.rideOption
        == RideOption(
          name: "Comfort", estimatedPickupDate: now + 600,
          priceRange: PriceRange(minimum: "18", maximum: "24", currencyCode: "EUR")))
    #expect(status.estimatedPickupDate == now + 600)
    #expect(status.estimatedDropOffDate == now + 1_200)
    #expect(validator.violations(of: status).isEmpty)
    // Without a vehicle there is no vehicle and no driver, and still a ride option.
    let received = mapping.status(for: facts(.new, vehicle: "", pickupIn: nil), rideIdentifier: "ride-1", now: now)
    #expect(received.vehicle == nil && received.driver == nil)
    #expect(received.rideOption == RideOption(name: "Ride", estimatedPickupDate: now))
    var booked = facts(.new, vehicle: "", pickupIn: nil)
    booked.bookedAt = now - 30
    let stable = mapping.status(for: booked, rideIdentifier: "ride-1", now: now)
    #expect(stable.rideOption?.estimatedPickupDate == now - 30)
    #expect(mapping.status(for: booked, rideIdentifier: "ride-1", now: now + 5) == stable)
  }

  @Test func onlyStopsStillAheadAreWaypoints() {
    var ride = facts(.enrouteToIntermediateDestination)
    ride.intermediateDestinations = [stop, pickup]
    ride.intermediateDestinationIndex = 1
    #expect(mapping.status(for: ride, rideIdentifier: "r", now: now).waypoints.map(\.coordinate) == [pickup])
    ride.status = .arrivedAtIntermediateDestination
    #expect(mapping.status(for: ride, rideIdentifier: "r", now: now).waypoints.isEmpty)
    ride.status = .enrouteToPickup
    #expect(mapping.status(for: ride, rideIdentifier: "r", now: now).waypoints.count == 2)
  }
}

@Suite struct RideStatusValidatorTests {
  let validator = RideStatusValidator(rideIdentifier: "ride-1")
  var valid: RideStatus {
    RideStatus(
      rideIdentifier: "ride-1", phase: .confirmed, estimatedPickupDate: now + 60, estimatedDropOffDate: now + 600,
      vehicle: RideVehicle(location: pickup, heading: 10, mapAnnotationImageName: "car"),
      rideOption: RideOption(name: "Ride", estimatedPickupDate: now + 60))
  }

  func rules(_ change: (inout RideStatus) -> Void) -> [RideStatusViolation.Rule] {
    var status = valid
    change(&status)
    return validator.violations(of: status).map(\.rule)
  }

  @Test func aWellFormedStatusPasses() {
    #expect(validator.violations(of: valid).isEmpty)
  }

  @Test func everyRuleIsChecked() throws {
    #expect(rules { $0.phase = .unknown } == [.unknownPhase])
    #expect(rules { $0.phase = .completed } == [.completionStatusMismatch])
    #expect(rules { $0.completionStatus = RideCompletionStatus(outcome: .completed) } == [.completionStatusMismatch])
    #expect(rules { $0.rideIdentifier = "ride-2" } == [.rideIdentifierMismatch])
    #expect(rules { $0.rideIdentifier = "" } == [.rideIdentifierMismatch])
    #expect(rules { $0.rideOption = nil } == [.invalidRideOption])
    #expect(rules { $0.rideOption?.name = " " } == [.invalidRideOption])
    #expect(rules { $0.rideOption?.estimatedPickupDate = nil } == [.invalidRideOption])
    #expect(rules { $0.rideOption?.estimatedPickupDate = Date(timeIntervalSince1970: 0) } == [.invalidRideOption])
    #expect(rules { $0.vehicle?.mapAnnotationImageName = nil } == [.invalidVehicle])
    #expect(rules { $0.vehicle?.location = LatLng(latitude: 95, longitude: 0) } == [.invalidVehicle])
    #expect(rules { $0.vehicle?.heading = 400 } == [.invalidVehicle])
    #expect(rules { $0.estimatedDropOffDate = now } == [.inconsistentDetail])
    #expect(
      rules { $0.pickupLocation = RidePlace(coordinate: LatLng(latitude: 0, longitude: 200)) } == [.inconsistentDetail])
    #expect(
      rules { $0.rideOption?.priceRange = PriceRange(minimum: "30", maximum: "20", currencyCode: "EUR") } == [
        .inconsistentDetail
      ])
    #expect(
      rules { $0.rideOption?.priceRange = PriceRange(minimum: "1", maximum: "2", currencyCode: "euro") } == [
        .inconsistentDetail
      ])
    var completed = valid
    completed.phase = .completed
    completed.completionStatus = RideCompletionStatus(
      outcome: .completed, amountDue: CurrencyAmount(amount: "x", currencyCode: "EUR"))
    #expect(validator.violations(of: completed).map(\.rule) == [.inconsistentDetail])
    let error = #expect(throws: RideStatusViolation.self) {
      var wrong = valid
      wrong.rideIdentifier = "other"
      try validator.validate(wrong)
    }
    #expect(error?.message == "rideIdentifier must be 'ride-1' as at booking, got 'other'")
  }
}
