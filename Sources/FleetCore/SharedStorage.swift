import Foundation

/// The kinds of entity a change writes.
public enum EntityKind: String, Sendable, Hashable, CaseIterable, Codable {
  case trip, vehicle, ride
}

/// One stored entity: its kind, provider and ID.
public struct EntityKey: Sendable, Hashable, Codable, CustomStringConvertible {
  public var kind: EntityKind
  public var provider: String
  public var id: String

  public init(_ kind: EntityKind, provider: String, id: String) {
    self.kind = kind
    self.provider = provider
    self.id = id
  }

  public var description: String { "providers/\(provider)/\(kind.rawValue)s/\(id)" }
}

extension StoredChange {
  /// The entity the change writes and the revision it writes it at; nil for billing reports.
  public var entity: (key: EntityKey, revision: UInt64)? {
    switch self {
    case .putTrip(let t): (EntityKey(.trip, provider: t.provider, id: t.id), t.revision)
    case .putVehicle(let v): (EntityKey(.vehicle, provider: v.provider, id: v.id), v.revision)
    case .putRide(let r): (EntityKey(.ride, provider: r.provider, id: r.id), r.revision)
    case .deleteTrip(let provider, let id, let revision): (EntityKey(.trip, provider: provider, id: id), revision)
    case .deleteVehicle(let provider, let id, let revision):
      (EntityKey(.vehicle, provider: provider, id: id), revision)
    case .putBillableTrip: nil
    }
  }
}

/// A vehicle's progress as computed after one of its changes: stored with the change, so that
/// every instance serves the progress the receiving instance computed.
public struct VehicleProgressRecord: Sendable, Hashable {
  public var provider: String
  public var vehicleID: String
  /// The vehicle revision it was computed for.
  public var revision: UInt64
  /// Nil when the vehicle has no progress (no position, or no progress engine).
  public var progress: VehicleRouteProgress?

  public init(provider: String, vehicleID: String, revision: UInt64, progress: VehicleRouteProgress?) {
    self.provider = provider
    self.vehicleID = vehicleID
    self.revision = revision
    self.progress = progress
  }
}

/// One write's changes, with what a shared store needs to check and share them.
public struct FleetCommit: Sendable {
  public var changes: [StoredChange]
  /// Each written entity's revision before the write (0: it did not exist). A shared store
  /// refuses the whole write when one of them is no longer the stored revision.
  public var expectedRevisions: [EntityKey: UInt64]
  /// The progress of the write's vehicles, computed before the commit.
  public var progress: [VehicleProgressRecord]

  public init(
    changes: [StoredChange], expectedRevisions: [EntityKey: UInt64] = [:], progress: [VehicleProgressRecord] = []
  ) {
    self.changes = changes
    self.expectedRevisions = expectedRevisions
    self.progress = progress
  }
}

/// A store that several fleetd instances share. Every write is checked against the stored
/// revisions (optimistic concurrency) and logged, in the same transaction, to a change log that
/// the other instances follow.
public protocol SharedFleetStorage: FleetStorage {
  /// This instance's tag, unique among the instances sharing the store; it keeps revisions
  /// written by different instances apart.
  var instanceTag: UInt64 { get }
  /// How this instance learns of the others' commits.
  var feed: any ChangeFeed { get }
  /// Which instance runs the dispatcher.
  var dispatchLease: any DispatchLease { get }
  /// The instances serving now (this one included), as last counted: shared limits such as
  /// quotas are divided by it.
  var liveInstances: Int { get }
  /// Keeps this instance counted and the change log pruned, until cancelled.
  func maintain(interval: Duration, keepChanges: Duration) async
}

/// A lease that one instance at a time holds.
public protocol DispatchLease: Sendable {
  /// Runs `body` whenever this instance holds the lease, until cancelled: `body` is cancelled
  /// when the lease is lost, and the lease is tried again every `probe`.
  func whileLeading(probe: Duration, _ body: @escaping @Sendable () async -> Void) async
}

/// A write refused because another instance changed one of its entities first. Nothing of the
/// write was stored.
public struct StorageConflict: Error, Sendable, CustomStringConvertible {
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
