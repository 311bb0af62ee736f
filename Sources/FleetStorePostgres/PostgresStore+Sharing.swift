import FleetCore
import FleetStoreCore
import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// One caller's commit, encoded before it joins a batch.
struct PendingWrite: Sendable {
  let rows: [EncodedChange]
  /// The revision each touched entity must still have (0: absent or deleted).
  let expected: [EntityKey: UInt64]
  /// What the change log keeps of it.
  let logged: LoggedWrite

  init(_ commit: FleetCommit) {
    rows = StoredRows.encode(commit.changes)
    expected = commit.expectedRevisions
    let logRows = rows.compactMap { change -> StoredRow? in
      guard case .row(let row) = change else { return nil }
      return row
    }
    logged = LoggedWrite(rows: logRows, progress: commit.progress)
  }

  /// The entities this write may not overwrite: another instance changed them since this
  /// instance read them, or wrote a revision at least as new. (A row without an expected
  /// revision is only written if it is the newest, as in the embedded store.)
  func conflicts(with stored: StoredRevisions) -> [EntityKey] {
    var conflicting = Set<EntityKey>()
    for (key, revision) in expected where (stored.live[key] ?? 0) != revision { conflicting.insert(key) }
    for row in logged.rows {
      if expected[row.key] != nil, let newest = stored.revision[row.key], row.revision <= newest {
        conflicting.insert(row.key)
      }
    }
    return conflicting.sorted { $0.description < $1.description }
  }

  /// What the database holds once this write is accepted, for the batch's later writes.
  func apply(to stored: inout StoredRevisions) {
    for row in logged.rows {
      guard row.revision > stored.revision[row.key] ?? 0 else { continue }
      stored.revision[row.key] = row.revision
      stored.live[row.key] = row.body == nil ? nil : row.revision
    }
  }
}

/// The revisions stored for a batch's entities: any row (tombstones too), and live ones.
struct StoredRevisions {
  var revision: [EntityKey: UInt64] = [:]
  var live: [EntityKey: UInt64] = [:]
}

/// The body of a `changes` row: each accepted write of the batch, in commit order, with the
/// progress computed for its vehicles (`ChangeLogFormat`).
enum ChangeLog {
  static func encode(_ writes: [LoggedWrite]) -> ByteBuffer { ByteBuffer(bytes: ChangeLogFormat.encode(writes)) }

  /// One replicated batch per write, so that followers publish each write's state in turn.
  static func decode(sequence: UInt64, origin: UInt64, body: ByteBuffer) throws -> [ReplicatedBatch] {
    let writes: [LoggedWrite]
    do {
      writes = try ChangeLogFormat.decode(Array(body.readableBytesView))
    } catch {
      throw PostgresStoreError.failed("change \(sequence) cannot be read: \(error)")
    }
    return try writes.map { write in
      let changes = try write.rows.map(StoredRows.change)
      return ReplicatedBatch(sequence: sequence, origin: origin, changes: changes, progress: write.progress)
    }
  }
}

// MARK: - Following the log

extension PostgresStore {
  /// The change log, as this instance's follower reads it.
  public var changeLog: any ChangeFeed { PostgresChangeLog(client: client, logger: logger) }
}

/// The `changes` table and its notifications, as the follower reads them.
struct PostgresChangeLog: ChangeFeed {
  let client: PostgresClient
  let logger: Logger

  func latestSequence() async throws -> UInt64 {
    let rows = try await client.query(
      "SELECT GREATEST(COALESCE((SELECT MAX(sequence) FROM changes), 0), (SELECT through FROM changes_pruned))",
      logger: logger)
    for try await latest in rows.decode(Int64.self) { return UInt64(latest) }
    return 0
  }

  /// Bounded in time like commits: a catch-up stuck on a dead connection would hold every
  /// request behind the read barrier.
  func batches(after cursor: UInt64, limit: Int) async throws -> [ReplicatedBatch] {
    try await TimeLimit.run(
      .seconds(5), PostgresStoreError.failed("the change log did not answer within 5 s (was the connection lost?)")
    ) {
      try await self.readBatches(after: cursor, limit: limit)
    }
  }

  func readBatches(after cursor: UInt64, limit: Int) async throws -> [ReplicatedBatch] {
    // With the pruning mark in the same statement: a cursor behind it has missed changes.
    let rows = try await client.query(
      """
      SELECT p.through, c.sequence, c.origin, c.body FROM changes_pruned p
      LEFT JOIN LATERAL (
        SELECT sequence, origin, body FROM changes WHERE sequence > \(Int64(cursor)) ORDER BY sequence
        LIMIT \(Int64(limit))) c ON true
      """, logger: logger)
    var batches: [ReplicatedBatch] = []
    for try await (through, sequence, origin, body) in rows.decode((Int64, Int64?, Int64?, ByteBuffer?).self) {
      if UInt64(through) > cursor { throw ChangeFeedError.behind(cursor: cursor, prunedThrough: UInt64(through)) }
      guard let sequence, let origin, let body else { continue }
      batches += try ChangeLog.decode(sequence: UInt64(sequence), origin: UInt64(origin), body: body)
    }
    return batches
  }

