import Foundation
import Synchronization

/// An entity as memory holds it, or its absence.
enum Entity: Sendable {
  case trip(Trip)
  case vehicle(Vehicle)
  case ride(Ride)
  case absent(EntityKey)

  /// Its revision; 0 when absent (what a write that creates it expects).
  var revision: UInt64 {
    switch self {
    case .trip(let t): t.revision
    case .vehicle(let v): v.revision
    case .ride(let r): r.revision
    case .absent: 0
    }
  }

  /// The entity a committed change leaves.
  init?(_ change: StoredChange) {
    switch change {
    case .putTrip(let t): self = .trip(t)
    case .putVehicle(let v): self = .vehicle(v)
    case .putRide(let r): self = .ride(r)
    case .deleteTrip(let provider, let id, _): self = .absent(EntityKey(.trip, provider: provider, id: id))
    case .deleteVehicle(let provider, let id, _): self = .absent(EntityKey(.vehicle, provider: provider, id: id))
    case .putBillableTrip: return nil
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

/// Following the other instances: the log cursor, and catch-ups run one after another so that
/// batches are applied in commit order. Callers that arrive while one runs share the next one:
/// it starts after they arrived, so it reads everything committed before them, and a crowd of
/// callers costs one query.
final class Replication: Sendable {
  struct Progress {
    var cursor: UInt64
    var running: Task<Void, any Error>?
    var queued: Task<Void, any Error>?
  }

  let feed: any ChangeFeed
  let origin: UInt64
  let progress: Mutex<Progress>

  init(feed: any ChangeFeed, origin: UInt64, cursor: UInt64) {
    self.feed = feed
    self.origin = origin
    self.progress = Mutex(Progress(cursor: cursor))
  }

  /// Applies every batch committed before this call.
  func catchUp(_ fleet: Fleet) async throws {
    let task = progress.withLock { p -> Task<Void, any Error> in
      if let queued = p.queued { return queued }
      let previous = p.running
      let task = Task {
        if let previous {
          _ = try? await previous.value
          progress.withLock { p in
            p.running = p.queued
            p.queued = nil
          }
        }
        try await self.readLog(into: fleet)
      }
      if previous == nil { p.running = task } else { p.queued = task }
      return task
    }
    try await task.value
  }

  func readLog(into fleet: Fleet) async throws {
    while true {
      let cursor = progress.withLock { $0.cursor }
      let batches = try await feed.batches(after: cursor, limit: 256)
      // This instance's own batches too: a commit whose answer was lost (the connection died
      // after COMMIT) was put back in memory, and only the log says that it was stored.
      for batch in batches { fleet.apply(batch, own: batch.origin == origin) }
      guard let last = batches.last else { return }
      progress.withLock { $0.cursor = max($0.cursor, last.sequence) }
      if batches.count < 256 { return }
    }
  }
}

extension Fleet {
  /// Follows the other instances until cancelled: a catch-up at every wake-up of the feed and
  /// at least every `interval` (a lost wake-up only delays a change). A log that was pruned past
  /// this instance's cursor stops its writes: it must restart to reload.
  public func followOtherInstances(every interval: Duration = .seconds(1)) async {
    guard let replication else { return }
    await withTaskGroup(of: Void.self) { group in
      let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
      group.addTask {
        for await _ in replication.feed.wakeUps() { tick.yield() }
        tick.finish()
      }
      group.addTask {
        while !Task.isCancelled {
          try? await Task.sleep(for: interval)
          tick.yield()
        }
        tick.finish()
      }
      for await _ in ticks {
        do {
          try await replication.catchUp(self)
        } catch let error as ChangeFeedError {
          state.withLock { $0.storageFailure = error.description }
        } catch {
          // Unreachable for now: the next wake-up or tick tries again.
        }
        if Task.isCancelled { break }
      }
      group.cancelAll()
    }
  }

  /// Reads the log up to now: for tests and for takeovers that must see every commit first.
  public func catchUpWithOtherInstances() async throws {
    try await replication?.catchUp(self)
  }

  /// Applies a committed batch from the log: its entities, unless memory already holds a newer
  /// revision; the progress stored with them; then the watchers of every trip it touched. `own`:
  /// the batch is this instance's, so memory usually shows it already (or a later write built
  /// on it) and only a commit whose answer was lost changes anything.
  func apply(_ batch: ReplicatedBatch, own: Bool) {
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
