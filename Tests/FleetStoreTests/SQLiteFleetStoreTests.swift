import FleetCore
import FleetStore
import Foundation
import Testing

@Suite("SQLite store")
struct SQLiteFleetStoreTests {
  func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "fleetkit-store-\(UUID().uuidString)"
    return path
  }

  func vehicle(_ id: String, revision: UInt64, capacity: Int32 = 4) -> Vehicle {
    var v = Vehicle(provider: "p", id: id)
    v.maximumCapacity = capacity
    v.revision = revision
    return v
  }

  @Test func commitsSurviveReopening() async throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    do {
      let store = try SQLiteFleetStore(directory: dir)
      var trip = Trip(provider: "p", id: "t")
      trip.revision = 1
      trip.attributes = [Attribute(key: "k", value: .number(1.5))]
      try await store.commit([.putTrip(trip), .putVehicle(vehicle("v", revision: 2))])
    }
    let reopened = try SQLiteFleetStore(directory: dir)
    let trips = try await reopened.loadTrips()
    #expect(trips.map(\.id) == ["t"])
    #expect(trips.first?.attributes == [Attribute(key: "k", value: .number(1.5))])
    #expect(try await reopened.loadVehicles().map(\.id) == ["v"])
  }

  @Test func olderRevisionsNeverOverwriteNewerOnes() async throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteFleetStore(directory: dir)
    try await store.commit([.putVehicle(vehicle("v", revision: 5, capacity: 5))])
    try await store.commit([.putVehicle(vehicle("v", revision: 3, capacity: 3))])
    #expect(try await store.loadVehicles().first?.maximumCapacity == 5)
    // A delete newer than the row removes it; an older write cannot bring it back.
    try await store.commit([.deleteVehicle(provider: "p", id: "v", revision: 6)])
    try await store.commit([.putVehicle(vehicle("v", revision: 4))])
    #expect(try await store.loadVehicles().isEmpty)
    try await store.commit([.putVehicle(vehicle("v", revision: 7, capacity: 7))])
    #expect(try await store.loadVehicles().first?.maximumCapacity == 7)
  }

  @Test func aRecreatedIDSurvivesRestartsAfterADeletion() async throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let admin = Caller.admin(of: "p")
    var input = Vehicle(provider: "p", id: "v")
    input.state = .online
    input.supportedTripTypes = [.exclusive]
    input.maximumCapacity = 2
    input.category = .auto
    do {
      let fleet = try await Fleet(storage: try SQLiteFleetStore(directory: dir))
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "v", vehicle: VehicleInput(vehicle: input))
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "w", vehicle: VehicleInput(vehicle: input))
      try await fleet.deleteVehicle(caller: admin, name: ResourceName(provider: "p", kind: .vehicles, id: "v"))
    }
    // After a restart the tombstone of "v" carries the highest revision on disk.
    do {
      let fleet = try await Fleet(storage: try SQLiteFleetStore(directory: dir))
      input.maximumCapacity = 3
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "v", vehicle: VehicleInput(vehicle: input))
    }
    let vehicles = try await SQLiteFleetStore(directory: dir).loadVehicles()
    #expect(vehicles.first { $0.id == "v" }?.maximumCapacity == 3)
  }

  @Test func concurrentCommitsAllLand() async throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteFleetStore(directory: dir)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for i in 0..<500 {
        group.addTask { try await store.commit([.putVehicle(self.vehicle("v\(i)", revision: UInt64(i + 1)))]) }
      }
      try await group.waitForAll()
    }
    #expect(try await SQLiteFleetStore(directory: dir).loadVehicles().count == 500)
  }

  @Test func signingKeysAreRegisteredAndRevoked() async throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteFleetStore(directory: dir)
    let key = SigningKey(
      keyID: "k1", provider: "p", role: .driver, publicKeyPEM: "PEM", clientEmail: "a@b", createTime: Date())
    try await store.saveSigningKey(key)
    #expect(try await store.signingKey(id: "k1")?.role == .driver)
    var revoked = key
    revoked.revokeTime = Date()
    try await store.saveSigningKey(revoked)
    #expect(try await store.signingKey(id: "k1")?.revokeTime != nil)
    #expect(try await store.signingKey(id: "nope") == nil)
  }
}
