import FleetCore
import FleetGeometry
import Foundation
import Testing

@Suite("Fleet: trips")
struct FleetTripTests {
  @Test func createRequiresTypeAndPickup() async throws {
    let (fleet, _) = try await makeFleet()
    var noType = tripInput()
    noType.type = .unknown
    var error = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: noType)
    }
    #expect(error?.code == .invalidArgument && error?.message.contains("trip.trip_type") == true)
    var noPickup = tripInput()
    noPickup.pickupPoint = nil
    error = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: noPickup)
    }
    #expect(error?.message == "trip.pickup_point is required")
    var badPoint = tripInput()
    badPoint.dropoffPoint = TerminalLocation(point: LatLng(latitude: 100, longitude: 0))
    error = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: badPoint)
    }
    #expect(error?.message.contains("trip.dropoff_point.point.latitude") == true)
  }

  @Test func createIgnoresServerFieldsAndStartsNew() async throws {
    let (fleet, store) = try await makeFleet()
    var input = tripInput()
    input.status = .complete
    input.pickupTime = Date()
    let created = try await fleet.createTrip(caller: admin, provider: provider, tripID: "trip-1", trip: input)
    #expect(created.trip.status == .new)
    #expect(created.trip.pickupTime == nil)
    #expect(store.committed.withLock { $0.count } == 1)
    let duplicate = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "trip-1", trip: input)
    }
    #expect(duplicate?.code == .alreadyExists)
  }

  @Test func sharedTripsHaveNoIntermediateDestinations() async throws {
    let (fleet, _) = try await makeFleet()
    let error = await fleetError {
      _ = try await fleet.createTrip(
        caller: admin, provider: provider, tripID: "t", trip: tripInput(type: .shared, intermediates: [port]))
    }
    #expect(error?.code == .invalidArgument)
  }

  @Test func currentTripsFollowAssignmentCompletionAndReassignment() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(
      caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput("car-1"))
    _ = try await fleet.createVehicle(
      caller: admin, provider: provider, vehicleID: "car-2", vehicle: vehicleInput("car-2"))
    let created = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "trip-1", trip: tripInput(vehicle: "car-1"))
    #expect(created.vehicleWaypoints?.map(\.waypointType) == [.pickup, .dropOff])
    #expect(try fleet.getVehicle(caller: admin, name: vehicleName("car-1")).currentTrips == ["trip-1"])

    _ = try await fleet.updateTrip(
      caller: admin, name: tripName("trip-1"), trip: tripInput(vehicle: "car-2"), mask: ["vehicle_id"])
    #expect(try fleet.getVehicle(caller: admin, name: vehicleName("car-1")).currentTrips.isEmpty)
    #expect(try fleet.getVehicle(caller: admin, name: vehicleName("car-1")).waypoints.isEmpty)
    #expect(try fleet.getVehicle(caller: admin, name: vehicleName("car-2")).currentTrips == ["trip-1"])

    var progress = tripInput()
    progress.status = .enrouteToDropoff
    _ = try await fleet.updateTrip(caller: admin, name: tripName("trip-1"), trip: progress, mask: ["trip_status"])
    #expect(try fleet.getVehicle(caller: admin, name: vehicleName("car-2")).waypoints.map(\.waypointType) == [.dropOff])
    let trip = try fleet.getTrip(caller: admin, name: tripName("trip-1"))
    #expect(trip.trip.pickupTime != nil)
    #expect(trip.remainingWaypoints.map(\.waypointType) == [.dropOff])

    progress.status = .complete
    _ = try await fleet.updateTrip(caller: admin, name: tripName("trip-1"), trip: progress, mask: ["trip_status"])
    let vehicle = try fleet.getVehicle(caller: admin, name: vehicleName("car-2"))
    #expect(vehicle.currentTrips.isEmpty && vehicle.waypoints.isEmpty)
    #expect(try fleet.getTrip(caller: admin, name: tripName("trip-1")).trip.dropoffTime != nil)
  }

  @Test func unknownVehicleOrUnsupportedTripType() async throws {
    let (fleet, _) = try await makeFleet()
    var error = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput(vehicle: "ghost"))
    }
    #expect(error?.code == .notFound)
    _ = try await fleet.createVehicle(
      caller: admin, provider: provider, vehicleID: "solo", vehicle: vehicleInput("solo", types: [.exclusive]))
    error = await fleetError {
      _ = try await fleet.createTrip(
        caller: admin, provider: provider, tripID: "t", trip: tripInput(type: .shared, vehicle: "solo"))
    }
    #expect(error?.code == .failedPrecondition)
  }

  @Test func updateMaskRules() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput())
    for (mask, fragment) in [
      ([], "update_mask cannot be empty"), (["route"], "maintained by the server"),
      (["bogus"], "not an updatable field"), (["number_of_passengers"], "maintained by the server"),
    ] {
      let error = await fleetError {
        _ = try await fleet.updateTrip(caller: admin, name: tripName("t"), trip: tripInput(), mask: mask)
      }
      #expect(error?.code == .invalidArgument)
      #expect(error?.message.contains(fragment) == true, "\(mask): \(error?.message ?? "")")
    }
  }

  @Test func intermediateDestinationsVersionIsChecked() async throws {
    let clock = TestClock()
    let (fleet, _) = try await makeFleet(clock: clock)
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    let created = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "t", trip: tripInput(vehicle: "car-1", intermediates: [port, monaco]))
    let version = try #require(created.trip.intermediateDestinationsVersion)
    var update = tripInput()
    update.status = .arrivedAtPickup
    _ = try await fleet.updateTrip(caller: admin, name: tripName("t"), trip: update, mask: ["trip_status"])
    clock.advance(5)
    update.intermediateDestinations = [TerminalLocation(point: port)]
    _ = try await fleet.updateTrip(
      caller: admin, name: tripName("t"), trip: update, mask: ["intermediate_destinations"])
    update.status = .enrouteToIntermediateDestination
    update.intermediateDestinationIndex = 0
    update.intermediateDestinationsVersion = version
    let stale = await fleetError {
      _ = try await fleet.updateTrip(
        caller: admin, name: tripName("t"), trip: update, mask: ["trip_status", "intermediate_destination_index"])
    }
    #expect(stale?.code == .failedPrecondition)
    update.intermediateDestinationsVersion = try fleet.getTrip(caller: admin, name: tripName("t")).trip
      .intermediateDestinationsVersion
    let moved = try await fleet.updateTrip(
      caller: admin, name: tripName("t"), trip: update, mask: ["trip_status", "intermediate_destination_index"])
    #expect(moved.remainingWaypoints.map(\.waypointType) == [.intermediateDestination, .dropOff])
  }

  @Test func deleteRules() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput(vehicle: "car-1"))
    let active = await fleetError { try await fleet.deleteTrip(caller: admin, name: tripName("t")) }
    #expect(active?.code == .failedPrecondition)
    let vehicleBusy = await fleetError { try await fleet.deleteVehicle(caller: admin, name: vehicleName("car-1")) }
    #expect(vehicleBusy?.code == .failedPrecondition)
    var cancel = tripInput()
    cancel.status = .canceled
    _ = try await fleet.updateTrip(caller: admin, name: tripName("t"), trip: cancel, mask: ["trip_status"])
    try await fleet.deleteTrip(caller: admin, name: tripName("t"))
    let gone = await fleetError { _ = try fleet.getTrip(caller: admin, name: tripName("t")) }
    #expect(gone?.code == .notFound)
    try await fleet.deleteVehicle(caller: admin, name: vehicleName("car-1"))
  }

  @Test func sharedTripsInterleaveInTheGivenOrderExclusiveOnesDoNot() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "van", vehicle: vehicleInput("van"))
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "a", trip: tripInput("a", type: .shared, vehicle: "van"))
    var b = tripInput("b", type: .shared, vehicle: "van")
    b.pickupPoint = TerminalLocation(point: port)
    let pa = TripWaypoint(location: .init(point: monaco), tripID: "a", waypointType: .pickup)
    let da = TripWaypoint(location: .init(point: casino), tripID: "a", waypointType: .dropOff)
    let pb = TripWaypoint(location: .init(point: port), tripID: "b", waypointType: .pickup)
    let db = TripWaypoint(location: .init(point: casino), tripID: "b", waypointType: .dropOff)
    let created = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "b", trip: b, vehicleWaypoints: [pa, pb, da, db])
    #expect(created.vehicleWaypoints == [pa, pb, da, db])
    #expect(try fleet.getTrip(caller: admin, name: tripName("a")).remainingWaypoints == [pa, pb, da])

    let wrongOrder = await fleetError {
      _ = try await fleet.updateTrip(
        caller: admin, name: tripName("b"), trip: b, vehicleWaypoints: [pa, db, da, pb], mask: ["vehicle_waypoints"])
    }
    #expect(wrongOrder?.code == .invalidArgument)
    let missing = await fleetError {
      _ = try await fleet.updateTrip(
        caller: admin, name: tripName("b"), trip: b, vehicleWaypoints: [pa, pb, da], mask: ["vehicle_waypoints"])
    }
    #expect(missing?.code == .invalidArgument)

    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "cab", vehicle: vehicleInput("cab"))
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "x", trip: tripInput("x", vehicle: "cab"))
    let px = TripWaypoint(location: .init(point: monaco), tripID: "x", waypointType: .pickup)
    let dx = TripWaypoint(location: .init(point: casino), tripID: "x", waypointType: .dropOff)
    let py = TripWaypoint(location: .init(point: monaco), tripID: "y", waypointType: .pickup)
    let dy = TripWaypoint(location: .init(point: casino), tripID: "y", waypointType: .dropOff)
    let interleaved = await fleetError {
      _ = try await fleet.createTrip(
        caller: admin, provider: provider, tripID: "y", trip: tripInput("y", vehicle: "cab"),
        vehicleWaypoints: [px, py, dx, dy])
    }
    #expect(interleaved?.code == .invalidArgument)
    // Back-to-back: the second exclusive trip queues after the first.
    let queued = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "y", trip: tripInput("y", vehicle: "cab"))
    #expect(queued.vehicleWaypoints == [px, dx, py, dy])
  }

  @Test func consumerAndDriverRights() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    _ = try await fleet.createTrip(
      caller: admin, provider: provider, tripID: "mine", trip: tripInput("mine", vehicle: "car-1"))
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "other", trip: tripInput("other"))
    var location = VehicleLocation(location: monaco)
    location.rawLocation = monaco
    var input = vehicleInput()
    input.vehicle.lastLocation = location
    _ = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["last_location"])

    let consumer = Caller(provider: provider, role: .consumer, tripID: "mine")
    let seen = try fleet.getTrip(caller: consumer, name: tripName("mine"), view: .sdk)
    #expect(seen.view == .journeySharingV1S)
    #expect(seen.lastLocation?.location == monaco && seen.lastLocation?.rawLocation == nil)
    #expect(
      await fleetError { _ = try fleet.getTrip(caller: consumer, name: tripName("other")) }?.code == .permissionDenied)
    #expect(
      await fleetError { _ = try fleet.getVehicle(caller: consumer, name: vehicleName("car-1")) }?.code
        == .permissionDenied)

    let driver = Caller(provider: provider, role: .driver, vehicleID: "car-1")
    #expect(try fleet.getTrip(caller: driver, name: tripName("mine")).trip.id == "mine")
    #expect(
      await fleetError { _ = try fleet.getTrip(caller: driver, name: tripName("other")) }?.code == .permissionDenied)
    var status = tripInput()
    status.status = .enrouteToPickup
    _ = try await fleet.updateTrip(caller: driver, name: tripName("mine"), trip: status, mask: ["trip_status"])
    #expect(
      await fleetError {
        _ = try await fleet.updateTrip(
          caller: driver, name: tripName("mine"), trip: tripInput(vehicle: ""), mask: ["vehicle_id"])
      }?.code == .permissionDenied)
    #expect(
      await fleetError {
        _ = try await fleet.createTrip(caller: driver, provider: provider, tripID: "z", trip: tripInput())
      }?.code == .permissionDenied)

    let viewer = Caller(provider: provider, role: .viewer)
    #expect(try fleet.getTrip(caller: viewer, name: tripName("other")).trip.id == "other")
    #expect(
      await fleetError { try await fleet.deleteTrip(caller: viewer, name: tripName("other")) }?.code
        == .permissionDenied)
    #expect(
      await fleetError { _ = try fleet.getTrip(caller: Caller.admin(of: "elsewhere"), name: tripName("other")) }?.code
        == .permissionDenied)
  }

  @Test func searchTripsPagesStably() async throws {
    let (fleet, _) = try await makeFleet()
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    for i in 0..<5 {
      _ = try await fleet.createTrip(
        caller: admin, provider: provider, tripID: "t\(i)", trip: tripInput("t\(i)", vehicle: "car-1"))
    }
    var query = Fleet.TripSearch()
    query.vehicleID = "car-1"
    query.pageSize = 2
    var seen: [String] = []
    repeat {
      let page = try fleet.searchTrips(caller: admin, provider: provider, query: query)
      seen += page.trips.map(\.trip.id)
      query.pageToken = page.nextPageToken
      // A trip created mid-listing sorts before the cursor and does not shift later pages.
      if seen.count == 2 {
        _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "a", trip: tripInput("a"))
      }
    } while !query.pageToken.isEmpty
    #expect(seen == ["t0", "t1", "t2", "t3", "t4"])
    query.pageToken = "garbage"
    #expect(
      await fleetError { _ = try fleet.searchTrips(caller: admin, provider: provider, query: query) }?.code
        == .invalidArgument)
  }

  @Test func failedCommitStopsWrites() async throws {
    let (fleet, store) = try await makeFleet()
    store.failing.withLock { $0 = true }
    let error = await fleetError {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput())
    }
    #expect(error?.code == .unavailable)
    #expect(!fleet.isHealthy)
  }
}
