import FleetCore
import Foundation
import Synchronization

/// A shared-store double for unit tests, shaped like the PostgreSQL store: each entity's stored
/// revision is checked against the write's expectation, and accepted writes go to a change log
/// in commit order. It can store a commit and lose its answer (the connection died after COMMIT),
/// and it can hold commits until the test answers them.
final class SharedMemoryStorage: SharedFleetStorage, ChangeFeed, DispatchLease {
  struct Database {
    var live: [EntityKey: UInt64] = [:]
    var log: [ReplicatedBatch] = []
  }

  /// How a held commit ends.
  enum Outcome { case stored, failed }

  let database = Mutex(Database())
  let instanceTag: UInt64 = 7
  /// The next commit is stored, then answered with an error.
  let loseNextAnswer = Mutex(false)
  /// While true, each commit waits for `answer(_:)`.
  let holding = Mutex(false)
  let held = Mutex<[CheckedContinuation<Outcome, Never>]>([])

  struct LostAnswer: Error {}
  struct Failed: Error {}

  func commit(_ commit: FleetCommit) async throws {
    if holding.withLock({ $0 }) {
      let outcome = await withCheckedContinuation { waiter in held.withLock { $0.append(waiter) } }
      if outcome == .failed { throw Failed() }
    }
    try database.withLock { db in
      let conflicting = commit.expectedRevisions.filter { db.live[$0.key] ?? 0 != $0.value }.map(\.key)
      guard conflicting.isEmpty else { throw StorageConflict(entities: conflicting) }
      for change in commit.changes {
        guard let (key, revision) = change.entity else { continue }
        switch change {
        case .deleteTrip, .deleteVehicle: db.live[key] = nil
        default: db.live[key] = revision
        }
      }
      db.log.append(
        ReplicatedBatch(
          sequence: UInt64(db.log.count + 1), origin: instanceTag, changes: commit.changes, progress: commit.progress))
    }
    if loseNextAnswer.withLock({ lose in
      defer { lose = false }
      return lose
    }) {
      throw LostAnswer()
    }
  }

  /// Commits waiting for an answer.
  var waiting: Int { held.withLock { $0.count } }

  /// Answers the oldest held commit.
  func answer(_ outcome: Outcome) {
    held.withLock { $0.removeFirst() }.resume(returning: outcome)
  }

  func storedRevision(_ key: EntityKey) -> UInt64? { database.withLock { $0.live[key] } }

  // The rest of the store: empty at start, one instance.
  func loadTrips() async throws -> [Trip] { [] }
  func loadVehicles() async throws -> [Vehicle] { [] }
  func loadRides() async throws -> [Ride] { [] }
  func highestRevision() async throws -> UInt64 { 0 }
  func signingKey(id: String) async throws -> SigningKey? { nil }
  func signingKeys() async throws -> [SigningKey] { [] }
  func saveSigningKey(_ key: SigningKey) async throws {}
  var feed: any ChangeFeed { self }
  var dispatchLease: any DispatchLease { self }
  var liveInstances: Int { 1 }
  func maintain(interval: Duration, keepChanges: Duration) async {}
  func whileLeading(probe: Duration, _ body: @escaping @Sendable () async -> Void) async { await body() }
  func latestSequence() async throws -> UInt64 { database.withLock { UInt64($0.log.count) } }
  func batches(after cursor: UInt64, limit: Int) async throws -> [ReplicatedBatch] {
    database.withLock { Array($0.log.dropFirst(Int(cursor)).prefix(limit)) }
  }
  func wakeUps() -> AsyncStream<Void> { AsyncStream { _ in } }
}
