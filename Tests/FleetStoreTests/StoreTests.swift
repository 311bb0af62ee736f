import FleetCore
import FleetGeometry
import FleetStorePostgres
import FleetStoreSQLite
import FleetTestSupport
import Foundation
import Testing

/// The stores fleetd can keep the fleet in; every test below holds for each.
enum StoreKind: String, CaseIterable, Sendable {
  case sqlite, postgres
}

/// A place a store lives (a directory, or a database of the tests' own PostgreSQL cluster) that
/// can be opened again, as a restarted fleetd would.
struct StorePlace: Sendable {
  let kind: StoreKind
  let location: String

  static func fresh(_ kind: StoreKind) async throws -> StorePlace {
    switch kind {
    case .sqlite: StorePlace(kind: kind, location: NSTemporaryDirectory() + "fleetkit-store-\(UUID().uuidString)")
    case .postgres: StorePlace(kind: kind, location: try await PostgresCluster.start().newDatabase())
    }
  }

  /// Opens the store, runs `body` with it and closes it.
  func with<T>(
    _ body: (any FleetStore & APIKeyStore & SecretStore & WebhookStore & TrafficProfileStore) async throws -> T
  ) async throws -> T {
    switch kind {
    case .sqlite:
      return try await body(try SQLiteStore(directory: location))
    case .postgres:
      let store = try await PostgresStore.connect(try PostgresAddress(location))
      do {
        let result = try await body(store)
        await store.close()
        return result
      } catch {
        await store.close()
        throw error
      }
    }
  }

  func remove() {
    if kind == .sqlite { try? FileManager.default.removeItem(atPath: location) }
  }
}

@Suite("Stores")
struct StoreTests {
  func vehicle(_ id: String, revision: UInt64, capacity: Int32 = 4) -> Vehicle {
    var v = Vehicle(provider: "p", id: id)
    v.maximumCapacity = capacity
    v.revision = revision
    return v
  }

