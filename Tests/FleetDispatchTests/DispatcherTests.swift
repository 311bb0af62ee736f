import FleetDispatch
import FleetGeometry
import FleetStoreSQLite
import FleetTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import FleetCore

let origin = LatLng(latitude: 43.73, longitude: 7.42)
/// A point `metres` north of `origin`.
func north(_ metres: Double) -> LatLng {
  LatLng(latitude: origin.latitude + metres / 111_195, longitude: origin.longitude)
}

/// The domain and the dispatcher on a real SQLite store, without a road graph (straight lines).
struct Harness {
  let fleet: Fleet
  let clock: TestTime
  let directory: String
  let admin = Caller.admin(of: "acme")

  static func make(clock: TestTime = TestTime(), directory: String? = nil, tariffs: Tariffs = .none) async throws
    -> Harness
  {
    let directory = directory ?? NSTemporaryDirectory() + "fleetkit-dispatch-\(UUID().uuidString)"
    var configuration = FleetConfiguration()
    try configuration.setRideService(tariffs: tariffs, serviceAreas: .none, source: "test")
    let fleet = try await Fleet(
      store: try SQLiteStore(directory: directory), configuration: configuration, clock: clock.read)
    return Harness(fleet: fleet, clock: clock, directory: directory)
  }

  func remove() { try? FileManager.default.removeItem(atPath: directory) }

  func vehicle(
    _ id: String, at point: LatLng, types: [TripType] = [.exclusive, .shared], backToBack: Bool = false
  ) async throws {
    var v = Vehicle(provider: "acme", id: id)
    v.state = .online
    v.supportedTripTypes = types
    v.maximumCapacity = 4
    v.category = .auto
    v.backToBackEnabled = backToBack
    v.lastLocation = VehicleLocation(location: point)
    _ = try await fleet.createVehicle(caller: admin, provider: "acme", vehicleID: id, vehicle: VehicleInput(vehicle: v))
  }

  func move(_ id: String, to point: LatLng) async throws {
    var v = Vehicle(provider: "acme", id: id)
    v.lastLocation = VehicleLocation(location: point)
    _ = try await fleet.updateVehicle(
      caller: admin, name: ResourceName(provider: "acme", kind: .vehicles, id: id), vehicle: VehicleInput(vehicle: v),
      mask: ["last_location"])
  }

  func setOffline(_ id: String) async throws {
    var v = Vehicle(provider: "acme", id: id)
    v.state = .offline
    _ = try await fleet.updateVehicle(
      caller: admin, name: ResourceName(provider: "acme", kind: .vehicles, id: id), vehicle: VehicleInput(vehicle: v),
      mask: ["vehicle_state"])
  }

  func request(from: LatLng, to: LatLng, type: TripType = .exclusive) -> RideRequest {
    var r = RideRequest()
    r.pickupPoint = TerminalLocation(point: from)
    r.dropoffPoint = TerminalLocation(point: to)
    r.tripType = type
    return r
  }

  @discardableResult
  func book(_ id: String, from: LatLng, to: LatLng, type: TripType = .exclusive) async throws -> RideView {
    try await fleet.createRide(
      caller: admin, provider: "acme", rideID: id, request: request(from: from, to: to, type: type))
  }

  func ride(_ id: String) throws -> RideView {
    try fleet.getRide(caller: admin, name: ResourceName(provider: "acme", kind: .rides, id: id))
  }

  func trip(_ id: String) throws -> TripSnapshot {
    try fleet.getTrip(caller: admin, name: ResourceName(provider: "acme", kind: .trips, id: id))
  }

  func vehicleState(_ id: String) throws -> Vehicle {
    try fleet.getVehicle(caller: admin, name: ResourceName(provider: "acme", kind: .vehicles, id: id))
  }

  func dispatcher(_ policy: DispatchPolicy = .batched, reassignment: Reassignment? = nil, waitWeight: Double = 1)
    -> Dispatcher
  {
    var configuration = DispatchConfiguration()
    configuration.policy = policy
    configuration.reassignment = reassignment
    configuration.waitWeight = waitWeight
    var logger = Logger(label: "dispatch-test")
    logger.logLevel = .critical
    return Dispatcher(fleet: fleet, configuration: configuration, logger: logger)
  }
}

