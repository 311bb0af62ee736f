import FleetCore
import FleetGeometry
import Foundation
import Testing

/// SearchVehicles in the domain, without a road graph: straight-line estimates.
@Suite("Fleet: SearchVehicles")
struct VehicleSearchTests {
  /// A valid search around `monaco`; `tweak` breaks or changes it.
  func search(_ tweak: (inout VehicleSearch) -> Void = { _ in }) -> VehicleSearch {
    var s = VehicleSearch()
    s.pickupPoint = TerminalLocation(point: monaco)
    s.dropoffPoint = TerminalLocation(point: casino)
    s.pickupRadiusMeters = 2000
    s.count = 10
    s.minimumCapacity = 1
    s.tripTypes = [.exclusive]
    s.vehicleTypes = [.auto]
    s.orderBy = .pickupPointETA
    tweak(&s)
    return s
  }

  /// A point `metres` north of `monaco`.
  func north(_ metres: Double) -> LatLng {
    LatLng(latitude: monaco.latitude + metres / 111_195, longitude: monaco.longitude)
  }

  func add(
    _ fleet: Fleet, _ id: String, at point: LatLng?, _ tweak: (inout VehicleInput) -> Void = { _ in }
  ) async throws {
    var input = vehicleInput(id)
    input.vehicle.lastLocation = point.map { VehicleLocation(location: $0) }
    tweak(&input)
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: id, vehicle: input)
  }

  func ids(_ matches: [VehicleMatch]) -> [String] { matches.map(\.vehicle.id) }

  static let rules: [(String, @Sendable (inout VehicleSearch) -> Void)] = [
    ("pickup_point is required", { s in s.pickupPoint = nil }),
    (
      "pickup_point.point.latitude",
      { s in s.pickupPoint = TerminalLocation(point: LatLng(latitude: 95, longitude: 0)) }
    ),
    ("pickup_radius_meters must be between 400 and 10000", { s in s.pickupRadiusMeters = 399 }),
    ("pickup_radius_meters must be between 400 and 10000", { s in s.pickupRadiusMeters = 10_001 }),
    ("count must be between 1 and 50", { s in s.count = 0 }),
    ("count must be between 1 and 50", { s in s.count = 51 }),
    ("minimum_capacity must be at least 1", { s in s.minimumCapacity = 0 }),
    ("trip_types must hold exactly one", { s in s.tripTypes = [] }),
    ("trip_types must hold exactly one", { s in s.tripTypes = [.exclusive, .shared] }),
    ("trip_types must not contain UNKNOWN", { s in s.tripTypes = [.unknown] }),
    ("vehicle_types is required", { s in s.vehicleTypes = [] }),
    ("vehicle_types[1].category must not be UNKNOWN", { s in s.vehicleTypes = [.auto, .unknown] }),
    ("order_by is required", { s in s.orderBy = .unknown }),
    (
      "dropoff_point is required when trip_types is SHARED",
      { s in
        s.tripTypes = [.shared]
        s.currentTripsPresent = .none
        s.dropoffPoint = nil
      }
    ),
    (
      "dropoff_point is required when order_by is DROPOFF_POINT_ETA",
      { s in
        s.orderBy = .dropoffPointETA
        s.dropoffPoint = nil
      }
    ),
    ("maximum_staleness must be a positive duration", { s in s.maximumStaleness = .zero }),
    (
      "include_back_to_back can only be true when current_trips_present is CURRENT_TRIPS_PRESENT_UNSPECIFIED",
      { s in
        s.includeBackToBack = true
        s.currentTripsPresent = .none
      }
    ),
    ("current_trips_present must be NONE or ANY when trip_types is SHARED", { s in s.tripTypes = [.shared] }),
    (
      "filter cannot be combined with required_attributes",
      { s in
        s.filter = "attributes.a = \"b\""
        s.requiredAttributes = [Attribute(key: "a", value: .string("b"))]
      }
    ),
    (
      "required_attributes may hold at most 50",
      { s in
        s.requiredAttributes = (0...50).map { Attribute(key: "k\($0)", value: .string("v")) }
      }
    ),
    ("filter: at position", { s in s.filter = "attributes.a = " }),
    ("trip_id", { s in s.tripID = "a/b" }),
  ]

  @Test(arguments: rules)
  func everyRuleIsInvalidArgumentNamingTheFieldAndRule(
    message: String, breakIt: @Sendable (inout VehicleSearch) -> Void
  ) async throws {
    let (fleet, _) = try await makeFleet()
    let error = await fleetError {
      _ = try fleet.searchVehicles(caller: admin, provider: provider, search: search(breakIt))
    }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains(message) == true, "\(error?.message ?? "no error")")
  }

  @Test func implicitConditionsLeaveOnlyTheVehiclesThatCanServe() async throws {
    let clock = TestClock()
    let (fleet, _) = try await makeFleet(clock: clock)
    try await add(fleet, "stale", at: north(100))
    clock.advance(6 * 60)
    try await add(fleet, "near", at: north(200))
    try await add(fleet, "far", at: north(900)) {
      $0.vehicle.attributes = [Attribute(key: "tier", value: .string("gold"))]
    }
    try await add(fleet, "offline", at: north(50)) { $0.vehicle.state = .offline }
    try await add(fleet, "shared-only", at: north(50)) { $0.vehicle.supportedTripTypes = [.shared] }
    try await add(fleet, "small", at: north(50)) { $0.vehicle.maximumCapacity = 2 }
    try await add(fleet, "taxi", at: north(50)) { $0.vehicle.category = .taxi }
    try await add(fleet, "outside", at: north(2100))
    try await add(fleet, "nowhere", at: nil)
    try await add(fleet, "busy", at: north(60))
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "t", trip: tripInput("t", vehicle: "busy"))

    let found = try fleet.searchVehicles(caller: admin, provider: provider, search: search { $0.minimumCapacity = 3 })
    #expect(ids(found) == ["near", "far"])
    // The stale vehicle is back with a longer maximum_staleness.
    let lenient = try fleet.searchVehicles(
      caller: admin, provider: provider,
      search: search { s in
        s.minimumCapacity = 3
        s.maximumStaleness = .seconds(600)
      })
    #expect(ids(lenient) == ["stale", "near", "far"])
    let taxis = try fleet.searchVehicles(
      caller: admin, provider: provider, search: search { $0.vehicleTypes = [.taxi] })
    #expect(ids(taxis) == ["taxi"])
    let gold = try fleet.searchVehicles(
      caller: admin, provider: provider, search: search { $0.filter = "attributes.tier = \"gold\"" })
    #expect(ids(gold) == ["far"])
    let required = try fleet.searchVehicles(
      caller: admin, provider: provider,
      search: search { $0.requiredAttributes = [Attribute(key: "tier", value: .string("gold"))] })
    #expect(ids(required) == ["far"])
    let two = try fleet.searchVehicles(caller: admin, provider: provider, search: search { $0.count = 2 })
    #expect(ids(two) == ["small", "near"])
  }

  @Test func withoutARoadGraphEstimatesAreStraightLinesAndOrderedBySaysSo() async throws {
    let (fleet, _) = try await makeFleet()
    try await add(fleet, "b", at: north(800))
    try await add(fleet, "a", at: north(300))
    for order in VehicleMatchOrder.allCases where order != .unknown {
      let matches = try fleet.searchVehicles(caller: admin, provider: provider, search: search { $0.orderBy = order })
      #expect(ids(matches) == ["a", "b"])
      #expect(matches.allSatisfy { $0.requestedOrderedBy == order && $0.orderedBy == .pickupPointStraightDistance })
    }
    let first = try #require(
      try fleet.searchVehicles(caller: admin, provider: provider, search: search()).first)
    #expect(abs(Double(first.pickupStraightLineDistanceMeters) - 300) <= 1)
    #expect(abs(Double(first.pickupDistanceMeters ?? 0) - 300) <= 1)
    let seconds = first.pickupETA!.timeIntervalSince(first.waypoints[0].eta!)
    #expect(abs(seconds - 300 / StraightLineTravel.defaultSpeed) < 0.5)
    let toDropoff = monaco.distance(to: casino)
    #expect(abs(Double(first.pickupToDropoffDistanceMeters ?? 0) - toDropoff) <= 1)
    #expect(first.matchType == .exclusive && first.tripType == .exclusive)
    #expect(first.waypoints.map(\.location) == [north(300), monaco, casino])
  }

  @Test func backToBackOnlyWithTheFlagsAndATripEnrouteToDropoff() async throws {
    let (fleet, _) = try await makeFleet()
    try await add(fleet, "b2b", at: north(100)) { $0.vehicle.backToBackEnabled = true }
    try await add(fleet, "no-flag", at: north(100))
    for id in ["b2b", "no-flag"] {
      _ = try await fleet.createTrip(
        caller: admin, provider: provider, tripID: "t-\(id)", trip: tripInput("t-\(id)", vehicle: id))
    }
    let plain = try fleet.searchVehicles(caller: admin, provider: provider, search: search())
    #expect(plain.isEmpty)
    // Enroute to pickup: not back-to-back yet.
    let early = try fleet.searchVehicles(
      caller: admin, provider: provider, search: search { $0.includeBackToBack = true })
    #expect(early.isEmpty)
    for id in ["b2b", "no-flag"] {
      for status in [TripStatus.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff] {
        var t = Trip(provider: provider, id: "t-\(id)")
        t.status = status
        _ = try await fleet.updateTrip(caller: admin, name: tripName("t-\(id)"), trip: t, mask: ["trip_status"])
      }
    }
    let matches = try fleet.searchVehicles(
      caller: admin, provider: provider, search: search { $0.includeBackToBack = true })
    #expect(ids(matches) == ["b2b"])
    let match = try #require(matches.first)
    #expect(match.matchType == .backToBack)
    // Through its current drop-off (casino) to the pickup: the ETA counts both drives.
    #expect(match.waypoints.map(\.location) == [north(100), casino, monaco, casino])
    let viaDropoff = north(100).distance(to: casino) + casino.distance(to: monaco)
    #expect(abs(Double(match.pickupDistanceMeters ?? 0) - viaDropoff) <= 2)
  }

  @Test func sharedRidesFitBetweenStopsButNeverInsideAnExclusiveTrip() async throws {
    let (fleet, _) = try await makeFleet()
    let start = north(-300)
    try await add(fleet, "pool", at: start)
    try await add(fleet, "exclusive", at: start) { $0.vehicle.backToBackEnabled = true }
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "s", trip: tripInput("s", type: .shared, vehicle: "pool"))
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "x", trip: tripInput("x", type: .exclusive, vehicle: "exclusive"))
    for status in [TripStatus.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff] {
      var t = Trip(provider: provider, id: "x")
      t.status = status
      _ = try await fleet.updateTrip(caller: admin, name: tripName("x"), trip: t, mask: ["trip_status"])
    }
    // A rider on the way to the other rider's pickup, going half as far as they do: picked up
    // first and dropped first.
    let pickup = north(-100)
    let dropoff = LatLng(
      latitude: (monaco.latitude + casino.latitude) / 2, longitude: (monaco.longitude + casino.longitude) / 2)
    func shared(_ passengers: Int32) -> VehicleSearch {
      search { s in
        s.tripTypes = [.shared]
        s.currentTripsPresent = .any
        s.pickupPoint = TerminalLocation(point: pickup)
        s.dropoffPoint = TerminalLocation(point: dropoff)
        s.minimumCapacity = passengers
      }
    }
    let matches = try fleet.searchVehicles(caller: admin, provider: provider, search: shared(1))
    let pool = try #require(matches.first { $0.vehicle.id == "pool" })
    #expect(pool.matchType == .carpool)
    #expect(pool.waypoints.map(\.location) == [start, pickup, monaco, dropoff])
    #expect(pool.pickupInsertionIndex == 0 && pool.dropoffInsertionIndex == 1)
    // The EXCLUSIVE trip's rider is on board and rides alone: the new rider comes after.
    let alone = try #require(matches.first { $0.vehicle.id == "exclusive" })
    #expect(alone.matchType == .carpoolBackToBack)
    #expect(alone.waypoints.map(\.location) == [start, casino, pickup, dropoff])
    // Four riders do not fit beside the other rider: they are dropped before that pickup.
    let four = try fleet.searchVehicles(caller: admin, provider: provider, search: shared(4))
    let first = try #require(four.first { $0.vehicle.id == "pool" })
    #expect(first.waypoints.map(\.location) == [start, pickup, dropoff])
    #expect(first.pickupInsertionIndex == 0 && first.dropoffInsertionIndex == 0)
  }

  @Test func aSharedRiderIsNeverPickedUpAheadOfAnExclusiveRiderStillToBoard() async throws {
    let (fleet, _) = try await makeFleet()
    let start = north(-300)
    try await add(fleet, "bound", at: start) { $0.vehicle.backToBackEnabled = true }
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "x", trip: tripInput("x", type: .exclusive, vehicle: "bound"))
    var t = Trip(provider: provider, id: "x")
    t.status = .enrouteToPickup
    _ = try await fleet.updateTrip(caller: admin, name: tripName("x"), trip: t, mask: ["trip_status"])
    // A rider right on the car's way to the EXCLUSIVE pickup, going a little further along it:
    // the cheapest drive would take them first, but the rider the car is bound for comes first.
    let found = try fleet.searchVehicles(
      caller: admin, provider: provider,
      search: search { s in
        s.tripTypes = [.shared]
        s.currentTripsPresent = .any
        s.pickupPoint = TerminalLocation(point: north(-200))
        s.dropoffPoint = TerminalLocation(point: north(-100))
      })
    let match = try #require(found.first { $0.vehicle.id == "bound" })
    #expect(match.matchType == .carpoolBackToBack)
    #expect(match.waypoints.map(\.location) == [start, monaco, casino, north(-200), north(-100)])
  }

  /// Straight lines, counting the drives asked for in fans.
  final class CountingTravel: TravelEstimator, @unchecked Sendable {
    let inner = StraightLineTravel()
    var routed: [Int] = []
    var followsRoads: Bool { true }
    func fan(to target: LatLng, from origins: [LatLng], now: Date) -> any TravelFan {
      routed.append(origins.count)
      return inner.fan(to: target, from: origins, now: now)
    }
    func legs(through points: [LatLng], now: Date) -> [TravelEstimate]? { inner.legs(through: points, now: now) }
    func matrix(_ points: [LatLng]) -> [[TravelEstimate?]] { inner.matrix(points) }
    func matrix(from sources: [LatLng], to targets: [LatLng]) -> [[TravelEstimate?]] {
      inner.matrix(from: sources, to: targets)
    }
  }

  @Test func aSearchRoutesTheNearestCarsForTheCountAskedNotEveryCarInTheRadius() async throws {
    let travel = CountingTravel()
    let fleet = try await Fleet(store: MemoryStore(), travel: travel)
    // 300 cars within the radius, one every 5 m going north; the nearest are the first.
    for i in 0..<300 { try await add(fleet, "v\(1000 + i)", at: north(Double(i) * 5 + 1)) }
    let five = try fleet.searchVehicles(caller: admin, provider: provider, search: search { $0.count = 5 })
    #expect(ids(five) == (1000..<1005).map { "v\($0)" })
    let twenty = try fleet.searchVehicles(caller: admin, provider: provider, search: search { $0.count = 20 })
    #expect(ids(twenty) == (1000..<1020).map { "v\($0)" })
    // At least 64, eight per vehicle asked for.
    #expect(travel.routed == [64, 160])
    // Few candidates: all of them.
    let few = try await Fleet(store: MemoryStore(), travel: travel)
    for i in 0..<10 { try await add(few, "w\(i)", at: north(Double(i) * 50 + 1)) }
    _ = try few.searchVehicles(caller: admin, provider: provider, search: search { $0.count = 1 })
    #expect(travel.routed.last == 10)
  }

  @Test func consumersSeeNearbyCarsWithoutTheirTripsAndDriversMayNotSearch() async throws {
    let (fleet, _) = try await makeFleet()
    try await add(fleet, "car", at: north(100)) {
      $0.vehicle.attributes = [Attribute(key: "secret", value: .string("x"))]
    }
    let rider = Caller(provider: provider, role: .consumer)
    let seen = try fleet.searchVehicles(caller: rider, provider: provider, search: search())
    #expect(ids(seen) == ["car"])
    #expect(seen[0].vehicle.attributes.isEmpty && seen[0].vehicle.lastLocation?.location == north(100))
    let driver = Caller(provider: provider, role: .driver, vehicleID: "car")
    let error = await fleetError { _ = try fleet.searchVehicles(caller: driver, provider: provider, search: search()) }
    #expect(error?.code == .permissionDenied)
  }

  @Test func theGridFollowsEveryLocationUpdate() async throws {
    let (fleet, _) = try await makeFleet()
    try await add(fleet, "car", at: north(5000))
    #expect(try fleet.searchVehicles(caller: admin, provider: provider, search: search()).isEmpty)
    var moved = vehicleInput("car")
    moved.vehicle.lastLocation = VehicleLocation(location: north(400))
    _ = try await fleet.updateVehicle(caller: admin, name: vehicleName("car"), vehicle: moved, mask: ["last_location"])
    #expect(ids(try fleet.searchVehicles(caller: admin, provider: provider, search: search())) == ["car"])
    try await fleet.deleteVehicle(caller: admin, name: vehicleName("car"))
    #expect(try fleet.searchVehicles(caller: admin, provider: provider, search: search()).isEmpty)
  }
}

