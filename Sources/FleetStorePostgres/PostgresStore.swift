import FleetCore
import FleetStoreCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The store several fleetd instances share: PostgreSQL through postgres-nio, with the same
/// tables, row format and revision rules as the embedded SQLite store.
///
/// Durability: `commit` returns only after COMMIT, with `synchronous_commit` on for its sessions
/// whatever the server's default. Throughput: group commit, as SQLite's store does: the commits
/// of every caller waiting while a batch is written go into the next transaction, one multi-row
/// statement per table (array parameters and `unnest`), never one statement per row.
///
/// Sharing: each transaction checks the revisions its writes expect (a write another instance
/// overtook is refused as a `StoreConflict`, the rest of the batch goes on) and logs the batch
/// to `changes`, with one NOTIFY, under a lock that makes the log's order the commit order.
public final class PostgresStore: SharedFleetStore, APIKeyStore, SecretStore, WebhookStore {
  public let address: PostgresAddress
  public let instanceTag: UInt64
  public let follower: any CommitFollower
  let client: PostgresClient
  let logger: Logger
  let running: Task<Void, Never>
  let committer: GroupCommit<PendingWrite>
  /// Live instances sharing the database, as the last heartbeat counted them.
  let liveInstanceCount = Mutex(1)

  /// The channel each committed batch is announced on.
  static let channel = "fleetkit_changes"

  /// Connects, waits until PostgreSQL answers (up to `timeout`), and migrates the schema.
  public static func connect(
    _ address: PostgresAddress, logger: Logger = Logger(label: "fleetkit.postgres"), timeout: Duration = .seconds(30)
  ) async throws -> PostgresStore {
    let (client, running) = Self.startClient(address, logger: logger)
    do {
      try await waitUntilReachable(client, address: address, logger: logger, timeout: timeout)
      try await PostgresMigrations.migrate(client, logger: logger)
      let tag = try await allocateInstanceTag(client, logger: logger)
      // The log is followed from here, before the fleet is loaded from the tables: what is
      // committed in between is applied again, which changes nothing.
      let log = PostgresChangeLog(client: client, logger: logger)
      let follower = ChangeLogFollower(feed: log, cursor: try await log.latestSequence())
      return PostgresStore(
        address: address, instanceTag: tag, follower: follower, client: client, running: running, logger: logger)
    } catch {
      running.cancel()
      await running.value
      throw error
    }
  }

  /// A tag from the shared sequence, within the 16 bits revisions keep for it (never 0, which
  /// is the tag of revisions written before instances shared the database).
  static func allocateInstanceTag(_ client: PostgresClient, logger: Logger) async throws -> UInt64 {
    for try await next in try await client.query("SELECT nextval('instance_tags')", logger: logger).decode(Int64.self) {
      return UInt64(next) % 0xFFFF + 1
    }
    throw PostgresStoreError.failed("no instance tag")
  }

  /// The stores' connections have an event loop of their own, so that a commit's round trips
  /// never queue behind the requests fleetd's shared loops are busy with (under load a loop's
  /// queue held each of a commit's five round trips for a few hundred milliseconds).
  static let connectionLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

  static func startClient(_ address: PostgresAddress, logger: Logger) -> (PostgresClient, Task<Void, Never>) {
    var configuration = address.clientConfiguration
    // Durable commits even where the server's default is off: an acknowledged write is on disk.
    configuration.options.additionalStartupParameters = [
      ("synchronous_commit", "on"), ("application_name", "fleetd"),
    ]
    // Commits, reads, the LISTEN connection and the dispatch lease share the pool.
    configuration.options.maximumConnections = 10
    let client = PostgresClient(configuration: configuration, eventLoopGroup: connectionLoop, backgroundLogger: logger)
    // The pool runs for the store's lifetime; `close()` ends it.
    return (client, Task { await client.run() })
  }

  init(
    address: PostgresAddress, instanceTag: UInt64, follower: any CommitFollower, client: PostgresClient,
    running: Task<Void, Never>, logger: Logger
  ) {
    self.address = address
    self.instanceTag = instanceTag
    self.follower = follower
    self.client = client
    self.running = running
    self.logger = logger
    committer = GroupCommit(
      answering: { writes in
        try await TimeLimit.run(
          .seconds(10),
          PostgresStoreError.failed(
            "a commit got no answer within 10 s (was the connection lost?); it may or may not have been stored")
        ) { try await Self.write(writes, origin: instanceTag, with: client, logger: logger) }
      },
      failed: { error, size in
        logger.error("commit failed", metadata: ["error": "\(String(reflecting: error))", "batch.size": "\(size)"])
      })
  }

