import FleetCore
import FleetGeometry
import FleetStoreCore
import FleetTestSupport
import Foundation
import GRDB
import Testing

/// Rows that earlier versions wrote as JSON (trips and vehicles before the binary format, rides
/// and billing reports until it covered them) are converted when the store opens, on each store.
@Suite("JSON rows of earlier versions")
struct BinaryRowMigrationTests {
  @Test(arguments: StoreKind.allCases)
  func becomeBinaryWhenTheStoreOpens(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    // A store as an earlier fleetd left it: its tables, JSON rows, and no conversion yet.
    try await place.with { _ in }
    try await place.forget(migration: kind.conversion)
    var trip = Trip(provider: "p", id: "t")
    trip.revision = 1
    trip.pickupPoint = TerminalLocation(point: LatLng(latitude: 43.73, longitude: 7.42))
    trip.attributes = [Attribute(key: "k", value: .number(1.5))]
    var vehicle = Vehicle(provider: "p", id: "v")
    vehicle.revision = 2
    vehicle.maximumCapacity = 3
    var request = RideRequest()
    request.pickupPoint = TerminalLocation(point: LatLng(latitude: 43.74, longitude: 7.43))
    request.numberOfPassengers = 2
    var ride = Ride(provider: "p", id: "r", request: request)
    ride.revision = 3
    ride.dispatchState = .assigned
    ride.assignTime = Date(timeIntervalSinceReferenceDate: 800_000_000.25)
    let report = BillableTripReport(
      provider: "p", billableTripID: "b", countryCode: "MC", platform: 2, relatedIDs: ["t"], solutionType: 1,
      reportTime: Date(timeIntervalSinceReferenceDate: 800_000_001.5))
    for (table, id, revision, json) in [
      ("trips", "t", 1, try LegacyJSONRows.json(trip)), ("vehicles", "v", 2, try LegacyJSONRows.json(vehicle)),
      ("rides", "r", 3, try LegacyJSONRows.json(ride)),
    ] {
      try await place.execute(
        "INSERT INTO \(table) (provider, id, revision, body) VALUES ('p', '\(id)', \(revision), \(kind.blob(json)))")
    }
    try await place.execute(
      "INSERT INTO billable_trips (provider, id, report_time, body) VALUES ('p', 'b', 1, \(kind.blob(try LegacyJSONRows.json(report))))"
    )

    let (trips, vehicles, rides) = try await place.with { reopened in
      (try await reopened.loadTrips(), try await reopened.loadVehicles(), try await reopened.loadRides())
    }
    #expect(trips == [trip])
    #expect(vehicles == [vehicle])
    #expect(rides == [ride])
    for table in ["trips", "vehicles", "rides", "billable_trips"] {
      #expect(try await place.firstBytes(of: table) == [1], "\(table) rows are all binary")
    }
    let billed = try await place.bodies(of: "billable_trips").map(StoredRows.billableTrip(from:))
    #expect(billed == [report])
  }
}

extension StoreKind {
  /// The migration that converts the rows.
  var conversion: String {
    switch self {
    case .sqlite: "v4: binary rows"
    case .postgres: "v5: binary rows"
    }
  }

  /// A blob literal in the store's SQL.
  func blob(_ data: Data) -> String {
    let hex = data.map { String(format: "%02x", $0) }.joined()
    return switch self {
    case .sqlite: "X'\(hex)'"
    case .postgres: "'\\x\(hex)'::bytea"
    }
  }
}

extension StorePlace {
  var sqlitePath: String { (location as NSString).appendingPathComponent("fleet.sqlite") }
  var database: String { String(location.split(separator: "/").last!.split(separator: "?").first!) }

  /// Runs SQL on the store's database directly, as an older fleetd would have written it.
  func execute(_ sql: String) async throws {
    switch kind {
    case .sqlite: try await DatabaseQueue(path: sqlitePath).write { try $0.execute(sql: sql) }
    case .postgres: _ = try await PostgresCluster.start().psql(sql, database: database)
    }
  }

  /// Forgets that `migration` ran, so that the next open runs it again on what an older
  /// fleetd left (the test first undoes what the migration did).
  func forget(migration: String) async throws {
    let table = kind == .sqlite ? "grdb_migrations" : "fleetkit_migrations"
    try await execute("DELETE FROM \(table) WHERE identifier = '\(migration)'")
  }

  /// The distinct first bytes of a table's row bodies.
  func firstBytes(of table: String) async throws -> Set<UInt8> {
    Set(try await bodies(of: table).compactMap(\.first))
  }

  func bodies(of table: String) async throws -> [Data] {
    switch kind {
    case .sqlite:
      return try await DatabaseQueue(path: sqlitePath).read { db in
        try Data.fetchAll(db, sql: "SELECT body FROM \(table) WHERE body IS NOT NULL")
      }
    case .postgres:
      let hex = try await PostgresCluster.start().psql(
        "SELECT encode(body, 'hex') FROM \(table) WHERE body IS NOT NULL", database: database)
      return hex.split(separator: "\n").map { line in
        var bytes: [UInt8] = []
        var index = line.startIndex
        while index < line.endIndex {
          let next = line.index(index, offsetBy: 2)
          bytes.append(UInt8(line[index..<next], radix: 16)!)
          index = next
        }
        return Data(bytes)
      }
    }
  }
}
