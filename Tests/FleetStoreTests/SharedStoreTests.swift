import FleetCore
import FleetGeometry
import FleetStorePostgres
import FleetTestSupport
import Foundation
import Testing

/// Several instances on one PostgreSQL database, in one process: each with its own store (its
/// own connections and instance tag) and its own in-memory fleet.
@Suite("Instances sharing PostgreSQL")
struct SharedStoreTests {
  let admin = Caller.admin(of: "acme")

  func vehicleInput() -> VehicleInput {
    var v = Vehicle(provider: "acme", id: "")
    v.state = .online
    v.supportedTripTypes = [.exclusive]
    v.maximumCapacity = 4
    v.category = .auto
    return VehicleInput(vehicle: v)
  }

  func vehicle(_ id: String) -> ResourceName { ResourceName(provider: "acme", kind: .vehicles, id: id) }

  /// Two stores (instances) on a new database.
  func instances(_ count: Int = 2) async throws -> [PostgresStore] {
    let url = try await PostgresCluster.start().newDatabase()
    var stores: [PostgresStore] = []
    for _ in 0..<count { stores.append(try await PostgresStore.connect(try PostgresAddress(url))) }
    return stores
  }

  @Test func eachInstanceWritesRevisionsOfItsOwn() async throws {
    let stores = try await instances(3)
    #expect(Set(stores.map(\.instanceTag)).count == 3)
    let tags = stores.map { RevisionTag(instance: $0.instanceTag) }
    // From the same highest revision, every instance writes a different, higher one.
    let next = tags.map { $0.next(after: 5 << 16 | 7) }
    #expect(Set(next).count == 3)
    #expect(next.allSatisfy { $0 > 5 << 16 | 7 })
    for store in stores { await store.close() }
  }

  @Test func anOvertakenWriteIsRefusedAndTheRestOfItsBatchIsWritten() async throws {
    let stores = try await instances()
    let (a, b) = (stores[0], stores[1])
    var car = Vehicle(provider: "acme", id: "car")
    car.revision = 1 << 16 | a.instanceTag
    let key = EntityKey(.vehicle, provider: "acme", id: "car")
    try await a.commit(FleetCommit(changes: [.putVehicle(car)], expectedRevisions: [key: 0]))
    // B did not see A's create: its own create expects no vehicle, and is refused.
    var rival = Vehicle(provider: "acme", id: "car")
    rival.revision = 1 << 16 | b.instanceTag
    rival.maximumCapacity = 9
    var other = Vehicle(provider: "acme", id: "other")
    other.revision = 2 << 16 | b.instanceTag
    let otherKey = EntityKey(.vehicle, provider: "acme", id: "other")
    let refused = Task { try await b.commit(FleetCommit(changes: [.putVehicle(rival)], expectedRevisions: [key: 0])) }
    let accepted = Task {
      try await b.commit(FleetCommit(changes: [.putVehicle(other)], expectedRevisions: [otherKey: 0]))
    }
    let conflict = await #expect(throws: StoreConflict.self) { try await refused.value }
    #expect(conflict?.entities == [key])
    try await accepted.value
    let stored = try await a.loadVehicles().sorted { $0.id < $1.id }
    #expect(stored.map(\.id) == ["car", "other"])
    #expect(stored[0].maximumCapacity == car.maximumCapacity)
    // The log holds both accepted writes, in commit order, each with its writer.
    let log = try await b.changeLog.batches(after: 0, limit: 10)
    #expect(log.map(\.origin) == [a.instanceTag, b.instanceTag])
    #expect(log.map { $0.changes.compactMap(\.entity?.key) } == [[key], [otherKey]])
    for store in stores { await store.close() }
  }

