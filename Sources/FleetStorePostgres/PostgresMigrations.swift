import FleetStoreCore
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The schema's history, as the SQLite store keeps it: named migrations applied once each, in
/// order, recorded in `fleetkit_migrations` (the shape of GRDB's `grdb_migrations`). Instances
/// starting together take a lock, so each migration runs exactly once.
enum PostgresMigrations {
  struct Migration {
    let identifier: String
    var statements: [String] = []
    /// Work beyond SQL, in the same transaction, after the statements.
    var convert: (@Sendable (PostgresConnection, Logger) async throws -> Void)?
  }

  /// Taken by an instance while it migrates: others starting meanwhile wait for it.
  static let lockKey: Int64 = 0x666c_6565_746b_6974  // "fleetkit"
  /// Taken by every writing transaction: commits are serialised, so the change log's order is
  /// the commit order and a follower that has read a batch has seen every batch before it.
  static let commitLockKey = lockKey + 1
  /// Held by the instance whose dispatcher runs (the dispatch lease).
  static let dispatchLeaseKey = lockKey + 2
  /// Held by the instance that delivers webhooks (the webhook lease).
  static let webhookLeaseKey = lockKey + 3

  /// Entities by provider and ID with their revision; body is NULL for a tombstone (a deletion
  /// kept so that an older write cannot resurrect it).
  static func entityTable(_ name: String) -> String {
    """
    CREATE TABLE \(name) (
      provider TEXT NOT NULL, id TEXT NOT NULL, revision BIGINT NOT NULL, body BYTEA, PRIMARY KEY (provider, id))
    """
  }

  static let all: [Migration] = [
    Migration(
      identifier: "v1",
      statements: [
        entityTable("trips"),
        entityTable("vehicles"),
        """
        CREATE TABLE billable_trips (
          provider TEXT NOT NULL, id TEXT NOT NULL, report_time DOUBLE PRECISION NOT NULL, body BYTEA NOT NULL)
        """,
        """
        CREATE TABLE signing_keys (
          key_id TEXT PRIMARY KEY, provider TEXT NOT NULL, role TEXT NOT NULL, public_key_pem TEXT NOT NULL,
          client_email TEXT NOT NULL, create_time DOUBLE PRECISION NOT NULL, revoke_time DOUBLE PRECISION)
        """,
      ]),
    Migration(
      identifier: "v2: api keys",
      statements: [
        """
        CREATE TABLE api_keys (
          id TEXT PRIMARY KEY, app TEXT NOT NULL, secret_hash TEXT NOT NULL UNIQUE, per_minute BIGINT NOT NULL,
          per_day BIGINT NOT NULL, create_time DOUBLE PRECISION NOT NULL, revoke_time DOUBLE PRECISION)
        """
      ]),
    Migration(
      identifier: "v3: rides",
      statements: [
        // Booked rides (the dispatcher's records), kept by revision like trips and vehicles.
        entityTable("rides")
      ]),
    Migration(
      identifier: "v4: change log",
      statements: [
        // Each committed batch, in commit order, for the other instances to follow.
        """
        CREATE TABLE changes (
          sequence BIGINT PRIMARY KEY, origin BIGINT NOT NULL, committed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
          body BYTEA NOT NULL)
        """,
        "CREATE SEQUENCE changes_sequence",
        // Where pruning has reached: an instance behind it must reload.
        "CREATE TABLE changes_pruned (id INT PRIMARY KEY CHECK (id = 1), through BIGINT NOT NULL)",
        "INSERT INTO changes_pruned VALUES (1, 0)",
        // Each running instance: its tag keeps its revisions apart; seen_at counts the live ones.
        "CREATE SEQUENCE instance_tags",
        """
        CREATE TABLE instances (
          tag BIGINT PRIMARY KEY, host TEXT NOT NULL, started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
          seen_at TIMESTAMPTZ NOT NULL DEFAULT now())
        """,
      ]),
    Migration(
      identifier: "v5: binary rows",
      statements: [
        // The log's older batches carry rides as JSON: they are dropped, and an instance still
        // following them hears that it is behind and restarts.
        "UPDATE changes_pruned SET through = GREATEST(through, (SELECT COALESCE(MAX(sequence), 0) FROM changes))",
        "DELETE FROM changes",
      ],
      convert: convertJSONRows),
    Migration(
      identifier: "v6: secrets",
      statements: [
        // Made once and kept: the key that seals quote IDs.
        "CREATE TABLE secrets (name TEXT PRIMARY KEY, value BYTEA NOT NULL)"
      ]),
    Migration(identifier: "v7: webhooks", statements: WebhookTables.statements),
    Migration(
      identifier: "v8: tombstone times",
      statements: StoredTable.beforeDeliveries.flatMap { table in
        let name = table.rawValue
        // When each tombstone was written, so that the old ones can go (`Tombstones.retention`);
        // those written before this version count from now.
        return [
          "ALTER TABLE \(name) ADD COLUMN deleted_at DOUBLE PRECISION",
          "UPDATE \(name) SET deleted_at = extract(epoch FROM now())::float8 WHERE body IS NULL",
          "CREATE INDEX \(name)_tombstones ON \(name) (deleted_at) WHERE body IS NULL",
        ]
      } + [
        // The highest revision purged, so that new revisions still sort after every one stored.
        "CREATE TABLE purged_revision (id INT PRIMARY KEY CHECK (id = 1), revision BIGINT NOT NULL)",
        "INSERT INTO purged_revision VALUES (1, 0)",
      ]),
    Migration(
      identifier: "v9: deliveries",
      statements: [StoredTable.deliveryVehicles, .tasks].flatMap { table in
        // The Deliveries API's vehicles and tasks, kept by revision like trips and vehicles.
        let name = table.rawValue
        return [
          entityTable(name),
          "ALTER TABLE \(name) ADD COLUMN deleted_at DOUBLE PRECISION",
          "CREATE INDEX \(name)_tombstones ON \(name) (deleted_at) WHERE body IS NULL",
        ]
      }),
    Migration(identifier: "v10: traffic profile", statements: [TrafficProfileTable.statement]),
  ]