  @Test(arguments: StoreKind.allCases)
  func commitsSurviveReopening(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      var trip = Trip(provider: "p", id: "t")
      trip.revision = 1
      trip.attributes = [Attribute(key: "k", value: .number(1.5))]
      var ride = Ride(provider: "p", id: "r", request: RideRequest())
      ride.revision = 3
      // A pooled ride's bounds, the row's last fields.
      ride.latestPickup = Date(timeIntervalSince1970: 1_800_000_000)
      ride.latestDropoff = Date(timeIntervalSince1970: 1_800_000_900)
      ride.directSeconds = 612.5
      ride.pooling = PoolingBounds(maximumWait: .seconds(420), maximumDetour: 1.25)
      try await store.commit([.putTrip(trip), .putVehicle(vehicle("v", revision: 2)), .putRide(ride)])
      try await store.commit([
        .putBillableTrip(
          BillableTripReport(
            provider: "p", billableTripID: "b", countryCode: "MC", platform: 1, relatedIDs: ["t"], solutionType: 1,
            reportTime: Date()))
      ])
    }
    try await place.with { reopened in
      let trips = try await reopened.loadTrips()
      #expect(trips.map(\.id) == ["t"])
      #expect(trips.first?.attributes == [Attribute(key: "k", value: .number(1.5))])
      #expect(try await reopened.loadVehicles().map(\.id) == ["v"])
      let rides = try await reopened.loadRides()
      #expect(rides.map(\.id) == ["r"])
      #expect(rides.first?.latestPickup == Date(timeIntervalSince1970: 1_800_000_000))
      #expect(rides.first?.latestDropoff == Date(timeIntervalSince1970: 1_800_000_900))
      #expect(rides.first?.directSeconds == 612.5)
      #expect(rides.first?.pooling == PoolingBounds(maximumWait: .seconds(420), maximumDetour: 1.25))
      #expect(try await reopened.highestRevision() == 3)
    }
  }

  /// The Deliveries API's vehicles and tasks: every field survives reopening, a deletion is kept
  /// as a tombstone that an older write cannot undo, and their revisions count in the highest.
  @Test(arguments: StoreKind.allCases)
  func deliveryVehiclesAndTasksSurviveReopening(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    var van = DeliveryVehicle(provider: "p", id: "van")
    van.lastLocation = VehicleLocation(location: LatLng(latitude: 43.73, longitude: 7.42))
    van.currentRouteSegment = Array("_p~iF~ps|U".utf8) + [0xff, 0x00]
    van.remainingDuration = 61.5
    van.type = .twoWheeler
    var segment = JourneySegment(
      stop: VehicleStop(
        plannedLocation: LatLng(latitude: 43.74, longitude: 7.43), tasks: [.init(taskID: "t")], state: .enroute))
    segment.drivingDistanceMeters = 1200
    segment.drivingDuration = 180
    segment.path = [LatLng(latitude: 43.73, longitude: 7.42), LatLng(latitude: 43.74, longitude: 7.43)]
    van.journey = [segment]
    van.attributes = [Attribute(key: "zone", value: .string("north"))]
    van.revision = 5
    var task = DeliveryTask(provider: "p", id: "t")
    task.type = .delivery
    task.state = .open
    task.outcome = .failed
    task.outcomeTime = Date(timeIntervalSince1970: 1_800_000_000)
    task.outcomeLocationSource = .lastVehicleLocation
    task.trackingID = "ship"
    task.deliveryVehicleID = "van"
    task.plannedLocation = LatLng(latitude: 43.74, longitude: 7.43)
    task.duration = 90
    task.targetTimeWindow = TimeWindow(
      start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_003_600))
    var config = TaskTrackingViewConfig()
    config.vehicleLocation = .remainingStopCountAtMost(2)
    config.estimatedArrivalTime = .durationUntilArrivalAtMost(600)
    config.routePolylinePoints = .never
    task.trackingViewConfig = config
    task.revision = 6
    var gone = DeliveryTask(provider: "p", id: "gone")
    gone.revision = 4
    try await place.with { store async throws in
      try await store.commit([.putDeliveryVehicle(van), .putTask(task), .putTask(gone)])
      try await store.commit([.deleteTask(provider: "p", id: "gone", revision: 7)])
      try await store.commit([.putTask(gone)])  // older than the deletion: ignored
    }
    try await place.with { reopened async throws in
      #expect(try await reopened.loadDeliveryVehicles() == [van])
      #expect(try await reopened.loadTasks() == [task])
      #expect(try await reopened.highestRevision() == 7)
    }
  }

  /// The retention sweep's deletions are durable: a ride and its trip that ended more than the
  /// retention ago, loaded from the store at start, are gone from it after the sweep, and an
  /// older write cannot bring the ride back.
  @Test(arguments: StoreKind.allCases)
  func expiredTripsAndRidesAreDeletedFromTheStore(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    let ended = Date(timeIntervalSince1970: 1_800_000_000)
    var trip = Trip(provider: "p", id: "r")
    trip.status = .canceled
    trip.updateTime = ended
    trip.revision = 1
    var ride = Ride(provider: "p", id: "r", request: RideRequest())
    ride.dispatchState = .canceled
    ride.revision = 2
    var open = Trip(provider: "p", id: "open")
    open.updateTime = ended
    open.revision = 3
    try await place.with { store in try await store.commit([.putTrip(trip), .putRide(ride), .putTrip(open)]) }
    try await place.with { store in
      let fleet = try await Fleet(store: store, clock: { ended.addingTimeInterval(8 * 86_400) })
      #expect(try await fleet.deleteExpiredTrips() == 1)
      try await store.commit([.putRide(ride)])  // a stale write of the ride
    }
    try await place.with { reopened async throws in
      #expect(try await reopened.loadTrips().map(\.id) == ["open"])
      #expect(try await reopened.loadRides().isEmpty)
    }
  }

  /// Tombstones go once they are older than asked (`Tombstones.retention` in fleetd; any age
  /// here), a batch at a time. Live rows stay, the highest revision does not go down with the
  /// tombstone that held it, and the deleted ID can be used again.
  @Test(arguments: StoreKind.allCases)
  func oldTombstonesArePurgedWithoutLoweringTheHighestRevision(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    func trip(_ id: String, revision: UInt64) -> Trip {
      var trip = Trip(provider: "p", id: id)
      trip.revision = revision
      return trip
    }
    var ride = Ride(provider: "p", id: "c", request: RideRequest())
    ride.revision = 4
    try await place.with { store async throws in
      try await store.commit([
        .putVehicle(vehicle("live", revision: 1)), .putTrip(trip("a", revision: 2)), .putTrip(trip("b", revision: 3)),
        .putRide(ride),
      ])
      try await store.commit([
        .deleteTrip(provider: "p", id: "a", revision: 5), .deleteTrip(provider: "p", id: "b", revision: 6),
        .deleteRide(provider: "p", id: "c", revision: 7),
      ])
      // Written just now: kept for an hour.
      #expect(try await store.purgeTombstones(olderThan: .seconds(3600), limit: 10) == 0)
      try await store.commit([.putTrip(trip("a", revision: 3))])  // a write older than the deletion
      try await Task.sleep(for: .milliseconds(20))
      #expect(try await store.purgeTombstones(olderThan: .zero, limit: 2) == 2)
      #expect(try await store.purgeTombstones(olderThan: .zero, limit: 2) == 1)
      #expect(try await store.purgeTombstones(olderThan: .zero, limit: 2) == 0)
      #expect(try await store.highestRevision() == 7)
      // The tombstone refused it above; with the tombstone gone, the ID is free.
      #expect(try await store.loadTrips().isEmpty)
      try await store.commit([.putTrip(trip("a", revision: 3))])
    }
    try await place.with { reopened async throws in
      #expect(try await reopened.loadTrips().map(\.id) == ["a"])
      #expect(try await reopened.loadVehicles().map(\.id) == ["live"])
      #expect(try await reopened.loadRides().isEmpty)
      #expect(try await reopened.highestRevision() == 7)
      #expect(try await reopened.purgeTombstones(olderThan: .zero, limit: 10) == 0)
    }
  }

  @Test(arguments: StoreKind.allCases)
  func olderRevisionsNeverOverwriteNewerOnes(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      try await store.commit([.putVehicle(vehicle("v", revision: 5, capacity: 5))])
      try await store.commit([.putVehicle(vehicle("v", revision: 3, capacity: 3))])
      #expect(try await store.loadVehicles().first?.maximumCapacity == 5)
      // A delete newer than the row removes it; an older write cannot bring it back.
      try await store.commit([.deleteVehicle(provider: "p", id: "v", revision: 6)])
      try await store.commit([.putVehicle(vehicle("v", revision: 4))])
      #expect(try await store.loadVehicles().isEmpty)
      #expect(try await store.highestRevision() == 6)
      try await store.commit([.putVehicle(vehicle("v", revision: 7, capacity: 7))])
      #expect(try await store.loadVehicles().first?.maximumCapacity == 7)
      // One commit holding several revisions of a row keeps the newest, whatever their order.
      try await store.commit([
        .putVehicle(vehicle("v", revision: 9, capacity: 9)), .putVehicle(vehicle("v", revision: 8, capacity: 8)),
      ])
      #expect(try await store.loadVehicles().first?.maximumCapacity == 9)
    }
  }

  @Test(arguments: StoreKind.allCases)
  func aRecreatedIDSurvivesRestartsAfterADeletion(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    let admin = Caller.admin(of: "p")
    var input = Vehicle(provider: "p", id: "v")
    input.state = .online
    input.supportedTripTypes = [.exclusive]
    input.maximumCapacity = 2
    input.category = .auto
    try await place.with { store in
      let fleet = try await Fleet(store: store)
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "v", vehicle: VehicleInput(vehicle: input))
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "w", vehicle: VehicleInput(vehicle: input))
      try await fleet.deleteVehicle(caller: admin, name: ResourceName(provider: "p", kind: .vehicles, id: "v"))
    }
    // After a restart the tombstone of "v" carries the highest revision stored.
    try await place.with { store in
      let fleet = try await Fleet(store: store)
      input.maximumCapacity = 3
      _ = try await fleet.createVehicle(
        caller: admin, provider: "p", vehicleID: "v", vehicle: VehicleInput(vehicle: input))
    }
    let vehicles = try await place.with { try await $0.loadVehicles() }
    #expect(vehicles.first { $0.id == "v" }?.maximumCapacity == 3)
  }

  @Test(arguments: StoreKind.allCases)
  func concurrentCommitsAllLand(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<500 {
          // Every fifth commit also rewrites a shared row: batches then hold it several times.
          let shared = i % 5 == 0 ? [StoredChange.putVehicle(self.vehicle("shared", revision: UInt64(10_000 + i)))] : []
          group.addTask {
            try await store.commit([.putVehicle(self.vehicle("v\(i)", revision: UInt64(i + 1)))] + shared)
          }
        }
        try await group.waitForAll()
      }
    }
    let vehicles = try await place.with { try await $0.loadVehicles() }
    #expect(vehicles.count == 501)
    #expect(vehicles.first { $0.id == "shared" }?.revision == 10_495)
  }

  @Test(arguments: StoreKind.allCases)
  func signingKeysAreRegisteredAndRevoked(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      let key = SigningKey(
        keyID: "k1", provider: "p", role: .driver, publicKeyPEM: "PEM", clientEmail: "a@b", createTime: Date())
      try await store.saveSigningKey(key)
      #expect(try await store.signingKey(id: "k1")?.role == .driver)
      var revoked = key
      revoked.revokeTime = Date()
      try await store.saveSigningKey(revoked)
      #expect(try await store.signingKey(id: "k1")?.revokeTime != nil)
      #expect(try await store.signingKey(id: "nope") == nil)
      #expect(try await store.signingKeys().map(\.keyID) == ["k1"])
    }
  }

  @Test(arguments: StoreKind.allCases)
  func apiKeysAreFoundByHashAndRevoked(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      var key = APIKeyRecord(
        id: "ak1", app: "app", secretHash: "hash", perMinute: 60, perDay: 1000, createTime: Date())
      try await store.saveAPIKey(key)
      #expect(try await store.apiKey(secretHash: "hash")?.id == "ak1")
      key.revokeTime = Date()
      try await store.saveAPIKey(key)
      #expect(try await store.apiKey(id: "ak1")?.revokeTime != nil)
      #expect(try await store.apiKeys().count == 1)
    }
  }
}