  /// Stops the connection pool; queries after this fail.
  public func close() async {
    running.cancel()
    await running.value
  }

  /// The pool retries connecting by itself, so a query to a server that is down waits rather
  /// than fails: the wait is bounded here.
  static func waitUntilReachable(
    _ client: PostgresClient, address: PostgresAddress, logger: Logger, timeout: Duration
  ) async throws {
    try await TimeLimit.run(
      timeout,
      PostgresStoreError.unreachable(
        address: address.description,
        reason: "no connection within \(timeout) (is it running, and does it accept this user and database?)")
    ) { _ = try await client.query("SELECT 1", logger: logger) }
  }

  /// A transaction whose failure is the error that caused it (postgres-nio wraps it).
  @discardableResult
  static func transaction<T>(
    _ client: PostgresClient, logger: Logger, _ body: (PostgresConnection) async throws -> T
  ) async throws -> T {
    do {
      return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
    } catch let error as PostgresTransactionError {
      let cause = error.closureError ?? error.beginError ?? error.commitError ?? error
      if cause is PSQLError { throw PostgresStoreError.failed(describe(cause)) }
      throw cause
    }
  }

  /// postgres-nio hides the server's message from `description`; this names it.
  static func describe(_ error: any Error) -> String {
    if let error = error as? PSQLError {
      let message = error.serverInfo?[.message] ?? ""
      return message.isEmpty ? "\(error.code)" : "\(message) (\(error.serverInfo?[.sqlState] ?? "\(error.code)"))"
    }
    return "\(error)"
  }

  // MARK: - Loading

  public func loadTrips() async throws -> [Trip] { try await load(.trips, StoredRows.trip(from:)) }
  public func loadVehicles() async throws -> [Vehicle] { try await load(.vehicles, StoredRows.vehicle(from:)) }
  public func loadRides() async throws -> [Ride] { try await load(.rides, StoredRows.ride(from:)) }
  public func loadDeliveryVehicles() async throws -> [DeliveryVehicle] {
    try await load(.deliveryVehicles, StoredRows.deliveryVehicle(from:))
  }
  public func loadTasks() async throws -> [DeliveryTask] { try await load(.tasks, StoredRows.task(from:)) }

  func load<T>(_ table: StoredTable, _ decode: (Data) throws -> T) async throws -> [T] {
    let rows = try await client.query(
      PostgresQuery(unsafeSQL: "SELECT provider, id, body FROM \(table.rawValue) WHERE body IS NOT NULL"),
      logger: logger)
    var values: [T] = []
    for try await (provider, id, body) in rows.decode((String, String, ByteBuffer).self) {
      do {
        values.append(try decode(Data(body.readableBytesView)))
      } catch {
        throw StoreError.damagedRow(table: table.rawValue, provider: provider, id: id, reason: "\(error)")
      }
    }
    return values
  }

  public func highestRevision() async throws -> UInt64 {
    let rows = try await client.query(
      """
      SELECT COALESCE(MAX(r), 0) FROM (SELECT MAX(revision) AS r FROM trips UNION ALL
        SELECT MAX(revision) FROM vehicles UNION ALL SELECT MAX(revision) FROM rides UNION ALL
        SELECT MAX(revision) FROM delivery_vehicles UNION ALL SELECT MAX(revision) FROM tasks UNION ALL
        SELECT revision FROM purged_revision) AS highest
      """, logger: logger)
    for try await (revision) in rows.decode(Int64.self) { return UInt64(max(0, revision)) }
    return 0
  }

  // MARK: - Group commit

  public func commit(_ commit: FleetCommit) async throws {
    try await committer.commit(PendingWrite(commit))
  }