  @Test func aDeletedEntityCannotBeRecreatedFromAStaleView() async throws {
    let stores = try await instances()
    let (a, b) = (stores[0], stores[1])
    let key = EntityKey(.vehicle, provider: "acme", id: "car")
    var car = Vehicle(provider: "acme", id: "car")
    car.revision = 1 << 16 | a.instanceTag
    try await a.commit(FleetCommit(changes: [.putVehicle(car)], expectedRevisions: [key: 0]))
    let deletion = 2 << 16 | a.instanceTag
    try await a.commit(
      FleetCommit(
        changes: [.deleteVehicle(provider: "acme", id: "car", revision: deletion)],
        expectedRevisions: [key: car.revision]))
    // B still holds the vehicle at its first revision: an update from there is refused.
    var stale = car
    stale.revision = 2 << 16 | b.instanceTag
    await #expect(throws: StoreConflict.self) {
      try await b.commit(FleetCommit(changes: [.putVehicle(stale)], expectedRevisions: [key: car.revision]))
    }
    #expect(try await a.loadVehicles().isEmpty)
    for store in stores { await store.close() }
  }

  @Test(.timeLimit(.minutes(2)))
  func concurrentUpdatesOfOneVehicleThroughBothInstancesAreAllKept() async throws {
    let stores = try await instances()
    let a = try await Fleet(store: stores[0])
    let b = try await Fleet(store: stores[1])
    _ = try await a.createVehicle(caller: admin, provider: "acme", vehicleID: "car", vehicle: vehicleInput())
    try await b.catchUpWithOtherInstances()
    let perInstance = 15
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (name, fleet) in [("a", a), ("b", b)] {
        group.addTask {
          for i in 0..<perInstance {
            // As Fleet Engine's clients do, a write answered ABORTED is sent again.
            while true {
              do {
                _ = try await fleet.updateVehicleAttributes(
                  caller: admin, name: vehicle("car"), attributes: [Attribute(key: "\(name)\(i)", value: .bool(true))])
                break
              } catch let error as FleetError where error.code == .aborted {
                continue
              }
            }
          }
        }
      }
      try await group.waitForAll()
    }
    try await a.catchUpWithOtherInstances()
    try await b.catchUpWithOtherInstances()
    let onA = try a.getVehicle(caller: admin, name: vehicle("car"))
    let onB = try b.getVehicle(caller: admin, name: vehicle("car"))
    #expect(onA.attributes.count == 2 * perInstance)
    #expect(onA == onB)
    let stored = try await stores[0].loadVehicles()
    #expect(stored.first?.attributes.count == 2 * perInstance)
    for store in stores { await store.close() }
  }

  @Test(.timeLimit(.minutes(2)))
  func aWatcherOnOneInstanceSeesEveryChangeMadeOnTheOther() async throws {
    let stores = try await instances()
    let a = try await Fleet(store: stores[0])
    let b = try await Fleet(store: stores[1])
    let following = Task { await stores[1].follower.follow(b, every: .seconds(1)) }
    defer { following.cancel() }
    _ = try await a.createVehicle(caller: admin, provider: "acme", vehicleID: "car", vehicle: vehicleInput())
    var trip = Trip(provider: "acme", id: "ride")
    trip.type = .exclusive
    trip.pickupPoint = TerminalLocation(point: LatLng(latitude: 43.7384, longitude: 7.4246))
    trip.dropoffPoint = TerminalLocation(point: LatLng(latitude: 43.7396, longitude: 7.4275))
    _ = try await a.createTrip(caller: admin, provider: "acme", tripID: "ride", trip: trip)
    try await b.catchUpWithOtherInstances()
    let name = ResourceName(provider: "acme", kind: .trips, id: "ride")
    let watch = try b.watchTrip(caller: admin, name: name)
    defer { watch.stop() }
    var updates = watch.updates.makeAsyncIterator()
    #expect(try await updates.next()?.snapshot.trip.status == .new)
    // Each change is read before the next is made, so every one must arrive, once, in order.
    for (i, status) in [TripStatus.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff].enumerated() {
      var change = Trip(provider: "acme", id: "ride")
      change.status = status
      var mask = ["trip_status"]
      if i == 0 {
        change.vehicleID = "car"
        mask.append("vehicle_id")
      }
      _ = try await a.updateTrip(caller: admin, name: name, trip: change, mask: mask)
      let seen = try await updates.next()?.snapshot
      #expect(seen?.trip.status == status)
      #expect(seen?.trip.vehicleID == "car")
    }
    var completion = Trip(provider: "acme", id: "ride")
    completion.status = .complete
    _ = try await a.updateTrip(caller: admin, name: name, trip: completion, mask: ["trip_status"])
    #expect(try await updates.next()?.snapshot.trip.status == .complete)
    // A finished trip ends its stream.
    #expect(try await updates.next()?.snapshot.trip == nil)
    for store in stores { await store.close() }
  }
}
