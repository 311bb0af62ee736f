import FleetCore
import FleetGeometry
import Foundation
import Testing

/// A fleet on a shared store, where the database and its change log are the truth and memory
/// must find its way back to them after a commit whose outcome it did not learn.
@Suite("Fleet: shared store")
struct SharedFleetTests {
  let car = EntityKey(.vehicle, provider: provider, id: "car-1")

  func sharedFleet() async throws -> (Fleet, SharedMemoryStore) {
    let store = SharedMemoryStore()
    let fleet = try await Fleet(store: store)
    _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-1", vehicle: vehicleInput())
    return (fleet, store)
  }

  func setCapacity(_ fleet: Fleet, _ capacity: Int32) async throws -> Vehicle {
    var input = vehicleInput()
    input.vehicle.maximumCapacity = capacity
    return try await fleet.updateVehicle(
      caller: admin, name: vehicleName("car-1"), vehicle: input, mask: ["maximum_capacity"])
  }

  /// The commit was stored but its answer lost: the caller hears UNAVAILABLE and memory goes
  /// back, but the log carries the stored write (this instance's own), so the next write is
  /// built on it instead of being refused as overtaken for ever.
  @Test func aCommitWhoseAnswerWasLostIsLearnedFromTheLog() async throws {
    let (fleet, store) = try await sharedFleet()
    store.loseNextAnswer.withLock { $0 = true }
    let lost = await fleetError { _ = try await setCapacity(fleet, 5) }
    #expect(lost?.code == .unavailable)
    try await fleet.catchUpWithOtherInstances()
    let shown = try fleet.getVehicle(caller: admin, name: vehicleName("car-1"))
    #expect(shown.maximumCapacity == 5 && shown.revision == store.storedRevision(car))
    let next = try await setCapacity(fleet, 6)
    #expect(next.maximumCapacity == 6 && store.storedRevision(car) == next.revision)
  }

  /// Two writes of one vehicle in flight: the first is stored, the second fails. Memory falls
  /// back to the first (stored) one, not to the state before both.
  @Test func aFailedWriteFallsBackToAnEarlierWriteThatWasStored() async throws {
    let (fleet, store) = try await sharedFleet()
    store.holding.withLock { $0 = true }
    let first = Task { try await setCapacity(fleet, 5) }
    while store.waiting < 1 { try await Task.sleep(for: .milliseconds(1)) }
    let second = Task { try await setCapacity(fleet, 6) }
    while store.waiting < 2 { try await Task.sleep(for: .milliseconds(1)) }
    store.answer(.stored)
    let stored = try await first.value
    store.answer(.failed)
    let failed = await fleetError { _ = try await second.value }
    #expect(failed?.code == .unavailable)
    let shown = try fleet.getVehicle(caller: admin, name: vehicleName("car-1"))
    #expect(shown.maximumCapacity == 5 && shown.revision == stored.revision)
    store.holding.withLock { $0 = false }
    #expect(try await setCapacity(fleet, 7).maximumCapacity == 7)
  }

  /// A report older than the vehicle's position changes nothing and writes nothing, except while
  /// a newer write of the vehicle is in flight: the report is not acknowledged before that write
  /// is durable (had it failed, the report would be applied again on what was stored).
  @Test func aStaleReportIsWrittenWhileANewerWriteOfItsVehicleIsInFlight() async throws {
    let (fleet, store) = try await sharedFleet()
    let now = Date()
    func report(_ point: LatLng, secondsFromNow: TimeInterval) async throws -> Vehicle {
      try await fleet.submitReports([locationReport(point, at: now.addingTimeInterval(secondsFromNow))], caller: admin)
        .stored()[0].get()
    }
    store.holding.withLock { $0 = true }
    let newer = Task { try await report(casino, secondsFromNow: 0) }
    while store.waiting < 1 { try await Task.sleep(for: .milliseconds(1)) }
    let stale = Task { try await report(port, secondsFromNow: -60) }
    for _ in 0..<2_000 where store.waiting < 2 { try await Task.sleep(for: .milliseconds(1)) }
    #expect(store.waiting == 2)
    while store.waiting > 0 { store.answer(.stored) }
    let stored = try await newer.value
    let kept = try await stale.value
    #expect(kept.lastLocation?.location == casino && kept.revision > stored.revision)
    // Nothing in flight now: the same stale report is answered without a write.
    store.holding.withLock { $0 = false }
    let again = try await report(port, secondsFromNow: -60)
    #expect(again.revision == kept.revision && store.storedRevision(car) == kept.revision)
  }
}