  /// Rows written as JSON by earlier versions become binary, so that every row read is.
  static func convertJSONRows(_ connection: PostgresConnection, logger: Logger) async throws {
    for table in StoredTable.beforeDeliveries {
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL:
            "SELECT provider, id, body FROM \(table.rawValue) WHERE length(body) > 0 AND get_byte(body, 0) = 123"),
        logger: logger)
      var converted: [(String, String, ByteBuffer)] = []
      for try await (provider, id, body) in rows.decode((String, String, ByteBuffer).self) {
        let binary = try convert(table.rawValue, provider, id, body) { try LegacyJSONRows.binary($0, table: table) }
        converted.append((provider, id, ByteBuffer(bytes: binary)))
      }
      for (provider, id, body) in converted {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(body)
        bindings.append(provider)
        bindings.append(id)
        try await connection.query(
          PostgresQuery(
            unsafeSQL: "UPDATE \(table.rawValue) SET body = $1 WHERE provider = $2 AND id = $3", binds: bindings),
          logger: logger)
      }
    }
    let reports = try await connection.query(
      "SELECT ctid::text, provider, id, body FROM billable_trips WHERE length(body) > 0 AND get_byte(body, 0) = 123",
      logger: logger)
    var converted: [(String, ByteBuffer)] = []
    for try await (ctid, provider, id, body) in reports.decode((String, String, String, ByteBuffer).self) {
      let binary = try convert("billable_trips", provider, id, body, LegacyJSONRows.binaryBillableTrip)
      converted.append((ctid, ByteBuffer(bytes: binary)))
    }
    for (ctid, body) in converted {
      try await connection.query("UPDATE billable_trips SET body = \(body) WHERE ctid = \(ctid)::tid", logger: logger)
    }
  }

  /// A JSON row's binary body; a row that cannot be read stops the start with its name.
  static func convert(
    _ table: String, _ provider: String, _ id: String, _ body: ByteBuffer, _ binary: (Data) throws -> Data
  ) throws -> Data {
    do {
      return try binary(Data(buffer: body))
    } catch {
      throw StoreError.damagedRow(table: table, provider: provider, id: id, reason: "\(error)")
    }
  }

  /// Applies the migrations the database lacks, in one transaction under a lock; refuses a
  /// database migrated by a newer fleetd.
  static func migrate(_ client: PostgresClient, logger: Logger) async throws {
    try await PostgresStore.transaction(client, logger: logger) { connection in
      try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
      try await connection.query(
        "CREATE TABLE IF NOT EXISTS fleetkit_migrations (identifier TEXT NOT NULL PRIMARY KEY)", logger: logger)
      var applied = Set<String>()
      for try await identifier in try await connection.query(
        "SELECT identifier FROM fleetkit_migrations", logger: logger
      ).decode(String.self) {
        applied.insert(identifier)
      }
      let known = Set(all.map(\.identifier))
      if let unknown = applied.subtracting(known).sorted().first {
        throw PostgresStoreError.newerSchema(migration: unknown)
      }
      for migration in all where !applied.contains(migration.identifier) {
        for statement in migration.statements {
          try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
        try await migration.convert?(connection, logger)
        try await connection.query(
          "INSERT INTO fleetkit_migrations (identifier) VALUES (\(migration.identifier))", logger: logger)
        logger.notice("schema migrated", metadata: ["migration": "\(migration.identifier)"])
      }
    }
  }
}
