import FleetCore
import FleetDispatch
import FleetGeometry
import FleetStorePostgres
import FleetTestSupport
import Foundation
import Testing

/// Rides booked for later on PostgreSQL with two instances: the instance that took the booking
/// goes away, and the other releases the ride on time and assigns it.
@Suite("Rides booked for later across instances")
struct ScheduledFailoverTests {
  @Test(.timeLimit(.minutes(2)))
  func anotherInstanceReleasesARideBookedOnOneThatWentAway() async throws {
    let url = try await PostgresCluster.start().newDatabase()
    let clock = TestTime()
    let first = try await PostgresStore.connect(try PostgresAddress(url))
    let second = try await PostgresStore.connect(try PostgresAddress(url))
    let booking = Harness(fleet: try await Fleet(store: first, clock: clock.read), clock: clock, directory: "")
    let other = Harness(fleet: try await Fleet(store: second, clock: clock.read), clock: clock, directory: "")

    try await booking.vehicle("car", at: north(1500))
    var request = booking.request(from: origin, to: north(900))
    request.pickupTime = clock.now.addingTimeInterval(1800)
    #expect(
      try await booking.fleet.createRide(caller: booking.admin, provider: "acme", rideID: "r1", request: request).state
        == .scheduled)
    await first.close()

    try await other.fleet.catchUpWithOtherInstances()
    #expect(try other.ride("r1").state == .scheduled)
    #expect(try await other.dispatcher().round().releasedScheduled.isEmpty, "not yet")
    // 1,500 m at 30 km/h (180 s) plus the 120 s lead: released 300 s before the pickup time.
    clock.advance(1800 - 300 + 5)
    try await other.move("car", to: north(1500))
    let round = try await other.dispatcher().round()
    #expect(round.releasedScheduled.map(\.id) == ["r1"])
    #expect(round.assigned.map(\.vehicleID) == ["car"])
    #expect(try other.ride("r1").state == .assigned)
    await second.close()
  }
}
