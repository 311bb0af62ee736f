import FleetCore
import Foundation
import GRDB
import Logging
import Synchronization

/// The embedded default store: one SQLite file (WAL) under the data directory, through GRDB.
///
/// Durability: `commit` returns only after SQLite has synced the transaction (synchronous=FULL).
/// Throughput: commits that arrive while one is being written are batched into the next
/// transaction (group commit); one waiting caller is promoted to write each batch, so there is no
/// background task and no caller waits behind more than one batch.
public final class SQLiteFleetStore: FleetStorage, APIKeyStorage {
  public static let fileName = "fleet.sqlite"

  let pool: DatabasePool
  let logger: Logger
  let queue = Mutex(CommitQueue())

  /// Opens (creating if needed) `<directory>/fleet.sqlite` and migrates its schema.
  public init(directory: String, logger: Logger = Logger(label: "fleetkit.store")) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var configuration = Configuration()
    configuration.prepareDatabase { db in
      // FULL: a synced transaction survives power loss, not only a killed process.
      try db.execute(sql: "PRAGMA synchronous = FULL")
    }
    configuration.busyMode = .timeout(10)
    pool = try DatabasePool(
      path: (directory as NSString).appendingPathComponent(Self.fileName), configuration: configuration)
    self.logger = logger
    try Self.migrator.migrate(pool)
  }

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      // body is NULL for a tombstone: a deletion kept so that an older write cannot resurrect it.
      for table in ["trips", "vehicles"] {
        try db.execute(
          sql: """
            CREATE TABLE \(table) (
              provider TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL, body BLOB,
              PRIMARY KEY (provider, id)) WITHOUT ROWID
            """)
      }
      try db.execute(
        sql: """
          CREATE TABLE billable_trips (
            provider TEXT NOT NULL, id TEXT NOT NULL, report_time REAL NOT NULL, body BLOB NOT NULL)
          """)
      try db.execute(
        sql: """
          CREATE TABLE signing_keys (
            key_id TEXT PRIMARY KEY, provider TEXT NOT NULL, role TEXT NOT NULL, public_key_pem TEXT NOT NULL,
            client_email TEXT NOT NULL, create_time REAL NOT NULL, revoke_time REAL)
          """)
    }
    migrator.registerMigration("v2: api keys") { db in
      try db.execute(
        sql: """
          CREATE TABLE api_keys (
            id TEXT PRIMARY KEY, app TEXT NOT NULL, secret_hash TEXT NOT NULL UNIQUE, per_minute INTEGER NOT NULL,
            per_day INTEGER NOT NULL, create_time REAL NOT NULL, revoke_time REAL)
          """)
    }
    migrator.registerMigration("v3: rides") { db in
      // Booked rides (the dispatcher's records) as JSON, kept by revision like trips and vehicles.
      try db.execute(
        sql: """
          CREATE TABLE rides (
            provider TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL, body BLOB,
            PRIMARY KEY (provider, id)) WITHOUT ROWID
          """)
    }
    return migrator
  }

  // MARK: - Loading

  public func loadTrips() async throws -> [Trip] { try await load("trips") }
  public func loadVehicles() async throws -> [Vehicle] { try await load("vehicles") }

  public func loadRides() async throws -> [Ride] {
    try await pool.read { db in
      let rows = try Row.fetchCursor(db, sql: "SELECT provider, id, body FROM rides WHERE body IS NOT NULL")
      var rides: [Ride] = []
      while let row = try rows.next() {
        let body: Data = row["body"]
        do {
          rides.append(try Self.decoder.decode(Ride.self, from: body))
        } catch {
          throw StoreError.damagedRow(table: "rides", provider: row["provider"], id: row["id"], reason: "\(error)")
        }
      }
      return rides
    }
  }

  public func highestRevision() async throws -> UInt64 {
    try await pool.read { db in
      UInt64(
        try Int64.fetchOne(
          db,
          sql: """
            SELECT MAX(r) FROM (SELECT MAX(revision) AS r FROM trips UNION ALL SELECT MAX(revision) FROM vehicles
              UNION ALL SELECT MAX(revision) FROM rides)
            """)
          ?? 0)
    }
  }

  func load<T: RowCodable & Decodable & Sendable>(_ table: String) async throws -> [T] {
    try await pool.read { db in
      let rows = try Row.fetchCursor(db, sql: "SELECT provider, id, body FROM \(table) WHERE body IS NOT NULL")
      var values: [T] = []
      while let row = try rows.next() {
        let body: Data = row["body"]
        do {
          values.append(try Self.decode(body))
        } catch {
          throw StoreError.damagedRow(table: table, provider: row["provider"], id: row["id"], reason: "\(error)")
        }
      }
      return values
    }
  }

  /// Reads either row format: binary, or the JSON of rows written before it.
  static func decode<T: RowCodable & Decodable>(_ body: Data) throws -> T {
    switch body.first {
    case RowFormat.binaryV1:
      var reader = RowReader([UInt8](body), from: 1)
      let value = try T(row: &reader)
      guard !reader.hasMore else { throw reader.damaged("unread bytes at the end (written by a newer fleetd?)") }
      return value
    case RowFormat.json: return try decoder.decode(T.self, from: body)
    case let format:
      throw RowFormatError(offset: 0, reason: "unknown row format \(format.map(String.init) ?? "(empty)")")
    }
  }

  // MARK: - Group commit

  struct Entry {
    let id: UInt64
    let changes: [EncodedChange]
    let continuation: CheckedContinuation<Turn, Never>
  }

  /// A change ready to write: encoded by the committing task, so the single writer only runs SQL.
  enum EncodedChange: Sendable {
    /// A row of `trips`, `vehicles` or `rides`; a nil body is a tombstone.
    case row(table: Table, provider: String, id: String, revision: Int64, body: Data?)
    case billableTrip(provider: String, id: String, reportTime: Double, body: Data)
  }

  enum Table: String, Sendable {
    case trips, vehicles, rides

    /// Upsert that keeps the newest revision whatever order commits land in.
    var upsert: String {
      """
      INSERT INTO \(rawValue) (provider, id, revision, body) VALUES (?, ?, ?, ?)
      ON CONFLICT (provider, id) DO UPDATE SET revision = excluded.revision, body = excluded.body
      WHERE excluded.revision > \(rawValue).revision
      """
    }
  }

  // Billable trip reports (and trips and vehicles stored before the binary row format) are JSON.
  // Non-finite numbers are written as strings so that encoding can never fail on a value that
  // slipped past validation: a failed commit stops all writes (fail-stop).
  static let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return encoder
  }()
  static let decoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return decoder
  }()

  static func encode(_ changes: [StoredChange]) throws -> [EncodedChange] {
    try changes.map { change in
      switch change {
      case .putTrip(let t):
        .row(table: .trips, provider: t.provider, id: t.id, revision: Int64(t.revision), body: Data(t.rowBytes))
      case .putVehicle(let v):
        .row(table: .vehicles, provider: v.provider, id: v.id, revision: Int64(v.revision), body: Data(v.rowBytes))
      case .deleteTrip(let provider, let id, let revision):
        .row(table: .trips, provider: provider, id: id, revision: Int64(revision), body: nil)
      case .deleteVehicle(let provider, let id, let revision):
        .row(table: .vehicles, provider: provider, id: id, revision: Int64(revision), body: nil)
      case .putRide(let r):
        .row(
          table: .rides, provider: r.provider, id: r.id, revision: Int64(r.revision), body: try encoder.encode(r))
      case .putBillableTrip(let r):
        .billableTrip(
          provider: r.provider, id: r.billableTripID, reportTime: r.reportTime.timeIntervalSince1970,
          body: try encoder.encode(r))
      }
    }
  }

  enum Turn {
    /// This caller writes the queued batch.
    case lead
    case done(Result<Void, any Error>)
  }

  struct CommitQueue {
    var nextID: UInt64 = 0
    var waiting: [Entry] = []
    var writing = false
  }

  public func commit(_ changes: [StoredChange]) async throws {
    let changes = try Self.encode(changes)
    let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
      let lead = queue.withLock { q -> Bool in
        q.nextID += 1
        q.waiting.append(Entry(id: q.nextID, changes: changes, continuation: continuation))
        if q.writing { return false }
        q.writing = true
        return true
      }
      if lead { continuation.resume(returning: .lead) }
    }
    switch turn {
    case .done(let result): try result.get()
    case .lead: try await writeBatch()
    }
  }

  /// Writes everything queued in one transaction, hands the lead to the next waiter (if any), and
  /// tells the batch's callers the outcome.
  func writeBatch() async throws {
    let batch = queue.withLock { q -> [Entry] in
      defer { q.waiting = [] }
      return q.waiting
    }
    let result: Result<Void, any Error>
    do {
      try await write(batch.flatMap(\.changes))
      result = .success(())
    } catch {
      logger.error("commit failed", metadata: ["error": "\(error)", "batch.size": "\(batch.count)"])
      result = .failure(error)
    }
    // A waiter that queued during the write leads the next batch; its own entry stays first in
    // the queue, so it writes itself along with the others.
    let nextLeader = queue.withLock { q -> Entry? in
      if let next = q.waiting.first { return next }
      q.writing = false
      return nil
    }
    nextLeader?.continuation.resume(returning: .lead)
    // The first entry is the leader itself (it queued before it led); it returns below.
    for entry in batch.dropFirst() { entry.continuation.resume(returning: .done(result)) }
    try result.get()
  }

  func write(_ changes: [EncodedChange]) async throws {
    try await pool.write { db in
      for change in changes {
        switch change {
        case .row(let table, let provider, let id, let revision, let body):
          try db.cachedStatement(sql: table.upsert).execute(arguments: [provider, id, revision, body])
        case .billableTrip(let provider, let id, let reportTime, let body):
          try db.cachedStatement(
            sql: "INSERT INTO billable_trips (provider, id, report_time, body) VALUES (?, ?, ?, ?)"
          )
          .execute(arguments: [provider, id, reportTime, body])
        }
      }
    }
  }

  // MARK: - Signing keys

  public func signingKey(id: String) async throws -> SigningKey? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: "SELECT * FROM signing_keys WHERE key_id = ?", arguments: [id]).map(Self.key)
    }
  }

  public func signingKeys() async throws -> [SigningKey] {
    try await pool.read { db in
      try Row.fetchAll(db, sql: "SELECT * FROM signing_keys ORDER BY create_time").map(Self.key)
    }
  }

  public func saveSigningKey(_ key: SigningKey) async throws {
    try await pool.write { db in
      try db.execute(
        sql: """
          INSERT INTO signing_keys (key_id, provider, role, public_key_pem, client_email, create_time, revoke_time)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (key_id) DO UPDATE SET revoke_time = excluded.revoke_time
          """,
        arguments: [
          key.keyID, key.provider, key.role.rawValue, key.publicKeyPEM, key.clientEmail,
          key.createTime.timeIntervalSince1970, key.revokeTime?.timeIntervalSince1970,
        ])
    }
  }

  static func key(_ row: Row) -> SigningKey {
    SigningKey(
      keyID: row["key_id"], provider: row["provider"], role: Role(rawValue: row["role"]) ?? .viewer,
      publicKeyPEM: row["public_key_pem"], clientEmail: row["client_email"],
      createTime: Date(timeIntervalSince1970: row["create_time"]),
      revokeTime: (row["revoke_time"] as Double?).map { Date(timeIntervalSince1970: $0) })
  }
  // MARK: - API keys

  public func apiKey(secretHash: String) async throws -> APIKeyRecord? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: "SELECT * FROM api_keys WHERE secret_hash = ?", arguments: [secretHash])
        .map(Self.apiKey)
    }
  }

  public func apiKey(id: String) async throws -> APIKeyRecord? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: "SELECT * FROM api_keys WHERE id = ?", arguments: [id]).map(Self.apiKey)
    }
  }

  public func apiKeys() async throws -> [APIKeyRecord] {
    try await pool.read { db in
      try Row.fetchAll(db, sql: "SELECT * FROM api_keys ORDER BY create_time").map(Self.apiKey)
    }
  }

  public func saveAPIKey(_ key: APIKeyRecord) async throws {
    try await pool.write { db in
      try db.execute(
        sql: """
          INSERT INTO api_keys (id, app, secret_hash, per_minute, per_day, create_time, revoke_time)
          VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET per_minute = excluded.per_minute, per_day = excluded.per_day,
            revoke_time = excluded.revoke_time
          """,
        arguments: [
          key.id, key.app, key.secretHash, key.perMinute, key.perDay, key.createTime.timeIntervalSince1970,
          key.revokeTime?.timeIntervalSince1970,
        ])
    }
  }

  static func apiKey(_ row: Row) -> APIKeyRecord {
    APIKeyRecord(
      id: row["id"], app: row["app"], secretHash: row["secret_hash"], perMinute: row["per_minute"],
      perDay: row["per_day"], createTime: Date(timeIntervalSince1970: row["create_time"]),
      revokeTime: (row["revoke_time"] as Double?).map { Date(timeIntervalSince1970: $0) })
  }
}