  /// A connection LISTENs on the channel; when it is lost, another LISTENs again, then wakes the
  /// follower to catch up from its cursor.
  func wakeUps() -> AsyncStream<Void> {
    let (stream, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let client = client
    let logger = logger
    let listening = Task {
      while !Task.isCancelled {
        do {
          try await client.withConnection { connection in
            try await connection.listen(on: PostgresStore.channel) { notifications in
              wake.yield()
              for try await _ in notifications { wake.yield() }
            }
          }
        } catch {
          if Task.isCancelled { break }
          logger.warning(
            "change notifications lost; listening again", metadata: ["error": "\(PostgresStore.describe(error))"])
        }
        try? await Task.sleep(for: .milliseconds(200))
      }
      wake.finish()
    }
    wake.onTermination = { _ in listening.cancel() }
    return stream
  }
}

// MARK: - Leases and the instance registry

/// A lease one instance at a time holds: a session advisory lock on one pooled connection,
/// checked every `probe`. When its instance dies, PostgreSQL ends the session and frees the lock,
/// and the next try elsewhere (every `probe`) takes it.
struct PostgresLease: Lease {
  let name: String
  let key: Int64
  let store: PostgresStore

  func whileLeading(probe: Duration, _ body: @escaping @Sendable () async -> Void) async {
    let (client, logger, instance) = (store.client, store.logger, store.instanceTag)
    while !Task.isCancelled {
      do {
        try await client.withConnection { connection in
          let granted = try await Self.answer(probe * 3, "the lease's try", on: connection) { connection in
            var granted = false
            for try await answer in try await connection.query("SELECT pg_try_advisory_lock(\(key))", logger: logger)
              .decode(Bool.self)
            {
              granted = answer
            }
            return granted
          }
          guard granted else { return }
          logger.notice("\(name) lease taken", metadata: ["instance": "\(instance)"])
          let held = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
              await body()
              return true
            }
            group.addTask {
              // Lost with the connection: the lock may already be someone else's.
              while !Task.isCancelled {
                try? await Task.sleep(for: probe)
                do {
                  try await Self.answer(probe * 3, "the lease's probe", on: connection) { connection in
                    _ = try await connection.query("SELECT 1", logger: logger)
                  }
                } catch {
                  logger.notice("\(name) lease lost: \(error)", metadata: ["instance": "\(instance)"])
                  return false
                }
              }
              return true
            }
            let held = await group.next() ?? false
            group.cancelAll()
            return held
          }
          logger.notice("\(name) lease given up", metadata: ["instance": "\(instance)"])
          // A lost lease's connection is already closed, and its session's lock gone with it.
          guard held else { return }
          try await Self.answer(probe * 3, "the lease's unlock", on: connection) { connection in
            _ = try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
          }
        }
      } catch {
        if Task.isCancelled { break }
        logger.warning("\(name) lease unavailable", metadata: ["error": "\(PostgresStore.describe(error))"])
      }
      try? await Task.sleep(for: probe)
    }
  }

  /// `query` on the lease's connection within `limit`. A connection whose query fails, does not
  /// answer in time or is given up by a cancelled caller is closed rather than handed back to the
  /// pool with the query still waiting on it, where the next query would wait behind it for good;
  /// closing also ends its session, and with it a lock granted after the give-up.
  static func answer<T: Sendable>(
    _ limit: Duration, _ what: String, on connection: PostgresConnection,
    _ query: @escaping @Sendable (PostgresConnection) async throws -> T
  ) async throws -> T {
    do {
      return try await TimeLimit.run(limit, PostgresStoreError.failed("\(what) got no answer within \(limit)")) {
        try await query(connection)
      }
    } catch {
      try? await connection.close()
      throw error
    }
  }
}

extension PostgresStore {
  public var dispatchLease: any Lease {
    PostgresLease(name: "dispatch", key: PostgresMigrations.dispatchLeaseKey, store: self)
  }

  public var webhookLease: any Lease {
    PostgresLease(name: "webhook", key: PostgresMigrations.webhookLeaseKey, store: self)
  }

  public var liveInstances: Int { liveInstanceCount.withLock { $0 } }

  /// Until cancelled: records this instance as live (every `interval`), counts the live ones,
  /// and prunes the change log of what every instance has long read.
  public func maintain(interval: Duration = .seconds(2), keepChanges: Duration = .seconds(15 * 60)) async {
    let tag = Int64(instanceTag)
    let host = ProcessInfo.processInfo.hostName
    var lastPrune = ContinuousClock.now - keepChanges
    while !Task.isCancelled {
      do {
        try await client.query(
          """
          INSERT INTO instances (tag, host) VALUES (\(tag), \(host))
          ON CONFLICT (tag) DO UPDATE SET seen_at = now(), host = excluded.host
          """, logger: logger)
        let window = "\(Int((interval * 5).seconds)) seconds"
        for try await count in try await client.query(
          "SELECT COUNT(*) FROM instances WHERE seen_at > now() - \(window)::interval", logger: logger
        ).decode(Int64.self) {
          liveInstanceCount.withLock { $0 = max(1, Int(count)) }
        }
        if ContinuousClock.now - lastPrune > .seconds(60) {
          lastPrune = .now
          let keep = "\(Int(keepChanges.seconds)) seconds"
          try await client.query(
            """
            WITH pruned AS (DELETE FROM changes WHERE committed_at < now() - \(keep)::interval RETURNING sequence)
            UPDATE changes_pruned SET through = GREATEST(through, (SELECT MAX(sequence) FROM pruned))
            """, logger: logger)
          try await client.query(
            "DELETE FROM instances WHERE seen_at < now() - interval '1 hour'", logger: logger)
        }
      } catch {
        logger.warning("instance heartbeat failed", metadata: ["error": "\(Self.describe(error))"])
      }
      try? await Task.sleep(for: interval)
    }
    _ = try? await client.query("DELETE FROM instances WHERE tag = \(tag)", logger: logger)
  }
}