@Suite("Carpool insertion")
struct CarpoolInsertionTests {
  @Test func picksTheCheapestPlaceThatKeepsTheOrderAndFits() {
    // Points on a line (seconds = distance): vehicle 0, stops at 10 (pickup) and 40 (drop-off),
    // new pickup at 20 and drop-off at 30.
    let x = [0.0, 10, 40, 20, 30]
    let seconds = x.map { a in x.map { b in Optional(abs(a - b)) } }
    let stops = [CarpoolInsertion.Stop(passengers: 1), CarpoolInsertion.Stop(passengers: -1)]
    let best = CarpoolInsertion.cheapest(
      stops: stops, onboard: 0, exclusiveOnboard: 0, capacity: 4, passengers: 1, seconds: seconds,
      allowAfterAll: true)
    #expect(best == CarpoolInsertion(pickupIndex: 1, dropoffIndex: 1, seconds: 40))
    #expect(best?.order(["p1", "d1"], pickup: "P", dropoff: "D") == ["p1", "P", "D", "d1"])
    // No room beside the other riders: only after them.
    let full = CarpoolInsertion.cheapest(
      stops: [CarpoolInsertion.Stop(passengers: 3), CarpoolInsertion.Stop(passengers: -3)], onboard: 0,
      exclusiveOnboard: 0, capacity: 4, passengers: 2, seconds: seconds, allowAfterAll: true)
    #expect(full?.pickupIndex == 2)
    // Not after them either (no back-to-back): before them, off the way.
    let before = CarpoolInsertion.cheapest(
      stops: [CarpoolInsertion.Stop(passengers: 3), CarpoolInsertion.Stop(passengers: -3)], onboard: 0,
      exclusiveOnboard: 0, capacity: 4, passengers: 2, seconds: seconds, allowAfterAll: false)
    #expect(before == CarpoolInsertion(pickupIndex: 0, dropoffIndex: 0, seconds: 80))
    // With the car already full, nowhere.
    let nowhere = CarpoolInsertion.cheapest(
      stops: [CarpoolInsertion.Stop(passengers: 0), CarpoolInsertion.Stop(passengers: -3)], onboard: 3,
      exclusiveOnboard: 0, capacity: 4, passengers: 2, seconds: seconds, allowAfterAll: false)
    #expect(nowhere == nil)
    // An exclusive rider on board until the second stop.
    let exclusive = CarpoolInsertion.cheapest(
      stops: [CarpoolInsertion.Stop(passengers: 0), CarpoolInsertion.Stop(passengers: -1, exclusiveRiders: -1)],
      onboard: 1, exclusiveOnboard: 1, capacity: 4, passengers: 1, seconds: seconds, allowAfterAll: true)
    #expect(exclusive?.pickupIndex == 2)
  }
}

/// fleetd does a light search where it arrives and a larger one off its event loops: light is
/// a bounded amount of work, whatever the fleet's size.
@Suite("Light searches")
struct LightSearchTests {
  @Test func aSearchIsLightUpToSixteenVehiclesAndWithoutAFilterExpression() {
    var search = VehicleSearch()
    search.count = 16
    #expect(Fleet.isLight(search))
    search.count = 17
    #expect(!Fleet.isLight(search))
    search.count = 1
    search.filter = "attributes.class = \"premium\""
    #expect(!Fleet.isLight(search))
  }
}