func fleetError(_ body: () async throws -> Void) async -> FleetError? {
  do {
    try await body()
    return nil
  } catch let error as FleetError {
    return error
  } catch {
    return FleetError(.internal, "unexpected \(error)")
  }
}

@Suite("Dispatcher and booking API")
struct DispatcherTests {
  @Test func bookingIsIdempotentValidatedAndForTheBackendOnly() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    let booked = try await h.book("r1", from: north(0), to: north(900))
    #expect(booked.state == .waiting && booked.vehicleID.isEmpty)
    #expect(booked.ride.request.numberOfPassengers == 1 && booked.ride.request.tripType == .exclusive)
    let trip = try h.trip("r1")
    #expect(trip.trip.status == .new && !trip.trip.isAssigned && trip.trip.pickupPoint?.point == north(0))
    // The same booking again is the same ride.
    h.clock.advance(5)
    #expect(try await h.book("r1", from: north(0), to: north(900)).ride.createTime == booked.ride.createTime)
    let different = await fleetError { try await h.book("r1", from: north(0), to: north(100)) }
    #expect(different?.code == .alreadyExists && different?.message.contains("different request") == true)
    _ = try await h.fleet.createTrip(
      caller: h.admin, provider: "acme", tripID: "taken",
      trip: { () -> Trip in
        var t = Trip(provider: "acme", id: "taken")
        t.type = .exclusive
        t.pickupPoint = TerminalLocation(point: north(0))
        return t
      }())
    #expect(await fleetError { try await h.book("taken", from: north(0), to: north(100)) }?.code == .alreadyExists)

