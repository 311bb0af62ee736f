import Foundation

/// A store that several fleetd instances share. Every write is checked against the stored
/// revisions (optimistic concurrency) and logged, in the same transaction, to a change log that
/// the other instances follow.
public protocol SharedFleetStore: FleetStore {
  /// This instance's tag, unique among the instances sharing the store; it keeps revisions
  /// written by different instances apart.
  var instanceTag: UInt64 { get }
  /// How this instance learns of the others' commits: the store's change log, read from
  /// where it stood when the store was opened (before the fleet was loaded from it).
  var follower: any CommitFollower { get }
  /// Which instance runs the dispatcher.
  var dispatchLease: any Lease { get }
  /// Which instance delivers webhooks.
  var webhookLease: any Lease { get }
  /// The instances serving now (this one included), as last counted: shared limits such as
  /// quotas are divided by it.
  var liveInstances: Int { get }
  /// Keeps this instance counted and the change log pruned, until cancelled.
  func maintain(interval: Duration, keepChanges: Duration) async
}

/// Keeps an instance's memory up to date with the commits of the instances sharing its store
/// (in the store layer, with the change log it reads).
public protocol CommitFollower: Sendable {
  /// Applies to `fleet` every batch committed before this call, in commit order. Callers that
  /// arrive while a catch-up runs share the next one, so a crowd of them costs one read.
  func catchUp(_ fleet: Fleet) async throws
  /// Catches up whenever the log may have grown, and at least every `interval`, until
  /// cancelled. A log pruned past this instance stops its writes (it must restart to reload).
  func follow(_ fleet: Fleet, every interval: Duration) async
}

/// A lease that one instance at a time holds.
public protocol Lease: Sendable {
  /// Runs `body` whenever this instance holds the lease, until cancelled: `body` is cancelled
  /// when the lease is lost, and the lease is tried again every `probe`.
  func whileLeading(probe: Duration, _ body: @escaping @Sendable () async -> Void) async
}

/// A write refused because another instance changed one of its entities first. Nothing of the
/// write was stored.
public struct StoreConflict: Error, Sendable, CustomStringConvertible {
  public var entities: [EntityKey]

  public init(entities: [EntityKey]) { self.entities = entities }

  public var description: String {
    "changed concurrently elsewhere: \(entities.map(\.description).joined(separator: ", "))"
  }
}

/// One committed batch from the change log.
public struct ReplicatedBatch: Sendable {
  /// The batch's place in the log: commit order.
  public var sequence: UInt64
  /// The instance tag of the writer.
  public var origin: UInt64
  public var changes: [StoredChange]
  public var progress: [VehicleProgressRecord]

  public init(sequence: UInt64, origin: UInt64, changes: [StoredChange], progress: [VehicleProgressRecord]) {
    self.sequence = sequence
    self.origin = origin
    self.changes = changes
    self.progress = progress
  }
}

/// How committed changes reach the other instances. The store's change log is the truth; the
/// wake-ups only say when to read it, so a lost wake-up delays a change but never loses it.
public protocol ChangeFeed: Sendable {
  /// The newest logged batch now: where an instance that loads the tables starts following.
  func latestSequence() async throws -> UInt64
  /// Logged batches after `cursor`, in commit order, at most `limit`. Throws
  /// `ChangeFeedError.behind` when some of them were pruned from the log.
  func batches(after cursor: UInt64, limit: Int) async throws -> [ReplicatedBatch]
  /// Wakes when batches may have been logged, and after every reconnection: it is listening again
  /// before it wakes, so that a catch-up then misses nothing.
  func wakeUps() -> AsyncStream<Void>
}

public enum ChangeFeedError: Error, CustomStringConvertible {
  case behind(cursor: UInt64, prunedThrough: UInt64)

  public var description: String {
    switch self {
    case .behind(let cursor, let pruned):
      "this instance is at change \(cursor), but the log was pruned through \(pruned); restart it to reload the fleet"
    }
  }
}
