import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import FleetTestSupport
import Foundation
import Synchronization
import Testing

/// Trips followed from assignment to drop-off on Monaco's real roads, the fleet on real SQLite.
@Suite("Trip progress")
struct TripProgressTests {
  /// Drives `drive` in 10-second steps from now, reporting each position; checks at every step
  /// that the remaining distance falls and that the ETA to the first waypoint is within 10 % of
  /// when the car really gets there. Returns the snapshots read.
  func follow(
    _ drive: SimulatedDrive, fleet: Fleet, clock: TestTime, vehicle: String, trip: String
  ) async throws -> [TripSnapshot] {
    let start = clock.now
    let arrival = start.addingTimeInterval(drive.duration)
    var snapshots: [TripSnapshot] = []
    var previousRemaining = Double.infinity
    var t = 0.0
    while t < drive.duration {
      t = min(drive.duration, t + 10)
      clock.advance(start.addingTimeInterval(t).timeIntervalSince(clock.now))
      _ = try await report(fleet, vehicle, at: drive.position(after: t), time: clock.now)
      let snapshot = try fleet.getTrip(caller: admin, name: tripName(trip))
      let first = try #require(snapshot.progress?.legs.first, "no progress \(t) s into the drive")
      #expect(
        first.distanceMeters <= previousRemaining + 1,
        "\(t) s: \(first.distanceMeters) m left, \(previousRemaining) m before")
      // The route the engine follows is the one driven, so what is left of it matches.
      #expect(abs(first.distanceMeters - (drive.distance - drive.distance(after: t))) < 25)
      let predicted = first.eta.timeIntervalSince(clock.now)
      let actual = arrival.timeIntervalSince(clock.now)
      if actual >= 30 {
        #expect(abs(predicted - actual) <= 0.1 * actual, "\(t) s: ETA in \(predicted) s, arrives in \(actual) s")
      }
      previousRemaining = first.distanceMeters
      snapshots.append(snapshot)
    }
    return snapshots
  }

  @Test func anExclusiveTripFromAssignmentToDropOff() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.palace)
    let created = try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.port, dropoff: Place.larvotto)
    // Progress from the moment of assignment: a leg to the pickup and one on to the drop-off.
    let legs = try #require(created.progress?.legs)
    #expect(legs.map(\.waypoint.waypointType) == [.pickup, .dropOff])
    #expect(legs[0].distanceMeters > 300 && legs[1].distanceMeters > 300)
    #expect(legs[1].eta > legs[0].eta)
    #expect(created.trip.pickupTime == legs[0].eta)
    #expect(created.trip.dropoffTime == legs[1].eta)

    // A rider watching the trip.
    let rider = Caller(provider: provider, role: .consumer, tripID: "ride")
    let stream = try fleet.watchTrip(caller: rider, name: tripName("ride"))
    let received = Task {
      var seen: [TripSnapshot] = []
      for try await update in stream.updates { seen.append(update.snapshot) }
      return seen
    }

    try await setStatus(fleet, "ride", .enrouteToPickup)
    let toPickup = SimulatedDrive(route: try await monacoRouting().route([Place.palace, Place.port]))
    let approach = try await follow(toPickup, fleet: fleet, clock: clock, vehicle: "car", trip: "ride")
    #expect(approach.count >= 5)
    let atPickup = try fleet.getVehicle(caller: admin, name: vehicleName("car"))
    #expect(atPickup.navigationStatus == .arrivedAtDestination)
    #expect(atPickup.lastLocation?.isRoadSnapped == true)

    try await setStatus(fleet, "ride", .arrivedAtPickup)
    clock.advance(30)
    try await setStatus(fleet, "ride", .enrouteToDropoff)
    let pickedUp = try fleet.getTrip(caller: admin, name: tripName("ride"))
    // The pickup is passed: it leaves the remaining waypoints, and its time is now the actual one.
    #expect(pickedUp.remainingWaypoints.map(\.waypointType) == [.dropOff])
    #expect(pickedUp.progress?.legs.map(\.waypoint.waypointType) == [.dropOff])
    #expect(abs(try #require(pickedUp.trip.pickupTime).timeIntervalSince(clock.now)) < 0.001)
    #expect(try #require(pickedUp.trip.dropoffTime) > clock.now)

    let toDropoff = SimulatedDrive(route: try await monacoRouting().route([toPickup.points.last!, Place.larvotto]))
    _ = try await follow(toDropoff, fleet: fleet, clock: clock, vehicle: "car", trip: "ride")
    try await setStatus(fleet, "ride", .complete)
    let done = try fleet.getTrip(caller: admin, name: tripName("ride"))
    // Fleet Engine leaves the route fields unset once a trip is over.
    #expect(done.progress == nil)
    #expect(done.remainingWaypoints.isEmpty)
    #expect(abs(try #require(done.trip.dropoffTime).timeIntervalSince(clock.now)) < 0.001)

    // The stream ended by itself after COMPLETE; what arrived is in lifecycle order, in the
    // rider's view, and moved towards the pickup.
    let seen = try await received.value
    let statuses = seen.map(\.trip.status)
    #expect(statuses.first == .new)
    #expect(statuses.last == .complete)
    let order: [TripStatus] = [.new, .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete]
    #expect(zip(statuses, statuses.dropFirst()).allSatisfy { order.firstIndex(of: $0)! <= order.firstIndex(of: $1)! })
    #expect(seen.allSatisfy { $0.view == .journeySharingV1S })
    let approaching = seen.filter { $0.trip.status == .enrouteToPickup }.compactMap {
      $0.progress?.legs.first?.distanceMeters
    }
    #expect(approaching.count >= 2)
    #expect(zip(approaching, approaching.dropFirst()).allSatisfy { $1 <= $0 + 1 })
  }

  @Test func aSharedVehicleVisitsWaypointsInItsOrder() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "van", at: Place.palace)
    try await createTrip(fleet, "a", type: .shared, vehicle: "van", pickup: Place.port, dropoff: Place.larvotto)
    try await createTrip(fleet, "b", type: .shared, vehicle: "van", pickup: Place.casino, dropoff: Place.palace)
    // Pick both riders up before dropping either off.
    let waypoints = try fleet.getVehicle(caller: admin, name: vehicleName("van")).waypoints
    let order = [waypoints[0], waypoints[2], waypoints[1], waypoints[3]]
    var update = Trip(provider: provider, id: "b")
    update.type = .shared
    _ = try await fleet.updateTrip(
      caller: admin, name: tripName("b"), trip: update, vehicleWaypoints: order, mask: ["vehicle_waypoints"])

    let a = try fleet.getTrip(caller: admin, name: tripName("a"))
    let b = try fleet.getTrip(caller: admin, name: tripName("b"))
    // A's remaining waypoints end at its drop-off and include B's pickup before it.
    #expect(a.remainingWaypoints.map(\.tripID) == ["a", "b", "a"])
    #expect(try #require(a.progress).legs.map(\.waypoint) == a.remainingWaypoints)
    #expect(b.remainingWaypoints.map(\.tripID) == ["a", "b", "a", "b"])
    let etas = try #require(b.progress).legs.map(\.eta)
    #expect(zip(etas, etas.dropFirst()).allSatisfy { $0 < $1 })
    #expect(b.trip.pickupTime == etas[1])
    #expect(a.trip.dropoffTime == etas[2])
    #expect(b.trip.dropoffTime == etas[3])
    let van = try fleet.getVehicle(caller: admin, name: vehicleName("van"))
    #expect(van.currentRouteSegmentEndPoint == order[0])
    #expect(van.remainingDistanceMeters == Int32(a.progress!.legs[0].distanceMeters.rounded()))
  }

  /// A rider whose car first finishes another ride sees one unbroken route: the first leg from
  /// the car to the other drop-off, the next from there to their own pickup.
  @Test func aBackToBackRiderSeesTheWholeWayToTheirPickup() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "cab", at: Place.palace)
    try await createTrip(fleet, "first", vehicle: "cab", pickup: Place.palace, dropoff: Place.port)
    try await setStatus(fleet, "first", .enrouteToPickup)
    try await setStatus(fleet, "first", .arrivedAtPickup)
    try await setStatus(fleet, "first", .enrouteToDropoff)
    try await createTrip(fleet, "next", vehicle: "cab", pickup: Place.casino, dropoff: Place.larvotto)
    // On the road below the palace, past the first pickup.
    let onTheRoad = LatLng(latitude: 43.7315, longitude: 7.4210)
    clock.advance(5)
    _ = try await report(fleet, "cab", at: onTheRoad, time: clock.now)

    let rider = Caller(provider: provider, role: .consumer, tripID: "next")
    let shared = try fleet.getTrip(caller: rider, name: tripName("next"))
    #expect(shared.remainingWaypoints.map(\.tripID) == ["", "next", "next"])
    let legs = try #require(shared.progress).legs
    #expect(legs.count == 3)
    let first = try #require(legs.first?.path.first)
    #expect(first.distance(to: onTheRoad) < 30)
    for (leg, next) in zip(legs, legs.dropFirst()) {
      let end = try #require(leg.path.last)
      let start = try #require(next.path.first)
      #expect(end.distance(to: start) < 1, "a leg starts where the one before it ends")
    }
    #expect(try #require(legs[0].path.last).distance(to: Place.port) < 60)
    #expect(try #require(legs[1].path.last).distance(to: Place.casino) < 60)
    #expect(try #require(legs[2].path.last).distance(to: Place.larvotto) < 60)
  }

  @Test func aVehicleLeavingItsRouteIsRerouted() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.palace)
    try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.larvotto, dropoff: Place.port)
    let before = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress)
    // Off to the port instead, well away from the planned route.
    let detour = SimulatedDrive(route: try await monacoRouting().route([Place.palace, Place.port]))
    let planned = before.legs[0].path
    let away = try #require(
      (0..<Int(detour.duration)).lazy.map { detour.position(after: Double($0)) }
        .first { point in planned.allSatisfy { point.distance(to: $0) > 150 } })
    clock.advance(120)
    let vehicle = try await report(fleet, "car", at: away, time: clock.now)
    #expect(vehicle.navigationStatus == .offRoute)
    let after = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress)
    #expect(after.routeVersion > before.routeVersion)
    #expect(try #require(after.legs[0].path.first).distance(to: away) < 40)
    // Driving on along the new route is on route again.
    clock.advance(5)
    let next = try await report(
      fleet, "car", at: after.legs[0].path[min(3, after.legs[0].path.count - 1)], time: clock.now)
    #expect(next.navigationStatus == .enrouteToDestination)
  }

  /// A car on a junction is on the road it heads into. Where Boulevard Albert 1er forks to
  /// Avenue John F. Kennedy, the Sainte-Dévote roundabout touches the same point: a plan from
  /// there onto the roundabout goes round 750 m more to the Larvotto than the car will drive.
  @Test func aPlanFromAJunctionLeavesTheWayTheCarHeads() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    let fork = LatLng(latitude: 43.736532, longitude: 7.421419)
    var car = Vehicle(provider: provider, id: "car")
    car.state = .online
    car.supportedTripTypes = [.exclusive]
    car.maximumCapacity = 4
    car.category = .auto
    var location = VehicleLocation(location: fork)
    location.heading = 20  // north-north-east, as the fork's right branch runs
    car.lastLocation = location
    _ = try await fleet.createVehicle(
      caller: admin, provider: provider, vehicleID: "car", vehicle: VehicleInput(vehicle: car))
    try await createTrip(
      fleet, "ride", vehicle: "car", pickup: LatLng(latitude: 43.7456, longitude: 7.4336), dropoff: Place.port)
    let leg = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    #expect(abs(leg.distanceMeters - 1_618) < 30, "\(leg.distanceMeters) m to the pickup")
  }

  /// 1.3 km in 2 seconds is no car's jump at real speeds: the position stays unsnapped and the
  /// ETA where it was. A simulation whose clock runs 30 times faster than real time (`fleetd
  /// demo --speedup`) drives its cars as many times faster; with the bound raised as much, the
  /// same position moves the ETA.
  @Test(arguments: [1.0, 30.0])
  func aJumpNoCarCouldMakeMovesTheETAOnlyUnderARaisedBound(speedup: Double) async throws {
    let clock = TestTime()
    var configuration = ProgressEngine.Configuration()
    configuration.maximumSpeed *= speedup
    let fleet = try await makeFleet(clock: clock, configuration: configuration)
    try await createVehicle(fleet, "car", at: Place.palace)
    try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.larvotto, dropoff: Place.port)
    let before = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    #expect(before.distanceMeters > 1_000)
    clock.advance(2)
    let vehicle = try await report(fleet, "car", at: Place.larvotto, time: clock.now)
    let after = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    if speedup == 1 {
      #expect(vehicle.lastLocation?.isRoadSnapped == false)
      #expect(abs(after.distanceMeters - before.distanceMeters) < 1)
    } else {
      #expect(vehicle.lastLocation?.isRoadSnapped == true)
      // Beside the pickup (the route to it from that side of the road is a few hundred metres).
      #expect(after.distanceMeters < before.distanceMeters / 2)
    }
  }

  @Test func aBacklogAfterAnOutageNeverOverridesANewerPosition() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.palace)
    try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.larvotto, dropoff: Place.port)
    let drive = SimulatedDrive(route: try await monacoRouting().route([Place.palace, Place.larvotto]))
    let start = clock.now
    clock.advance(120)
    let now = drive.position(after: 120)
    _ = try await report(fleet, "car", at: now, time: clock.now)
    let current = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    // The positions recorded during the outage arrive late, newest first.
    var v = Vehicle(provider: provider, id: "car")
    let past = [90.0, 60, 30].map { t in
      var location = VehicleLocation(location: drive.position(after: t))
      location.updateTime = start.addingTimeInterval(t)
      return location
    }
    let updated = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car"), vehicle: VehicleInput(vehicle: v, pastLocations: past),
      mask: ["past_locations"])
    v = updated
    #expect(v.lastLocation?.updateTime == clock.now)
    let after = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    #expect(abs(after.distanceMeters - current.distanceMeters) < 1)
  }

  /// A CreateVehicle refused because the vehicle exists (`fleetd demo` started again on its own
  /// data makes its cars again, each at its first street) leaves the vehicle where it is. Its
  /// position went into the vehicle's trace before the refusal: the next plan left from that
  /// street, 800 m more to the drop-off, and the car's true report was judged a jump.
  @Test func aRefusedCreateLeavesTheVehicleWhereItIs() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.port)
    try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.larvotto, dropoff: Place.palace)
    let before = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    clock.advance(60)
    let refused = await #expect(throws: FleetError.self) { try await createVehicle(fleet, "car", at: Place.casino) }
    #expect(refused?.code == .alreadyExists)
    let after = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress?.legs.first)
    #expect(abs(after.distanceMeters - before.distanceMeters) < 1)
    clock.advance(2)
    let vehicle = try await report(fleet, "car", at: Place.port, time: clock.now)
    #expect(vehicle.lastLocation?.isRoadSnapped == true, "\(String(describing: vehicle.lastLocation))")
  }

  @Test func getTripLeavesOutRouteTheCallerAlreadyHas() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.palace)
    try await createTrip(fleet, "ride", vehicle: "car", pickup: Place.larvotto, dropoff: Place.port)
    let full = try #require(try fleet.getTrip(caller: admin, name: tripName("ride")).progress)
    #expect(full.includesRoute && full.includesTraffic && full.includesWaypointPaths)
    let since = TripVersions(
      currentRouteSegment: full.routeVersion, currentRouteSegmentTraffic: full.trafficVersion,
      remainingWaypointsRoute: full.routeVersion)
    let unchanged = try #require(try fleet.getTrip(caller: admin, name: tripName("ride"), versions: since).progress)
    #expect(!unchanged.includesRoute && !unchanged.includesTraffic && !unchanged.includesWaypointPaths)
    let older = TripVersions(currentRouteSegment: full.routeVersion.addingTimeInterval(-1))
    #expect(try fleet.getTrip(caller: admin, name: tripName("ride"), versions: older).progress?.includesRoute == true)
  }

  @Test func aConsumerCanWatchOnlyItsOwnTrip() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "car", at: Place.palace)
    try await createTrip(fleet, "mine", vehicle: "car", pickup: Place.port, dropoff: Place.casino)
    try await createTrip(fleet, "theirs", vehicle: "", pickup: Place.port, dropoff: Place.casino)
    let rider = Caller(provider: provider, role: .consumer, tripID: "mine")
    #expect(throws: FleetError.self) { _ = try fleet.watchTrip(caller: rider, name: tripName("theirs")) }
    do {
      _ = try fleet.watchTrip(caller: rider, name: tripName("theirs"))
    } catch {
      #expect(error.code == .permissionDenied)
    }
    // A driver's stream fails once the trip is taken off its vehicle.
    let driver = Caller(provider: provider, role: .driver, vehicleID: "car")
    let stream = try fleet.watchTrip(caller: driver, name: tripName("mine"))
    var update = Trip(provider: provider, id: "mine")
    update.vehicleID = ""
    _ = try await fleet.updateTrip(caller: admin, name: tripName("mine"), trip: update, mask: ["vehicle_id"])
    var iterator = stream.updates.makeAsyncIterator()
    #expect(try await iterator.next()?.snapshot.trip.vehicleID == "car")
    await #expect(throws: FleetError.self) { _ = try await iterator.next() }
  }
}