    let rules: [(String, (inout RideRequest) -> Void)] = [
      ("ride.pickup_point is required", { $0.pickupPoint = nil }),
      (
        "ride.pickup_point.point.latitude",
        { $0.pickupPoint = TerminalLocation(point: LatLng(latitude: 99, longitude: 0)) }
      ),
      (
        "ride.dropoff_point is required for a SHARED ride",
        { r in
          r.tripType = .shared
          r.dropoffPoint = nil
        }
      ),
      (
        "ride.intermediate_destinations are only supported for EXCLUSIVE",
        { r in
          r.tripType = .shared
          r.intermediateDestinations = [TerminalLocation(point: north(10))]
        }
      ),
      ("ride.number_of_passengers must not be negative", { $0.numberOfPassengers = -1 }),
      (
        "ride.intermediate_destinations may hold at most 25 stops",
        { r in
          r.intermediateDestinations = Array(repeating: TerminalLocation(point: north(10)), count: 26)
        }
      ),
      (
        "filter cannot be combined",
        { r in
          r.filter = "attributes.a = \"b\""
          r.requiredAttributes = [Attribute(key: "a", value: .string("b"))]
        }
      ),
      ("ride.filter: at position 14", { $0.filter = "attributes.a >" }),
    ]
    for (message, breakIt) in rules {
      var request = h.request(from: north(0), to: north(500))
      breakIt(&request)
      let error = await fleetError {
        _ = try await h.fleet.createRide(caller: h.admin, provider: "acme", rideID: "bad", request: request)
      }
      #expect(error?.code == .invalidArgument && error?.message.contains(message) == true, "\(error?.message ?? "")")
    }
    #expect(
      await fleetError {
        _ = try await h.fleet.createRide(
          caller: h.admin, provider: "acme", rideID: "a/b", request: h.request(from: north(0), to: north(1)))
      }?
      .message.contains("ride_id") == true)
    for role in [Role.consumer, .driver, .viewer] {
      let caller = Caller(provider: "acme", role: role, tripID: "*", vehicleID: "*")
      #expect(
        await fleetError {
          _ = try await h.fleet.createRide(
            caller: caller, provider: "acme", rideID: "x", request: h.request(from: north(0), to: north(1)))
        }?.code == .permissionDenied)
      // A rider reads only the ride of its own trip; drivers and viewers none.
      let reader = Caller(provider: "acme", role: role, tripID: "r9", vehicleID: "*")
      #expect(
        await fleetError {
          _ = try h.fleet.getRide(caller: reader, name: ResourceName(provider: "acme", kind: .rides, id: "r1"))
        }?.code == .permissionDenied)
    }
    let rider = Caller(provider: "acme", role: .consumer, tripID: "r1")
    #expect(
      try h.fleet.getRide(caller: rider, name: ResourceName(provider: "acme", kind: .rides, id: "r1")).ride.id == "r1")
    #expect(await fleetError { _ = try h.ride("none") }?.code == .notFound)
    try await h.book("r2", from: north(0), to: north(900))
    try await h.book("r0", from: north(0), to: north(900))
    let first = try h.fleet.listRides(caller: h.admin, provider: "acme", pageSize: 2, pageToken: "")
    #expect(first.rides.map(\.ride.id) == ["r0", "r1"])
    let second = try h.fleet.listRides(caller: h.admin, provider: "acme", pageSize: 2, pageToken: first.nextPageToken)
    #expect(second.rides.map(\.ride.id) == ["r2"] && second.nextPageToken.isEmpty)
  }

  @Test func aBookedRideSurvivesARestart() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.book("r1", from: north(0), to: north(900))
    let reopened = try await Harness.make(clock: h.clock, directory: h.directory)
    #expect(try reopened.ride("r1").state == .waiting)
    #expect(reopened.fleet.pendingRides().map(\.ride.id) == ["r1"])
    #expect(try reopened.trip("r1").trip.status == .new)
  }

  @Test func aRoundAssignsTheNearestVehicleAsABackendWould() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("near", at: north(300))
    try await h.vehicle("far", at: north(2000))
    try await h.book("r1", from: north(0), to: north(900))
    let round = try await h.dispatcher().round()
    #expect(round.waiting == 1 && round.assigned.map(\.vehicleID) == ["near"] && round.conflicts == 0)
    let ride = try h.ride("r1")
    #expect(ride.state == .assigned && ride.vehicleID == "near" && ride.ride.assignments == 1)
    #expect(ride.ride.assignedPickupETA != nil)
    let trip = try h.trip("r1")
    #expect(trip.trip.vehicleID == "near")
    let vehicle = try h.vehicleState("near")
    #expect(vehicle.currentTrips == ["r1"])
    #expect(vehicle.waypoints.map(\.waypointType) == [.pickup, .dropOff])
    // Nothing left to do.
    #expect(try await h.dispatcher().round().assigned.isEmpty)
    // The vehicle is busy: the next ride goes to the other one.
    try await h.book("r2", from: north(0), to: north(900))
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["far"])
  }

  @Test func batchedMatchingServesBothRidesSoonerThanGreedy() async throws {
    // Ride 1 waits longest; greedy gives it the nearest car (A, 100 m), which leaves ride 2 with
    // B, 320 m away. Batched gives ride 1 B (120 m) and ride 2 A (100 m).
    for policy in DispatchPolicy.allCases {
      let h = try await Harness.make()
      defer { h.remove() }
      try await h.vehicle("A", at: north(100))
      try await h.vehicle("B", at: north(320))
      try await h.book("ride-1", from: north(200), to: north(2000))
      h.clock.advance(1)
      try await h.book("ride-2", from: north(0), to: north(2000))
      let round = try await h.dispatcher(policy).round()
      let pairs = Dictionary(uniqueKeysWithValues: round.assigned.map { ($0.ride.id, $0.vehicleID) })
      let total = round.assigned.reduce(0) { $0 + $1.pickupSeconds }
      switch policy {
      case .batched:
        #expect(pairs == ["ride-1": "B", "ride-2": "A"])
        #expect(abs(total - 220 / StraightLineTravel.defaultSpeed) < 1)
      case .greedy:
        #expect(pairs == ["ride-1": "A", "ride-2": "B"])
        #expect(abs(total - 420 / StraightLineTravel.defaultSpeed) < 1)
      }
    }
  }

  @Test func theOneFreeCarGoesToTheRideThatWaitedLongestUnlessAskedForTheNearest() async throws {
    // One car; a ride 1,000 m away has waited three minutes, a new one is 100 m away. The old
    // ride is about 110 s farther but waited 180 s longer: it gets the car (at the default
    // weight of a second of pickup per second waited); by pickup time alone the new one would.
    for weight in [1.0, 0] {
      let h = try await Harness.make()
      defer { h.remove() }
      try await h.vehicle("car", at: north(0))
      try await h.book("waited", from: north(1000), to: north(3000))
      h.clock.advance(180)
      try await h.book("new", from: north(100), to: north(3000))
      let round = try await h.dispatcher(waitWeight: weight).round()
      #expect(round.waiting == 2)
      #expect(round.assigned.map(\.ride.id) == [weight > 0 ? "waited" : "new"], "weight \(weight)")
    }
  }

  @Test func aVehicleGoneBeforeThePickupHasItsRideDispatchedAgain() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("first", at: north(100))
    try await h.vehicle("second", at: north(900))
    try await h.book("r1", from: north(0), to: north(2000))
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["first"])
    try await h.setOffline("first")
    let round = try await h.dispatcher().round()
    #expect(round.released.map(\.id) == ["r1"])
    #expect(round.assigned.map(\.vehicleID) == ["second"])
    let ride = try h.ride("r1")
    #expect(ride.state == .assigned && ride.vehicleID == "second" && ride.ride.assignments == 2)
    let first = try h.vehicleState("first")
    #expect(first.currentTrips.isEmpty && first.waypoints.isEmpty)
    #expect(try h.vehicleState("second").currentTrips == ["r1"])

    // Stale: the second falls silent for longer than the staleness while a third keeps reporting.
    try await h.vehicle("third", at: north(1500))
    h.clock.advance(6 * 60)
    try await h.move("third", to: north(1400))
    let again = try await h.dispatcher().round()
    #expect(again.released.map(\.id) == ["r1"] && again.assigned.map(\.vehicleID) == ["third"])
    #expect(try h.ride("r1").ride.assignments == 3)
  }

  @Test func aRideWithNoCarInReachIsOfferedFartherOnesAsItWaits() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    // 6 km away: beyond the 5,000-m radius until the ride has waited 24 s (2,500 m a minute);
    // standing free for 40 s before the ride is booked (a farther car must have for 60 s).
    try await h.vehicle("beyond", at: north(6_000))
    try await h.vehicle("gone-too-far", at: north(10_500))
    h.clock.advance(40)
    try await h.book("r1", from: north(0), to: north(900))
    #expect(try await h.dispatcher().round().assigned.isEmpty)
    h.clock.advance(20)
    #expect(try await h.dispatcher().round().assigned.isEmpty)
    h.clock.advance(5)
    let round = try await h.dispatcher().round()
    #expect(round.assigned.map(\.vehicleID) == ["beyond"] && round.assigned.allSatisfy(\.widened))
    #expect(try h.ride("r1").vehicleID == "beyond")

    // The radius stops at SearchVehicles' 10 km: 150 s of waiting would make it 11,250 m.
    try await h.book("r2", from: north(0), to: north(900))
    h.clock.advance(150)
    #expect(try await h.dispatcher().round().assigned.isEmpty)
    let ride = try h.ride("r2").ride
    #expect(DispatchRules().pickupRadius(for: ride, now: h.clock.now) == 10_000)
    // With no growth the radius stays put, however long the ride waits.
    var rules = DispatchRules()
    rules.pickupRadiusGrowthPerMinute = 0
    #expect(rules.pickupRadius(for: ride, now: h.clock.now) == 5000)
    // A car within the dispatch radius is not counted as widened, whatever the ride's radius.
    try await h.vehicle("near", at: north(1_000))
    let near = try await h.dispatcher().round()
    #expect(near.assigned.map(\.vehicleID) == ["near"] && !near.assigned[0].widened)
  }

  @Test func aFartherCarIsOfferedOnlyWhenItStoodFreeAndNoRiderNearItWaits() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("beyond", at: north(6_000))
    try await h.book("waited", from: north(0), to: north(900))
    h.clock.advance(60)  // its radius: 7,500 m
    // A car that has only just come free (here: just made) is not offered beyond the radius.
    try await h.vehicle("just-free", at: north(5_500))
    let alone = h.fleet.dispatchOptions(for: h.fleet.pendingRides(), rules: DispatchRules())
    #expect(alone.map { $0.map(\.vehicleID) } == [["beyond"]])
    var patient = DispatchRules()
    patient.freeBeforeOfferedFarther = .zero
    let both = h.fleet.dispatchOptions(for: h.fleet.pendingRides(), rules: patient)
    #expect(both.map { Set($0.map(\.vehicleID)) } == [["beyond", "just-free"]])
    // A ride booked 2 km from the cars has them within the radius: they are kept for it, though
    // the other ride waited longer.
    try await h.book("near-it", from: north(8_000), to: north(9_000))
    let pending = h.fleet.pendingRides()
    #expect(pending.map(\.ride.id) == ["waited", "near-it"])
    let kept = h.fleet.dispatchOptions(for: pending, rules: patient)
    #expect(kept.map { Set($0.map(\.vehicleID)) } == [[], ["beyond", "just-free"]])
    let round = try await h.dispatcher().round()
    #expect(round.assigned.map(\.ride.id) == ["near-it"] && !round.assigned[0].widened)
  }

  @Test func aRideNobodyCanServeEndsNoVehicleFoundWithItsTripCanceled() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("elsewhere", at: north(20_000))
    try await h.book("r1", from: north(0), to: north(900))
    #expect(try await h.dispatcher().round().assigned.isEmpty)
    h.clock.advance(299)
    #expect(try await h.dispatcher().round().expired.isEmpty)
    h.clock.advance(2)
    #expect(try await h.dispatcher().round().expired.map(\.id) == ["r1"])
    #expect(try h.ride("r1").state == .noVehicleFound)
    #expect(try h.trip("r1").trip.status == .canceled)
    // Cancelling it then changes nothing.
    let canceled = try await h.fleet.cancelRide(
      caller: h.admin, name: ResourceName(provider: "acme", kind: .rides, id: "r1"))
    #expect(canceled.state == .noVehicleFound)
  }

  @Test func cancelingARideCancelsItsTripAndFreesTheVehicle() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("cab", at: north(100))
    try await h.book("r1", from: north(0), to: north(900))
    _ = try await h.dispatcher().round()
    let name = ResourceName(provider: "acme", kind: .rides, id: "r1")
    let canceled = try await h.fleet.cancelRide(caller: h.admin, name: name)
    #expect(canceled.state == .canceled && canceled.vehicleID.isEmpty)
    #expect(try h.trip("r1").trip.status == .canceled)
    #expect(try h.vehicleState("cab").currentTrips.isEmpty)
    #expect(try await h.fleet.cancelRide(caller: h.admin, name: name).state == .canceled)
    // A completed ride cannot be canceled.
    try await h.book("r2", from: north(0), to: north(900))
    _ = try await h.dispatcher().round()
    for status in [TripStatus.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete] {
      var t = Trip(provider: "acme", id: "r2")
      t.status = status
      _ = try await h.fleet.updateTrip(
        caller: h.admin, name: ResourceName(provider: "acme", kind: .trips, id: "r2"), trip: t, mask: ["trip_status"])
    }
    let completed = try h.ride("r2")
    #expect(completed.state == .completed && completed.vehicleID == "cab")
    let error = await fleetError {
      _ = try await h.fleet.cancelRide(caller: h.admin, name: ResourceName(provider: "acme", kind: .rides, id: "r2"))
    }
    #expect(error?.code == .failedPrecondition)
  }

  @Test func anOptionIsAppliedOnlyWhileTheVehicleIsAsItWasPlanned() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("cab", at: north(100))
    try await h.book("r1", from: north(0), to: north(900))
    let pending = h.fleet.pendingRides()
    let options = h.fleet.dispatchOptions(for: pending, rules: DispatchRules())
    let option = try #require(options.first?.first)
    // Meanwhile the provider's backend gives the car another trip.
    var other = Trip(provider: "acme", id: "other")
    other.type = .exclusive
    other.pickupPoint = TerminalLocation(point: north(50))
    other.vehicleID = "cab"
    _ = try await h.fleet.createTrip(caller: h.admin, provider: "acme", tripID: "other", trip: other)
    #expect(try await h.fleet.assign(pending[0], option) == false)
    #expect(try h.ride("r1").state == .waiting)
    #expect(try h.vehicleState("cab").currentTrips == ["other"])
  }

  /// Off by default; on, a ride not yet picked up moves to a free car that reaches its pickup
  /// at least the saving asked for sooner, once; a smaller saving, a second change and a ride
  /// picked up stay as they are.
  @Test func aRideMovesToAFreeCarClearlySoonerOnlyWhenAskedAndOnce() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("far", at: north(4000))
    try await h.book("r1", from: north(0), to: north(900))
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["far"])
    // The driver sets off.
    var enroute = Trip(provider: "acme", id: "r1")
    enroute.status = .enrouteToPickup
    _ = try await h.fleet.updateTrip(
      caller: h.admin, name: ResourceName(provider: "acme", kind: .trips, id: "r1"), trip: enroute,
      mask: ["trip_status"])
    let reassigning = h.dispatcher(reassignment: Reassignment(minimumSaving: .seconds(180)))
    // 1,000 m nearer: 120 s sooner, below the saving asked for.
    try await h.vehicle("nearer", at: north(3000))
    #expect(try await reassigning.round().reassigned.isEmpty)
    // 1,600 m nearer: 192 s sooner; without reassignment nothing moves.
    try await h.vehicle("close", at: north(2400))
    #expect(try await h.dispatcher().round().reassigned.isEmpty)
    #expect(try h.ride("r1").vehicleID == "far")
    let round = try await reassigning.round()
    #expect(round.reassigned.map(\.vehicleID) == ["close"] && round.assigned.isEmpty)
    let ride = try h.ride("r1")
    #expect(ride.state == .assigned && ride.vehicleID == "close" && ride.ride.assignments == 2)
    #expect(
      abs(ride.ride.assignedPickupETA!.timeIntervalSince(h.clock.read()) - 2400 / StraightLineTravel.defaultSpeed) < 1)
    let trip = try h.trip("r1").trip
    #expect(trip.vehicleID == "close" && trip.status == .enrouteToPickup)
    let far = try h.vehicleState("far")
    #expect(far.currentTrips.isEmpty && far.waypoints.isEmpty)
    let close = try h.vehicleState("close")
    #expect(close.currentTrips == ["r1"] && close.waypoints.map(\.waypointType) == [.pickup, .dropOff])
    // Once only: a car 287 s nearer still does not take it again.
    try await h.vehicle("closest", at: north(10))
    #expect(try await reassigning.round().reassigned.isEmpty)
    #expect(try h.ride("r1").vehicleID == "close")

    // A rider already picked up stays in their car, however near a free one is.
    try await h.vehicle("busy", at: north(-4000))
    try await h.book("r2", from: north(-8000), to: north(-9000))
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["busy"])
    for status in [TripStatus.enrouteToPickup, .arrivedAtPickup] {
      var t = Trip(provider: "acme", id: "r2")
      t.status = status
      _ = try await h.fleet.updateTrip(
        caller: h.admin, name: ResourceName(provider: "acme", kind: .trips, id: "r2"), trip: t, mask: ["trip_status"])
    }
    try await h.vehicle("beside", at: north(-8000))
    #expect(try await reassigning.round().reassigned.isEmpty)
    #expect(try h.ride("r2").vehicleID == "busy")
  }

  @Test func aSharedRideJoinsACarWithRoomBetweenItsStops() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("pool", at: north(-300), types: [.shared])
    try await h.book("first", from: north(0), to: north(2000), type: .shared)
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["pool"])
    // On the way: picked up after the first rider, dropped before them.
    try await h.book("second", from: north(500), to: north(1000), type: .shared)
    #expect(try await h.dispatcher().round().assigned.map(\.vehicleID) == ["pool"])
    let stops = try h.vehicleState("pool").waypoints.map { "\($0.tripID)/\($0.waypointType == .pickup ? "p" : "d")" }
    #expect(stops == ["first/p", "second/p", "second/d", "first/d"])
  }
}

