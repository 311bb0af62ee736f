import Foundation
import Synchronization

/// An entity as memory holds it, or its absence.
enum Entity: Sendable {
  case trip(Trip)
  case vehicle(Vehicle)
  case ride(Ride)
  case deliveryVehicle(DeliveryVehicle)
  case task(DeliveryTask)
  case absent(EntityKey)

  /// Its revision; 0 when absent (what a write that creates it expects).
  var revision: UInt64 {
    switch self {
    case .trip(let t): t.revision
    case .vehicle(let v): v.revision
    case .ride(let r): r.revision
    case .deliveryVehicle(let v): v.revision
    case .task(let t): t.revision
    case .absent: 0
    }
  }

  /// The entity a committed change leaves.
  init?(_ change: StoredChange) {
    switch change {
    case .putTrip(let t): self = .trip(t)
    case .putVehicle(let v): self = .vehicle(v)
    case .putRide(let r): self = .ride(r)
    case .putDeliveryVehicle(let v): self = .deliveryVehicle(v)
    case .putTask(let t): self = .task(t)
    case .deleteTrip(let provider, let id, _): self = .absent(EntityKey(.trip, provider: provider, id: id))
    case .deleteVehicle(let provider, let id, _): self = .absent(EntityKey(.vehicle, provider: provider, id: id))
    case .deleteRide(let provider, let id, _): self = .absent(EntityKey(.ride, provider: provider, id: id))
    case .deleteDeliveryVehicle(let provider, let id, _):
      self = .absent(EntityKey(.deliveryVehicle, provider: provider, id: id))
    case .deleteTask(let provider, let id, _): self = .absent(EntityKey(.task, provider: provider, id: id))
    case .putBillableTrip, .putEvent: return nil
    }
  }
}

/// How revisions are made unique: a single instance counts; instances sharing a store count in
/// the high bits and put their tag in the low ones (a Lamport clock that never ties).
public struct RevisionTag: Sendable, Hashable {
  static let bits: UInt64 = 16
  let instance: UInt64?

  public static let single = RevisionTag(instance: nil)

  /// `instance` is reduced to the tag's 16 bits (instance tags are handed out in sequence, so
  /// two live instances do not share one).
  public init(instance: UInt64?) { self.instance = instance.map { $0 & ((1 << Self.bits) - 1) } }

  /// The next revision after the highest one seen.
  public func next(after highest: UInt64) -> UInt64 {
    guard let instance else { return highest + 1 }
    return ((highest >> Self.bits) + 1) << Self.bits | instance
  }
}

extension Fleet {
  /// Reads the log up to now: for tests and for takeovers that must see every commit first.
  public func catchUpWithOtherInstances() async throws {
    try await follower?.catchUp(self)
  }

  /// Stops writes for good: memory can no longer be brought up to date with the store (the
  /// change log was pruned past this instance). Reads go on; a restart reloads.
  public func stopWrites(_ reason: String) {
    state.withLock { $0.storeFailure = reason }
  }

  /// Applies a committed batch from the log: its entities, unless memory already holds a newer
  /// revision; the progress stored with them; then the watchers of every trip it touched. A
  /// batch of this instance's own usually shows in memory already (or a later write built on it),
  /// and changes something only when its commit's answer was lost.
  public func apply(_ batch: ReplicatedBatch) {
    let own = batch.origin == instanceTag
    let applied = state.withLock { s -> [StoredChange] in
      var applied: [StoredChange] = []
      for change in batch.changes {
        guard let (key, revision) = change.entity, let entity = Entity(change) else { continue }
        s.revision = max(s.revision, revision)
        if var pending = s.uncommitted[key] {
          // A local write of this entity is in flight: if it fails, memory falls back to this
          // committed state.
          guard pending.committed.revision < revision else { continue }
          pending.committed = entity
          s.uncommitted[key] = pending
          // Another instance's commit means the local write was based on an older state and will
          // be refused, so memory shows the committed state now. This instance's own commit is
          // the write in flight, or one it was built on: memory keeps the newer one.
          if own && s.entity(key).revision >= revision { continue }
        } else if s.entity(key).revision >= revision {
          continue
        }
        s.install(entity)
        applied.append(change)
      }
      // This instance's own batch usually changes nothing: no progress to keep, no one to tell.
      if !applied.isEmpty { Self.keep(batch.progress, in: &s) }
      return applied
    }
    if !applied.isEmpty { announce(applied) }
  }
}
