import FleetCore
import FleetGeometry
import Foundation
import Testing

@Suite("Fleet: vehicles")
struct FleetVehicleTests {
  @Test func createRequiresItsFields() async throws {
    let (fleet, _) = try await makeFleet()
    let cases: [(String, (inout Vehicle) -> Void)] = [
      ("vehicle.vehicle_state", { $0.state = .unknown }),
      ("vehicle.supported_trip_types", { $0.supportedTripTypes = [] }),
      ("vehicle.maximum_capacity", { $0.maximumCapacity = 0 }),
      ("vehicle.vehicle_type", { $0.category = .unknown }),
    ]
    for (field, breakIt) in cases {
      var input = vehicleInput()
      breakIt(&input.vehicle)
      let error = await fleetError {
        _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "v", vehicle: input)
      }
      #expect(error?.code == .invalidArgument)
      #expect(error?.message.contains(field) == true, "\(field): \(error?.message ?? "none")")
    }
  }

  @Test func updateVehicleAppliesOnlyTheMask() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    var input = vehicleInput()
    input.vehicle.state = .offline
    input.vehicle.maximumCapacity = 7
    let updated = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["vehicle_state"])
    #expect(updated.state == .offline && updated.maximumCapacity == 4)
    let owned = await fleetError {
      _ = try await fleet.updateVehicle(
        caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["current_trips"])
    }
    #expect(owned?.code == .invalidArgument)
    let driver = Caller(provider: provider, role: .driver, vehicleID: "car-1")
    let denied = await fleetError {
      _ = try await fleet.updateVehicle(
        caller: driver, name: vehicleName("car-1"), vehicle: input, mask: ["maximum_capacity"])
    }
    #expect(denied?.code == .permissionDenied)
  }

  @Test func locationsAreStampedAndPastLocationsNeverOverrideNewer() async throws {
    let clock = TestClock()
    let (fleet, _) = try await makeFleet(clock: clock)
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    var input = vehicleInput()
    var now = VehicleLocation(location: casino)
    now.updateTime = clock.read()
    input.vehicle.lastLocation = now
    let updated = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["last_location"])
    #expect(updated.lastLocation?.serverTime != nil)
    var old = VehicleLocation(location: port)
    old.updateTime = clock.read().addingTimeInterval(-60)
    input.pastLocations = [old]
    let afterPast = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["past_locations"])
    #expect(afterPast.lastLocation?.location == casino)
    var newer = VehicleLocation(location: port)
    newer.updateTime = clock.read().addingTimeInterval(30)
    input.pastLocations = [old, newer]
    #expect(
      try await fleet.updateVehicle(caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["past_locations"])
        .lastLocation?.location == port)
    var bad = VehicleLocation(location: monaco)
    bad.heading = 360
    input.vehicle.lastLocation = bad
    let error = await fleetError {
      _ = try await fleet.updateVehicle(
        caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["last_location"])
    }
    #expect(error?.message.contains("vehicle.last_location.heading") == true)
  }

  @Test func aReportOlderThanTheStoredPositionWritesNothing() async throws {
    let clock = TestClock()
    let (fleet, store) = try await makeFleet(clock: clock)
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    func report(_ point: LatLng, secondsFromNow: TimeInterval, state: VehicleState? = nil) -> LocationReport {
      locationReport(point, at: clock.read().addingTimeInterval(secondsFromNow), state: state)
    }
    let newer = try #require(
      try await fleet.submitReports([report(casino, secondsFromNow: 0)], caller: admin)
        .stored().first?.get())
    let writes = store.entityWrites
    clock.advance(5)
    // Older by the device's clock: acknowledged, keeps the newer position, and stores nothing.
    let stale = try #require(
      try await fleet.submitReports([report(port, secondsFromNow: -60)], caller: admin)
        .stored().first?.get())
    #expect(stale.lastLocation?.location == casino)
    #expect(stale.revision == newer.revision && stale.updateTime == newer.updateTime)
    #expect(store.entityWrites == writes)
    // An old position with something else new is still written (the state), keeping the position.
    let offline = try #require(
      try await fleet.submitReports(
        [report(port, secondsFromNow: -60, state: .offline)], caller: admin
      ).stored().first?.get())
    #expect(offline.state == .offline && offline.lastLocation?.location == casino)
    #expect(offline.revision > newer.revision)
    #expect(store.entityWrites == writes + 1)
  }

  @Test func attributesMergeByKey() async throws {
    let (fleet, _) = try await makeFleet()
    var input = vehicleInput()
    input.vehicle.attributes = [
      Attribute(key: "color", value: .string("red")), Attribute(key: "ev", value: .bool(false)),
    ]
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: input)
    let merged = try await fleet.updateVehicleAttributes(
      caller: admin, name: vehicleName("car-1"),
      attributes: [Attribute(key: "ev", value: .bool(true)), Attribute(key: "seats", value: .number(7))])
    #expect(
      merged == [
        Attribute(key: "color", value: .string("red")), Attribute(key: "ev", value: .bool(true)),
        Attribute(key: "seats", value: .number(7)),
      ])
    #expect(
      await fleetError {
        _ = try await fleet.updateVehicleAttributes(caller: admin, name: vehicleName("car-1"), attributes: [])
      }?.code == .invalidArgument)
  }

  @Test func listVehiclesFiltersAndPages() async throws {
    let clock = TestClock()
    let (fleet, _) = try await makeFleet(clock: clock)
    for i in 0..<6 {
      var input = vehicleInput("v\(i)", types: i % 2 == 0 ? [.exclusive] : [.shared], capacity: Int32(i + 1))
      input.vehicle.category = i < 5 ? .auto : .truck
      input.vehicle.attributes = [Attribute(key: "tier", value: .string(i < 3 ? "gold" : "basic"))]
      input.vehicle.lastLocation = VehicleLocation(location: i < 2 ? monaco : LatLng(latitude: 48.85, longitude: 2.35))
      _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "v\(i)", vehicle: input)
    }
    var query = Fleet.VehicleListing()
    #expect(
      await fleetError { _ = try fleet.listVehicles(caller: admin, provider: provider, query: query) }?.code
        == .invalidArgument)
    query.categories = [.auto]
    #expect(try fleet.listVehicles(caller: admin, provider: provider, query: query).totalSize == 5)
    query.minimumCapacity = 3
    query.tripTypes = [.exclusive]
    #expect(try fleet.listVehicles(caller: admin, provider: provider, query: query).vehicles.map(\.id) == ["v2", "v4"])
    query = Fleet.VehicleListing()
    query.categories = [.auto, .truck]
    query.requiredAttributes = ["tier:gold"]
    #expect(
      try fleet.listVehicles(caller: admin, provider: provider, query: query).vehicles.map(\.id) == ["v0", "v1", "v2"])
    query.requiredAttributes = []
    query.requiredOneOfAttributes = ["tier:platinum|tier:basic"]
    #expect(try fleet.listVehicles(caller: admin, provider: provider, query: query).totalSize == 3)
    query.requiredOneOfAttributes = []
    query.viewport = Viewport(low: LatLng(latitude: 43.7, longitude: 7.3), high: LatLng(latitude: 43.8, longitude: 7.5))
    #expect(try fleet.listVehicles(caller: admin, provider: provider, query: query).vehicles.map(\.id) == ["v0", "v1"])
    query.viewport = nil
    query.pageSize = 4
    let first = try fleet.listVehicles(caller: admin, provider: provider, query: query)
    #expect(first.vehicles.count == 4 && !first.nextPageToken.isEmpty && first.totalSize == 6)
    query.pageToken = first.nextPageToken
    let second = try fleet.listVehicles(caller: admin, provider: provider, query: query)
    #expect(second.vehicles.map(\.id) == ["v4", "v5"] && second.nextPageToken.isEmpty)
    query.categories = [.truck]
    #expect(
      await fleetError { _ = try fleet.listVehicles(caller: admin, provider: provider, query: query) }?.code
        == .invalidArgument)
    query = Fleet.VehicleListing()
    query.categories = [.auto]
    query.maximumStaleness = .seconds(60)
    clock.advance(120)
    #expect(try fleet.listVehicles(caller: admin, provider: provider, query: query).totalSize == 0)
  }
}

@Suite("Waypoint planner")
struct WaypointPlannerTests {
  @Test func dropsPassedWaypointsAndKeepsOthersInPlace() {
    var a = Trip(provider: "p", id: "a")
    a.vehicleID = "v"
    a.pickupPoint = TerminalLocation(point: monaco)
    a.dropoffPoint = TerminalLocation(point: casino)
    var b = a
    b.id = "b"
    let start = [
      a.ownRemainingWaypoints[0], b.ownRemainingWaypoints[0], a.ownRemainingWaypoints[1], b.ownRemainingWaypoints[1],
    ]
    a.status = .enrouteToDropoff
    let after = WaypointPlanner.update(start, after: a, onVehicle: "v")
    #expect(after.map(\.tripID) == ["b", "a", "b"])
    a.status = .complete
    #expect(WaypointPlanner.update(after, after: a, onVehicle: "v").map(\.tripID) == ["b", "b"])
  }
}