@Suite("Rides booked for later")
struct ScheduledRideTests {
  func bookLater(_ h: Harness, _ id: String, in seconds: TimeInterval, from: LatLng = north(0)) async throws {
    var request = h.request(from: from, to: north(900))
    request.pickupTime = h.clock.now.addingTimeInterval(seconds)
    let view = try await h.fleet.createRide(caller: h.admin, provider: "acme", rideID: id, request: request)
    #expect(view.state == .scheduled)
  }

  @Test func aScheduledRideIsReleasedSoThatTheNearestCarArrivesOnTime() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    // 1,500 m away at 30 km/h: 180 s of driving; with the 120 s lead, released 300 s ahead.
    try await h.vehicle("car", at: north(1500))
    try await bookLater(h, "r1", in: 1800)
    var round = try await h.dispatcher().round()
    #expect(round.releasedScheduled.isEmpty && round.assigned.isEmpty)
    #expect(try h.ride("r1").state == .scheduled)
    h.clock.advance(1800 - 300 - 5)
    try await h.move("car", to: north(1500))  // a fresh report: a silent car is not offered
    round = try await h.dispatcher().round()
    #expect(round.releasedScheduled.isEmpty, "5 s too early")
    h.clock.advance(10)
    round = try await h.dispatcher().round()
    #expect(round.releasedScheduled.map(\.id) == ["r1"])
    #expect(round.assigned.map(\.vehicleID) == ["car"], "matched in the round that released it")
    let ride = try h.ride("r1")
    #expect(ride.state == .assigned)
    let eta = try #require(ride.ride.assignedPickupETA)
    #expect(eta <= ride.ride.request.pickupTime!, "the car is there by the pickup time")
  }

  /// A ride booked for later costs a few looks, not one every round: each look puts the next
  /// halfway to its release as things stand, at most 5 minutes on.
  @Test func aRideForLaterIsLookedAtAFewTimesNotEveryRound() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("car", at: north(1500))
    try await bookLater(h, "r1", in: 1800)
    let name = ResourceName(provider: "acme", kind: .rides, id: "r1")
    var looks = 0
    var last: Date?
    // Half an hour of rounds every 2 s (the car reporting all along).
    for _ in 0..<(1800 / 2) {
      _ = try await h.dispatcher().round()
      let next = h.fleet.state.withLock { $0.scheduledChecks[name] }
      if next != last, next != nil { looks += 1 }
      last = next
      if try h.ride("r1").state != .scheduled { break }
      h.clock.advance(2)
      if Int(h.clock.now.timeIntervalSince1970) % 10 == 0 { try await h.move("car", to: north(1500)) }
    }
    #expect(try h.ride("r1").state == .assigned)
    // Released 300 s ahead (180 s of driving and the 120 s lead): 1,500 s of slack looked at
    // every 300 s, then halving down to the round's 2 s.
    #expect(looks < 20, "\(looks) looks")
    #expect(h.fleet.state.withLock { $0.scheduledChecks.isEmpty }, "nothing kept for a released ride")
  }

  @Test func aScheduledRideSurvivesARestartAndCanBeCanceled() async throws {
    let clock = TestTime()
    let h = try await Harness.make(clock: clock)
    defer { h.remove() }
    try await bookLater(h, "r1", in: 86_400)
    try await bookLater(h, "r2", in: 7200)
    let restarted = try await Harness.make(clock: clock, directory: h.directory)
    #expect(try restarted.ride("r1").state == .scheduled)
    #expect(try restarted.ride("r1").ride.request.pickupTime == h.ride("r1").ride.request.pickupTime)
    let canceled = try await restarted.fleet.cancelRide(
      caller: h.admin, name: ResourceName(provider: "acme", kind: .rides, id: "r1"))
    #expect(canceled.state == .canceled)
    let (rides, _) = try restarted.fleet.listRides(caller: h.admin, provider: "acme", pageSize: 10, pageToken: "")
    #expect(rides.map(\.state) == [.canceled, .scheduled])
  }

  @Test func withNoCarItWaitsFromThePickupTimeAndThenNoVehicleIsFound() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await bookLater(h, "r1", in: 600)
    h.clock.advance(600 - 120)
    #expect(try await h.dispatcher().round().releasedScheduled.map(\.id) == ["r1"], "at the lead, without a car")
    #expect(try h.ride("r1").state == .waiting)
    // The dispatch timeout (300 s) counts from the pickup time, not from the release.
    h.clock.advance(120 + 299)
    #expect(try await h.dispatcher().round().expired.isEmpty)
    h.clock.advance(2)
    #expect(try await h.dispatcher().round().expired.map(\.id) == ["r1"])
    #expect(try h.ride("r1").state == .noVehicleFound)
  }
}