  /// One transaction for a batch of writes, under the commit lock: the stored revisions of
  /// every entity the batch touches are read, each write is checked against them in order (a
  /// write another instance overtook is refused, and so is a later write built on it), and the
  /// accepted ones are written with one statement per table, logged as one batch and announced
  /// with one NOTIFY.
  static func write(
    _ writes: [PendingWrite], origin: UInt64, with client: PostgresClient, logger: Logger
  ) async throws -> [(any Error)?] {
    try await transaction(client, logger: logger) { connection in
      try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.commitLockKey))", logger: logger)
      var stored = try await storedRevisions(of: writes, on: connection, logger: logger)
      var outcomes: [(any Error)?] = []
      var accepted: [PendingWrite] = []
      for write in writes {
        let conflicts = write.conflicts(with: stored)
        guard conflicts.isEmpty else {
          outcomes.append(StoreConflict(entities: conflicts))
          continue
        }
        write.apply(to: &stored)
        accepted.append(write)
        outcomes.append(nil)
      }
      guard !accepted.isEmpty else { return outcomes }
      var rows: [StoredTable: RowColumns] = [:]
      var billable = BillableColumns()
      var events = EventColumns()
      for change in StoredRows.newestPerRow(accepted.flatMap(\.rows)) {
        switch change {
        case .row(let row):
          rows[row.table, default: RowColumns()].append(row)
        case .billableTrip(let provider, let id, let reportTime, let body):
          billable.append(provider: provider, id: id, reportTime: reportTime, body: body)
        case .event(let event):
          events.append(event)
        }
      }
      for table in StoredTable.allCases {
        guard let columns = rows[table] else { continue }
        try await connection.query(columns.upsert(into: table), logger: logger)
      }
      if !billable.providers.isEmpty {
        try await connection.query(
          """
          INSERT INTO billable_trips (provider, id, report_time, body)
          SELECT * FROM unnest(\(billable.providers)::text[], \(billable.ids)::text[],
            \(billable.reportTimes)::float8[], \(billable.bodies)::bytea[])
          """, logger: logger)
      }
      if !events.ids.isEmpty { try await connection.query(events.insert, logger: logger) }
      let logged = ChangeLog.encode(accepted.map(\.logged))
      try await connection.query(
        """
        WITH logged AS (
          INSERT INTO changes (sequence, origin, body) VALUES (nextval('changes_sequence'), \(Int64(origin)), \(logged))
          RETURNING sequence)
        SELECT pg_notify(\(channel), sequence::text) FROM logged
        """, logger: logger)
      return outcomes
    }
  }

  /// Under the commit lock, so that no batch reads a tombstone's revision while it goes. Every
  /// instance sweeps; a tombstone another has purged is simply not there.
  public func purgeTombstones(olderThan age: Duration, limit: Int) async throws -> Int {
    let seconds = Double(age.components.seconds)
    return try await Self.transaction(client, logger: logger) { connection in
      try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresMigrations.commitLockKey))", logger: logger)
      var purged = 0
      for table in StoredTable.allCases where purged < limit {
        let name = table.rawValue
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(seconds)
        bindings.append(Int64(limit - purged))
        let rows = try await connection.query(
          PostgresQuery(
            unsafeSQL: """
              WITH doomed AS (
                DELETE FROM \(name) WHERE (provider, id) IN (
                  SELECT provider, id FROM \(name) WHERE body IS NULL AND deleted_at < extract(epoch FROM now())::float8 - $1
                  LIMIT $2)
                RETURNING revision),
              raised AS (
                UPDATE purged_revision SET revision = GREATEST(revision, (SELECT MAX(revision) FROM doomed))
                WHERE EXISTS (SELECT 1 FROM doomed))
              SELECT COUNT(*) FROM doomed
              """, binds: bindings), logger: logger)
        for try await count in rows.decode(Int64.self) { purged += Int(count) }
      }
      return purged
    }
  }

  /// The revision stored for every entity a batch touches (tombstones included).
  static func storedRevisions(
    of writes: [PendingWrite], on connection: PostgresConnection, logger: Logger
  ) async throws -> StoredRevisions {
    var keys: [StoredTable: Set<EntityKey>] = [:]
    for write in writes {
      for key in write.expected.keys { keys[StoredTable(key.kind), default: []].insert(key) }
    }
    var stored = StoredRevisions()
    for (table, tableKeys) in keys {
      let providers = tableKeys.map(\.provider)
      let ids = tableKeys.map(\.id)
      var bindings = PostgresBindings(capacity: 2)
      bindings.append(providers)
      bindings.append(ids)
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL: """
            SELECT t.provider, t.id, t.revision, t.body IS NULL FROM unnest($1::text[], $2::text[]) AS b(provider, id)
            JOIN \(table.rawValue) t ON t.provider = b.provider AND t.id = b.id
            """, binds: bindings), logger: logger)
      for try await (provider, id, revision, deleted) in rows.decode((String, String, Int64, Bool).self) {
        let key = EntityKey(table.kind, provider: provider, id: id)
        stored.revision[key] = UInt64(revision)
        if !deleted { stored.live[key] = UInt64(revision) }
      }
    }
    return stored
  }

  /// A batch's rows of one table as arrays, one per column.
  struct RowColumns {
    var providers: [String] = []
    var ids: [String] = []
    var revisions: [Int64] = []
    var bodies: [ByteBuffer] = []
    /// Tombstones: arrays of bytea cannot carry NULL through postgres-nio, so a flag does.
    var deleted: [Bool] = []

    mutating func append(_ row: StoredRow) {
      providers.append(row.provider)
      ids.append(row.id)
      revisions.append(Int64(row.revision))
      bodies.append(ByteBuffer(bytes: row.body ?? Data()))
      deleted.append(row.body == nil)
    }

    func upsert(into table: StoredTable) -> PostgresQuery {
      var bindings = PostgresBindings(capacity: 5)
      bindings.append(providers)
      bindings.append(ids)
      bindings.append(revisions)
      bindings.append(bodies)
      bindings.append(deleted)
      let name = table.rawValue
      return PostgresQuery(
        unsafeSQL: """
          INSERT INTO \(name) (provider, id, revision, body, deleted_at)
          SELECT provider, id, revision, CASE WHEN deleted THEN NULL ELSE body END,
            CASE WHEN deleted THEN extract(epoch FROM now())::float8 END
          FROM unnest($1::text[], $2::text[], $3::int8[], $4::bytea[], $5::bool[])
            AS batch(provider, id, revision, body, deleted)
          ON CONFLICT (provider, id) DO UPDATE SET revision = excluded.revision, body = excluded.body,
            deleted_at = excluded.deleted_at
          WHERE excluded.revision > \(name).revision
          """, binds: bindings)
    }
  }

  /// A batch's outbox events as arrays, one per column.
  struct EventColumns {
    var ids: [String] = []
    var providers: [String] = []
    var types: [String] = []
    var subjects: [String] = []
    var revisions: [Int64] = []
    var positions: [Int64] = []
    var times: [Double] = []
    var bodies: [ByteBuffer] = []

    mutating func append(_ event: EncodedEvent) {
      ids.append(event.id)
      providers.append(event.provider)
      types.append(event.type)
      subjects.append(event.subject)
      revisions.append(Int64(event.revision))
      positions.append(Int64(event.position))
      times.append(event.time)
      bodies.append(ByteBuffer(bytes: event.body))
    }

    var insert: PostgresQuery {
      """
      INSERT INTO webhook_events (id, provider, type, subject, revision, position, time, body)
      SELECT * FROM unnest(\(ids)::text[], \(providers)::text[], \(types)::text[], \(subjects)::text[],
        \(revisions)::int8[], \(positions)::int8[], \(times)::float8[], \(bodies)::bytea[])
      """
    }
  }

  struct BillableColumns {
    var providers: [String] = []
    var ids: [String] = []
    var reportTimes: [Double] = []
    var bodies: [ByteBuffer] = []

    mutating func append(provider: String, id: String, reportTime: Double, body: Data) {
      providers.append(provider)
      ids.append(id)
      reportTimes.append(reportTime)
      bodies.append(ByteBuffer(bytes: body))
    }
  }

  // MARK: - Secrets

  public func secret(named name: String, generate: @Sendable () -> [UInt8]) async throws -> [UInt8] {
    let fresh = ByteBuffer(bytes: generate())
    // Instances starting together race here: the first insert wins, and every one reads it.
    try await client.query(
      "INSERT INTO secrets (name, value) VALUES (\(name), \(fresh)) ON CONFLICT (name) DO NOTHING", logger: logger)
    for try await value in try await client.query("SELECT value FROM secrets WHERE name = \(name)", logger: logger)
      .decode(ByteBuffer.self)
    {
      return Array(buffer: value)
    }
    throw PostgresStoreError.failed("secret '\(name)' was neither stored nor found")
  }

  // MARK: - Signing keys

  public func signingKey(id: String) async throws -> SigningKey? {
    try await signingKeys(
      "SELECT key_id, provider, role, public_key_pem, client_email, create_time, revoke_time FROM signing_keys WHERE key_id = \(id)"
    ).first
  }

  public func signingKeys() async throws -> [SigningKey] {
    try await signingKeys(
      "SELECT key_id, provider, role, public_key_pem, client_email, create_time, revoke_time FROM signing_keys ORDER BY create_time"
    )
  }

  func signingKeys(_ query: PostgresQuery) async throws -> [SigningKey] {
    let rows = try await client.query(query, logger: logger)
    var keys: [SigningKey] = []
    for try await (keyID, provider, role, pem, email, created, revoked) in rows.decode(
      (String, String, String, String, String, Double, Double?).self)
    {
      keys.append(
        SigningKey(
          keyID: keyID, provider: provider, role: Role(rawValue: role) ?? .viewer, publicKeyPEM: pem,
          clientEmail: email, createTime: Date(timeIntervalSince1970: created),
          revokeTime: revoked.map { Date(timeIntervalSince1970: $0) }))
    }
    return keys
  }

  public func saveSigningKey(_ key: SigningKey) async throws {
    try await client.query(
      """
      INSERT INTO signing_keys (key_id, provider, role, public_key_pem, client_email, create_time, revoke_time)
      VALUES (\(key.keyID), \(key.provider), \(key.role.rawValue), \(key.publicKeyPEM), \(key.clientEmail),
        \(key.createTime.timeIntervalSince1970), \(key.revokeTime?.timeIntervalSince1970))
      ON CONFLICT (key_id) DO UPDATE SET revoke_time = excluded.revoke_time
      """, logger: logger)
  }

  // MARK: - API keys

  public func apiKey(secretHash: String) async throws -> APIKeyRecord? {
    try await apiKeys(
      "SELECT id, app, secret_hash, per_minute, per_day, create_time, revoke_time FROM api_keys WHERE secret_hash = \(secretHash)"
    ).first
  }

  public func apiKey(id: String) async throws -> APIKeyRecord? {
    try await apiKeys(
      "SELECT id, app, secret_hash, per_minute, per_day, create_time, revoke_time FROM api_keys WHERE id = \(id)"
    ).first
  }

  public func apiKeys() async throws -> [APIKeyRecord] {
    try await apiKeys(
      "SELECT id, app, secret_hash, per_minute, per_day, create_time, revoke_time FROM api_keys ORDER BY create_time")
  }

  func apiKeys(_ query: PostgresQuery) async throws -> [APIKeyRecord] {
    let rows = try await client.query(query, logger: logger)
    var keys: [APIKeyRecord] = []
    for try await (id, app, hash, perMinute, perDay, created, revoked) in rows.decode(
      (String, String, String, Int64, Int64, Double, Double?).self)
    {
      keys.append(
        APIKeyRecord(
          id: id, app: app, secretHash: hash, perMinute: Int(perMinute), perDay: Int(perDay),
          createTime: Date(timeIntervalSince1970: created), revokeTime: revoked.map { Date(timeIntervalSince1970: $0) })
      )
    }
    return keys
  }

  public func saveAPIKey(_ key: APIKeyRecord) async throws {
    try await client.query(
      """
      INSERT INTO api_keys (id, app, secret_hash, per_minute, per_day, create_time, revoke_time)
      VALUES (\(key.id), \(key.app), \(key.secretHash), \(Int64(key.perMinute)), \(Int64(key.perDay)),
        \(key.createTime.timeIntervalSince1970), \(key.revokeTime?.timeIntervalSince1970))
      ON CONFLICT (id) DO UPDATE SET per_minute = excluded.per_minute, per_day = excluded.per_day,
        revoke_time = excluded.revoke_time
      """, logger: logger)
  }
}

/// Failures of the PostgreSQL store that say what to do.
public enum PostgresStoreError: Error, CustomStringConvertible {
  case unreachable(address: String, reason: String)
  case newerSchema(migration: String)
  /// PostgreSQL refused or lost a transaction; the server's message when it sent one.
  case failed(String)

  public var description: String {
    switch self {
    case .unreachable(let address, let reason):
      "PostgreSQL at \(address) cannot be reached: \(reason)"
    case .newerSchema(let migration):
      "the database has migration '\(migration)', which this fleetd does not know: it was written by a newer fleetd"
    case .failed(let reason): "PostgreSQL: \(reason)"
    }
  }
}
