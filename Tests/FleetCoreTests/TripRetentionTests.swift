import FleetCore
import Foundation
import Testing

@Suite("Trip retention")
struct TripRetentionTests {
  let day: TimeInterval = 86_400

  func cancel(_ fleet: Fleet, _ id: String) async throws {
    var cancel = tripInput(id)
    cancel.status = .canceled
    _ = try await fleet.updateTrip(caller: admin, name: tripName(id), trip: cancel, mask: ["trip_status"])
  }

  /// Fleet Engine deletes trips after 7 days: an ended trip goes once it has not changed for the
  /// retention, with its ride, and the store is told; an active trip stays however old it is.
  @Test func anEndedTripAndItsRideGoAfterTheRetentionAndAnActiveTripStays() async throws {
    let clock = TestClock()
    let store = MemoryStore()
    let fleet = try await rideServiceFleet(clock: clock, store: store)
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "ended", trip: tripInput("ended"))
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "open", trip: tripInput("open"))
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "booked", request: rideRequest())
    try await cancel(fleet, "ended")
    _ = try await fleet.cancelRide(caller: admin, name: rideName("booked"))

    clock.advance(7 * day - 60)
    #expect(try await fleet.deleteExpiredTrips() == 0, "not yet 7 days since they ended")
    clock.advance(120)
    #expect(try await fleet.deleteExpiredTrips() == 2)
    #expect(await fleetError { _ = try fleet.getTrip(caller: admin, name: tripName("ended")) }?.code == .notFound)
    #expect(await fleetError { _ = try fleet.getTrip(caller: admin, name: tripName("booked")) }?.code == .notFound)
    #expect(await fleetError { _ = try fleet.getRide(caller: admin, name: rideName("booked")) }?.code == .notFound)
    #expect(try fleet.getTrip(caller: admin, name: tripName("open")).trip.status == .new, "still active")
    let deletions = store.committed.withLock { changes in
      changes.compactMap { change -> String? in
        switch change {
        case .deleteTrip(_, let id, _): "trip \(id)"
        case .deleteRide(_, let id, _): "ride \(id)"
        default: nil
        }
      }
    }
    #expect(deletions.sorted() == ["ride booked", "trip booked", "trip ended"])
    #expect(try await fleet.deleteExpiredTrips() == 0, "nothing left to delete")
  }

  /// The retention runs from an ended trip's last change, not from when it ended.
  @Test func aChangeAfterTheEndRestartsTheRetention() async throws {
    let clock = TestClock()
    let (fleet, _) = try await makeFleet(clock: clock)
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput("t"))
    try await cancel(fleet, "t")
    clock.advance(3 * day)
    var update = tripInput("t")
    update.attributes = [Attribute(key: "note", value: .string("lost umbrella"))]
    _ = try await fleet.updateTrip(caller: admin, name: tripName("t"), trip: update, mask: ["attributes"])
    clock.advance(5 * day)
    #expect(try await fleet.deleteExpiredTrips() == 0, "changed 5 days ago")
    clock.advance(2 * day + 1)
    #expect(try await fleet.deleteExpiredTrips() == 1)
  }

  /// A long backlog goes in batches, each its own write, none left behind.
  @Test func aBacklogGoesInBatches() async throws {
    let clock = TestClock()
    let (fleet, store) = try await makeFleet(clock: clock)
    for i in 0..<7 {
      _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t\(i)", trip: tripInput("t\(i)"))
      try await cancel(fleet, "t\(i)")
    }
    clock.advance(8 * day)
    let writes = store.entityWrites
    #expect(try await fleet.deleteExpiredTrips(limit: 3) == 3)
    #expect(try await fleet.deleteExpiredTrips(limit: 3) == 3)
    #expect(try await fleet.deleteExpiredTrips(limit: 3) == 1)
    #expect(store.entityWrites == writes + 7)
    let (left, _) = try fleet.searchTrips(caller: admin, provider: provider, query: Fleet.TripSearch())
    #expect(left.isEmpty)
  }

  /// No retention keeps every trip.
  @Test func withoutRetentionNothingIsDeleted() async throws {
    let clock = TestClock()
    var configuration = FleetConfiguration()
    configuration.tripRetention = nil
    let fleet = try await Fleet(store: MemoryStore(), configuration: configuration, clock: clock.read)
    _ = try await fleet.createTrip(caller: admin, provider: provider, tripID: "t", trip: tripInput("t"))
    try await cancel(fleet, "t")
    clock.advance(365 * day)
    #expect(try await fleet.deleteExpiredTrips() == 0)
    #expect(try fleet.getTrip(caller: admin, name: tripName("t")).trip.status == .canceled)
  }
}
