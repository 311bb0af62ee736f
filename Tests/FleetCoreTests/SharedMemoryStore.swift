import FleetCore
import FleetStoreCore
import Foundation
import Synchronization

/// A shared-store double for unit tests, shaped like the PostgreSQL store: each entity's stored
/// revision is checked against the write's expectation, and accepted writes go to a change log
/// in commit order. It can store a commit and lose its answer (the connection died after COMMIT),
/// and it can hold commits until the test answers them.
final class SharedMemoryStore: SharedFleetStore, Lease {
  /// The change log, in commit order.
  final class Log: ChangeFeed {
    let batches = Mutex<[ReplicatedBatch]>([])

    func latestSequence() async throws -> UInt64 { batches.withLock { UInt64($0.count) } }
    func batches(after cursor: UInt64, limit: Int) async throws -> [ReplicatedBatch] {
      batches.withLock { Array($0.dropFirst(Int(cursor)).prefix(limit)) }
    }
    func wakeUps() -> AsyncStream<Void> { AsyncStream { _ in } }
  }

  /// How a held commit ends.
  enum Outcome { case stored, failed }

  /// Each entity's stored revision.
  let live = Mutex<[EntityKey: UInt64]>([:])
  let log = Log()
  let follower: any CommitFollower
  let instanceTag: UInt64 = 7
  /// The next commit is stored, then answered with an error.
  let loseNextAnswer = Mutex(false)
  /// While true, each commit waits for `answer(_:)`.
  let holding = Mutex(false)
  let held = Mutex<[CheckedContinuation<Outcome, Never>]>([])

  init() { follower = ChangeLogFollower(feed: log, cursor: 0) }

  struct LostAnswer: Error {}
  struct Failed: Error {}

  func commit(_ commit: FleetCommit) async throws {
    if holding.withLock({ $0 }) {
      let outcome = await withCheckedContinuation { waiter in held.withLock { $0.append(waiter) } }
      if outcome == .failed { throw Failed() }
    }
    try live.withLock { live in
      let conflicting = commit.expectedRevisions.filter { live[$0.key] ?? 0 != $0.value }.map(\.key)
      guard conflicting.isEmpty else { throw StoreConflict(entities: conflicting) }
      for change in commit.changes {
        guard let (key, revision) = change.entity else { continue }
        switch change {
        case .deleteTrip, .deleteVehicle: live[key] = nil
        default: live[key] = revision
        }
      }
      log.batches.withLock { log in
        log.append(
          ReplicatedBatch(
            sequence: UInt64(log.count + 1), origin: instanceTag, changes: commit.changes, progress: commit.progress))
      }
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

  func storedRevision(_ key: EntityKey) -> UInt64? { live.withLock { $0[key] } }

  // The rest of the store: empty at start, one instance.
  func loadTrips() async throws -> [Trip] { [] }
  func loadVehicles() async throws -> [Vehicle] { [] }
  func loadRides() async throws -> [Ride] { [] }
  func loadDeliveryVehicles() async throws -> [DeliveryVehicle] { [] }
  func loadTasks() async throws -> [DeliveryTask] { [] }
  func highestRevision() async throws -> UInt64 { 0 }
  func purgeTombstones(olderThan age: Duration, limit: Int) async throws -> Int { 0 }
  func signingKey(id: String) async throws -> SigningKey? { nil }
  func signingKeys() async throws -> [SigningKey] { [] }
  func saveSigningKey(_ key: SigningKey) async throws {}
  var dispatchLease: any Lease { self }
  var webhookLease: any Lease { self }
  var liveInstances: Int { 1 }
  func maintain(interval: Duration, keepChanges: Duration) async {}
  func whileLeading(probe: Duration, _ body: @escaping @Sendable () async -> Void) async { await body() }
}
