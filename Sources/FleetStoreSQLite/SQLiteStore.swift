import FleetCore
import FleetStoreCore
import Foundation
import GRDB
import Logging

/// The embedded default store: one SQLite file (WAL) under the data directory, through GRDB.
///
/// Durability: `commit` returns only after SQLite has synced the transaction (synchronous=FULL).
/// Throughput: commits that arrive while one is being written are batched into the next
/// transaction (group commit); one waiting caller is promoted to write each batch, so there is no
/// background task and no caller waits behind more than one batch.
public final class SQLiteStore: FleetStore, APIKeyStore, SecretStore, WebhookStore {
  public static let fileName = "fleet.sqlite"

  let pool: DatabasePool
  let logger: Logger
  let committer: GroupCommit<[EncodedChange]>

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
    committer = GroupCommit(
      write: { [pool] batch in try await Self.write(batch.flatMap { $0 }, to: pool) },
      failed: { error, size in
        logger.error("commit failed", metadata: ["error": "\(error)", "batch.size": "\(size)"])
      })
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
      // Booked rides (the dispatcher's records), kept by revision like trips and vehicles.
      try db.execute(
        sql: """
          CREATE TABLE rides (
            provider TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL, body BLOB,
            PRIMARY KEY (provider, id)) WITHOUT ROWID
          """)
    }
    migrator.registerMigration("v4: binary rows") { db in
      // Rows written as JSON by earlier versions become binary, so that every row read is.
      for table in StoredTable.beforeDeliveries {
        let rows = try Row.fetchAll(
          db, sql: "SELECT provider, id, body FROM \(table.rawValue) WHERE substr(body, 1, 1) = CAST('{' AS BLOB)")
        for row in rows {
          let converted = try convert(table.rawValue, row) { try LegacyJSONRows.binary($0, table: table) }
          try db.execute(
            sql: "UPDATE \(table.rawValue) SET body = ? WHERE provider = ? AND id = ?",
            arguments: [converted, row["provider"], row["id"]])
        }
      }
      let reports = try Row.fetchAll(
        db, sql: "SELECT rowid, provider, id, body FROM billable_trips WHERE substr(body, 1, 1) = CAST('{' AS BLOB)")
      for row in reports {
        let converted = try convert("billable_trips", row, LegacyJSONRows.binaryBillableTrip)
        try db.execute(sql: "UPDATE billable_trips SET body = ? WHERE rowid = ?", arguments: [converted, row["rowid"]])
      }
    }
    migrator.registerMigration("v5: secrets") { db in
      // Made once and kept: the key that seals quote IDs.
      try db.execute(sql: "CREATE TABLE secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL)")
    }
    migrator.registerMigration("v6: webhooks") { db in
      for statement in WebhookTables.statements { try db.execute(sql: statement) }
    }
    migrator.registerMigration("v7: tombstone times") { db in
      // When each tombstone was written, so that the old ones can go (`Tombstones.retention`);
      // those written before this version count from now. The highest revision purged is kept,
      // so that new revisions still sort after every one ever stored.
      for table in StoredTable.beforeDeliveries {
        let name = table.rawValue
        try db.execute(sql: "ALTER TABLE \(name) ADD COLUMN deleted_at REAL")
        try db.execute(
          sql: "UPDATE \(name) SET deleted_at = ? WHERE body IS NULL", arguments: [Date().timeIntervalSince1970])
        try db.execute(sql: "CREATE INDEX \(name)_tombstones ON \(name) (deleted_at) WHERE body IS NULL")
      }
      try db.execute(
        sql: "CREATE TABLE purged_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL)")
      try db.execute(sql: "INSERT INTO purged_revision VALUES (1, 0)")
    }
    migrator.registerMigration("v8: deliveries") { db in
      // The Deliveries API's vehicles and tasks, kept by revision like trips and vehicles.
      for table in [StoredTable.deliveryVehicles, .tasks] {
        let name = table.rawValue
        try db.execute(
          sql: """
            CREATE TABLE \(name) (
              provider TEXT NOT NULL, id TEXT NOT NULL, revision INTEGER NOT NULL, body BLOB, deleted_at REAL,
              PRIMARY KEY (provider, id)) WITHOUT ROWID
            """)
        try db.execute(sql: "CREATE INDEX \(name)_tombstones ON \(name) (deleted_at) WHERE body IS NULL")
      }
    }
    migrator.registerMigration("v9: traffic profile") { db in
      try db.execute(sql: TrafficProfileTable.statement)
    }
    return migrator
  }

  /// A JSON row's binary body; a row that cannot be read stops the start with its name.
  static func convert(_ table: String, _ row: Row, _ binary: (Data) throws -> Data) throws -> Data {
    do {
      return try binary(row["body"])
    } catch {
      throw StoreError.damagedRow(table: table, provider: row["provider"], id: row["id"], reason: "\(error)")
    }
  }

  // MARK: - Loading

  public func loadTrips() async throws -> [Trip] { try await load(.trips, StoredRows.trip(from:)) }
  public func loadVehicles() async throws -> [Vehicle] { try await load(.vehicles, StoredRows.vehicle(from:)) }
  public func loadRides() async throws -> [Ride] { try await load(.rides, StoredRows.ride(from:)) }
  public func loadDeliveryVehicles() async throws -> [DeliveryVehicle] {
    try await load(.deliveryVehicles, StoredRows.deliveryVehicle(from:))
  }
  public func loadTasks() async throws -> [DeliveryTask] { try await load(.tasks, StoredRows.task(from:)) }

  public func highestRevision() async throws -> UInt64 {
    try await pool.read { db in
      UInt64(
        try Int64.fetchOne(
          db,
          sql: """
            SELECT MAX(r) FROM (SELECT MAX(revision) AS r FROM trips UNION ALL SELECT MAX(revision) FROM vehicles
              UNION ALL SELECT MAX(revision) FROM rides UNION ALL SELECT MAX(revision) FROM delivery_vehicles
              UNION ALL SELECT MAX(revision) FROM tasks UNION ALL SELECT revision FROM purged_revision)
            """)
          ?? 0)
    }
  }

  func load<T: Sendable>(_ table: StoredTable, _ decode: @escaping @Sendable (Data) throws -> T) async throws -> [T] {
    try await pool.read { db in
      let rows = try Row.fetchCursor(
        db, sql: "SELECT provider, id, body FROM \(table.rawValue) WHERE body IS NOT NULL")
      var values: [T] = []
      while let row = try rows.next() {
        let body: Data = row["body"]
        do {
          values.append(try decode(body))
        } catch {
          throw StoreError.damagedRow(
            table: table.rawValue, provider: row["provider"], id: row["id"], reason: "\(error)")
        }
      }
      return values
    }
  }

  // MARK: - Group commit

  /// Memory is the only writer, so expected revisions need no check; progress is derived and
  /// recomputed at start.
  public func commit(_ commit: FleetCommit) async throws {
    try await committer.commit(StoredRows.encode(commit.changes))
  }

  static func upsert(_ table: StoredTable) -> String {
    // Keeps the newest revision whatever order commits land in.
    """
    INSERT INTO \(table.rawValue) (provider, id, revision, body, deleted_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (provider, id) DO UPDATE SET revision = excluded.revision, body = excluded.body,
      deleted_at = excluded.deleted_at
    WHERE excluded.revision > \(table.rawValue).revision
    """
  }

  static func write(_ changes: [EncodedChange], to pool: DatabasePool) async throws {
    try await pool.write { db in
      let now = Date().timeIntervalSince1970
      for change in changes {
        switch change {
        case .row(let row):
          try db.cachedStatement(sql: Self.upsert(row.table)).execute(
            arguments: [row.provider, row.id, Int64(row.revision), row.body, row.body == nil ? now : nil])
        case .billableTrip(let provider, let id, let reportTime, let body):
          try db.cachedStatement(
            sql: "INSERT INTO billable_trips (provider, id, report_time, body) VALUES (?, ?, ?, ?)"
          )
          .execute(arguments: [provider, id, reportTime, body])
        case .event(let event):
          try db.cachedStatement(
            sql: """
              INSERT INTO webhook_events (id, provider, type, subject, revision, position, time, body)
              VALUES (?, ?, ?, ?, ?, ?, ?, ?)
              """
          )
          .execute(arguments: [
            event.id, event.provider, event.type, event.subject, Int64(event.revision), event.position, event.time,
            event.body,
          ])
        }
      }
    }
  }

  // MARK: - Tombstones

  public func purgeTombstones(olderThan age: Duration, limit: Int) async throws -> Int {
    let cutoff = Date().timeIntervalSince1970 - Double(age.components.seconds)
    return try await pool.write { db in
      var purged = 0
      for table in StoredTable.allCases where purged < limit {
        let name = table.rawValue
        let doomed = "SELECT provider, id FROM \(name) WHERE body IS NULL AND deleted_at < ? LIMIT ?"
        let arguments: StatementArguments = [cutoff, limit - purged]
        try db.execute(
          sql: """
            UPDATE purged_revision SET revision = MAX(revision, COALESCE((SELECT MAX(revision) FROM \(name)
              WHERE (provider, id) IN (\(doomed))), 0))
            """, arguments: arguments)
        try db.execute(sql: "DELETE FROM \(name) WHERE (provider, id) IN (\(doomed))", arguments: arguments)
        purged += db.changesCount
      }
      return purged
    }
  }

  // MARK: - Secrets

  public func secret(named name: String, generate: @Sendable () -> [UInt8]) async throws -> [UInt8] {
    let fresh = Data(generate())
    return try await pool.write { db in
      try db.execute(
        sql: "INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [name, fresh])
      let value = try Data.fetchOne(db, sql: "SELECT value FROM secrets WHERE name = ?", arguments: [name])
      return [UInt8](value ?? fresh)
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