@Suite("PostgreSQL store")
struct PostgresStoreTests {
  @Test func instancesStartingTogetherMigrateOnce() async throws {
    let cluster = try await PostgresCluster.start()
    let url = try await cluster.newDatabase()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          let store = try await PostgresStore.connect(try PostgresAddress(url))
          await store.close()
        }
      }
      try await group.waitForAll()
    }
    let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
    let migrations = try await cluster.psql(
      "SELECT identifier FROM fleetkit_migrations ORDER BY identifier", database: database)
    #expect(
      // Sorted as text: v10 comes after v1.
      migrations.split(separator: "\n") == [
        "v1", "v10: traffic profile", "v2: api keys", "v3: rides", "v4: change log", "v5: binary rows", "v6: secrets",
        "v7: webhooks",
        "v8: tombstone times", "v9: deliveries",
      ])
  }

  @Test func aDatabaseFromANewerFleetdIsRefused() async throws {
    let cluster = try await PostgresCluster.start()
    let url = try await cluster.newDatabase()
    await (try await PostgresStore.connect(try PostgresAddress(url))).close()
    let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
    try await cluster.psql("INSERT INTO fleetkit_migrations VALUES ('v99: from the future')", database: database)
    let error = await #expect(throws: PostgresStoreError.self) {
      try await PostgresStore.connect(try PostgresAddress(url))
    }
    #expect("\(try #require(error))".contains("v99: from the future"))
  }

  @Test func anUnreachableServerIsNamedInTheError() async throws {
    let address = try PostgresAddress("postgres://fleet@127.0.0.1:1/fleet?sslmode=disable")
    let error = await #expect(throws: PostgresStoreError.self) {
      try await PostgresStore.connect(address, timeout: .seconds(1))
    }
    #expect("\(try #require(error))".contains("127.0.0.1:1"))
  }

  @Test func addressesAreCheckedWithTheRuleNamed() throws {
    let address = try PostgresAddress("postgres://ann:s%40cret@db.example:6543/fleet?sslmode=require")
    #expect(address.user == "ann")
    #expect(address.password == "s@cret")
    #expect(address.port == 6543)
    #expect(address.sslMode == .require)
    #expect(!address.description.contains("cret"))
    let socket = try PostgresAddress("postgresql://ann@/fleet?host=/run/postgresql")
    #expect(socket.socketDirectory == "/run/postgresql")
    for (bad, rule) in [
      ("mysql://a@b/c", "postgres://"), ("postgres://a@b", "name a database"),
      ("postgres://a@b/c?sslmode=maybe", "sslmode"), ("postgres://a@b/c?colour=red", "unknown parameter"),
    ] {
      #expect(throws: FleetError.self) { try PostgresAddress(bad) }
      do {
        _ = try PostgresAddress(bad)
      } catch {
        #expect(error.message.contains(rule), "\(bad): \(error.message)")
      }
    }
  }
}
