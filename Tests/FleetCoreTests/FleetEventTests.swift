import FleetCore
import FleetGeometry
import Foundation
import Synchronization
import Testing

extension MemoryStore {
  /// The events committed so far, in commit order.
  var events: [FleetEvent] {
    committed.withLock { changes in
      changes.compactMap { change in
        guard case .putEvent(let event) = change else { return nil }
        return event
      }
    }
  }

  func events(of id: String) -> [FleetEventType] { events.filter { $0.subject.id == id }.map(\.type) }
}

@Suite("Events for webhooks")
struct FleetEventTests {
  /// Observers hear the events of each commit once it is durable, and nothing of a failed one.
  @Test func observersHearCommittedEventsOnly() async throws {
    let store = MemoryStore()
    let fleet = try await rideServiceFleet(store: store)
    let heard = Mutex<[FleetEventType]>([])
    fleet.observeEvents { events in heard.withLock { $0 += events.map(\.type) } }
    try await addVehicle(fleet, "car-1", at: monaco)
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: rideRequest())
    #expect(heard.withLock { $0 } == [.vehicleOnline, .rideCreated])
    #expect(heard.withLock { $0 } == store.events.map(\.type))
    #expect(fleet.onlineVehicleCount() == 1)
    store.failing.withLock { $0 = true }
    _ = try? await fleet.createRide(caller: admin, provider: provider, rideID: "r2", request: rideRequest())
    #expect(heard.withLock { $0 } == [.vehicleOnline, .rideCreated], "a commit that failed told nobody")
  }

  /// The online count is kept as vehicles change, not counted: it follows state changes,
  /// deletions and a commit that failed.
  @Test func theOnlineCountFollowsEveryChangeOfAVehicle() async throws {
    let store = MemoryStore()
    let fleet = try await rideServiceFleet(store: store)
    try await addVehicle(fleet, "car-1", at: monaco)
    try await addVehicle(fleet, "car-2", at: port)
    #expect(fleet.onlineVehicleCount() == 2)
    var offline = vehicleInput("car-1")
    offline.vehicle.state = .offline
    _ = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: offline, mask: ["vehicle_state"])
    #expect(fleet.onlineVehicleCount() == 1)
    try await fleet.deleteVehicle(caller: admin, name: vehicleName("car-2"))
    #expect(fleet.onlineVehicleCount() == 0)
    _ = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: vehicleInput("car-1"), mask: ["vehicle_state"])
    #expect(fleet.onlineVehicleCount() == 1)
    store.failing.withLock { $0 = true }
    _ = try? await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: offline, mask: ["vehicle_state"])
    #expect(fleet.onlineVehicleCount() == 1, "a failed commit is put back, with the count")
  }

  @Test func aRideTellsEachStepOfItsLifeInOrder() async throws {
    let store = MemoryStore()
    let fleet = try await rideServiceFleet(store: store)
    try await addVehicle(fleet, "car-1", at: monaco)
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: rideRequest())
    try await dispatchOnce(fleet)
    for status in [TripStatus.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete] {
      try await moveTrip(fleet, "r1", to: status)
    }
    #expect(
      store.events(of: "r1") == [
        .rideCreated, .rideAssigned, .rideArrivedAtPickup, .rideStarted, .rideCompleted,
      ])
    let events = store.events.filter { $0.subject.id == "r1" }
    #expect(zip(events, events.dropFirst()).allSatisfy { ($0.revision, $0.position) < ($1.revision, $1.position) })
    #expect(Set(events.map(\.id)).count == events.count)
    guard case .ride(let completed) = events.last?.payload else {
      Issue.record("ride.completed carries the ride")
      return
    }
    #expect(completed.state == .completed)
    #expect(completed.ride.finalFare != nil, "with the final fare")
    #expect(completed.vehicleID == "car-1")
  }

  @Test func scheduledCanceledAndUnservedRidesSaySo() async throws {
    let store = MemoryStore()
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock, store: store)
    var later = rideRequest()
    later.pickupTime = clock.read().addingTimeInterval(3600)
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "later", request: later)
    _ = try await fleet.cancelRide(caller: admin, name: rideName("later"))
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "alone", request: rideRequest())
    clock.advance(301)
    _ = try await fleet.expireRides(waitingLongerThan: .seconds(300))
    #expect(store.events(of: "later") == [.rideScheduled, .rideCanceled])
    #expect(store.events(of: "alone") == [.rideCreated, .rideNoVehicleFound])
  }

  @Test func vehiclesGoOnlineOfflineAndCrossZoneBorders() async throws {
    let store = MemoryStore()
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock, store: store)
    try await addVehicle(fleet, "car-1", at: monaco)
    let inCasino = LatLng(latitude: 43.7395, longitude: 7.4275)
    clock.advance(5)
    try await report(fleet, inCasino, at: clock.read())
    clock.advance(5)
    try await report(fleet, LatLng(latitude: 43.7396, longitude: 7.4276), at: clock.read())
    clock.advance(5)
    try await report(fleet, monaco, at: clock.read())
    var offline = vehicleInput()
    offline.vehicle.state = .offline
    _ = try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: offline, mask: ["vehicle_state"])
    #expect(
      store.events(of: "car-1") == [.vehicleOnline, .vehicleEnteredZone, .vehicleLeftZone, .vehicleOffline])
    let zones = store.events.compactMap { event -> String? in
      if case .vehicle(_, let zone) = event.payload { return zone }
      return nil
    }
    #expect(zones == ["Casino", "Casino"])
  }
}

@Suite("Webhook retries")
struct WebhookRetryTests {
  @Test func backoffDoublesWithJitterUpToTheCapThenGivesUpAfterTheWindow() {
    let policy = WebhookRetryPolicy()
    let event = Date(timeIntervalSince1970: 0)
    func delay(_ attempts: Int, jitter: Double) -> Double? {
      let now = event.addingTimeInterval(100)
      guard
        case .retry(let next, _, _) = policy.afterFailure(
          attempts: attempts, eventTime: event, now: now, status: 500, error: "", jitter: jitter)
      else { return nil }
      return next.timeIntervalSince(now)
    }
    #expect(delay(1, jitter: 1) == 5)
    #expect(delay(1, jitter: 0) == 2.5)
    #expect(delay(2, jitter: 1) == 10)
    #expect(delay(5, jitter: 1) == 80)
    #expect(delay(20, jitter: 1) == 3600, "capped at an hour")
    let late = policy.afterFailure(
      attempts: 30, eventTime: event, now: event.addingTimeInterval(24 * 3600 - 60), status: nil, error: "refused",
      jitter: 1)
    guard case .failed(nil, "refused", _) = late else {
      Issue.record("a retry past the 24 h window is given up, got \(late)")
      return
    }
  }
}
