import Foundation
import Synchronization

extension Fleet {
  /// Applies a change under the lock, then waits until its stored changes are durable. On a
  /// shared store, a write that another instance overtook is run again on the fresh state, and
  /// answered ABORTED if that keeps happening.
  func write<T: Sendable>(_ body: (inout State, Date) throws(FleetError) -> (T, [StoredChange]))
    async throws(FleetError) -> T
  {
    try await write(starting: nil, body)
  }

  /// `write`, whose first attempt may already be staged (a stream's reports are staged in the
  /// order they arrive, and committed together).
  func write<T: Sendable>(
    starting staged: StagedWrite<T>?, _ body: (inout State, Date) throws(FleetError) -> (T, [StoredChange])
  ) async throws(FleetError) -> T {
    let attempts = 8
    var conflict: StoreConflict?
    for attempt in 0..<attempts {
      if attempt > 0 {
        // Instances that keep overtaking each other on one entity step apart, at random; then
        // the other instance's commit, which is in the log, is read before trying again.
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...(1 << attempt))))
        do { try await follower?.catchUp(self) } catch { throw Self.unavailable(error) }
      }
      let write: StagedWrite<T>
      if attempt == 0, let staged { write = staged } else { write = try stage(body) }
      if let refused = try await commit(write) {
        conflict = refused
        continue
      }
      return write.result
    }
    throw FleetError(
      .aborted,
      "the write was overtaken by other fleetd instances \(attempts) times (\(conflict.map(String.init(describing:)) ?? "")); retry it"
    )
  }

  /// A change applied in memory and not yet committed.
  struct StagedWrite<T: Sendable>: Sendable {
    let result: T
    let changes: [StoredChange]
    /// The revision each changed entity had before, which the store must still have.
    let expected: [EntityKey: UInt64]
  }

  /// The first half of a write: applies it under the lock, synchronously, so that writes staged
  /// one after another are applied in that order even when their commits overlap.
  func stage<T: Sendable>(_ body: (inout State, Date) throws(FleetError) -> (T, [StoredChange])) throws(FleetError)
    -> StagedWrite<T>
  {
    let now = now()
    return try state.withLock { (s: inout State) throws(FleetError) -> StagedWrite<T> in
      if let failure = s.storeFailure {
        throw FleetError(.unavailable, "store failed earlier (\(failure)); restart fleetd to recover")
      }
      s.touched = [:]
      defer {
        s.touched = nil
        s.pendingBefore.removeAll(keepingCapacity: true)
      }
      var (result, changes): (T, [StoredChange])
      do throws(FleetError) {
        (result, changes) = try body(&s, now)
      } catch {
        // A write checks before it changes, but one that throws halfway must change nothing.
        s.rollBack()
        throw error
      }
      if !changes.isEmpty {
        changes += settleRides(in: &s, now: now)
        changes += events(of: s.touched ?? [:], in: s, now: now).map(StoredChange.putEvent)
      }
      return StagedWrite(result: result, changes: changes, expected: (s.touched ?? [:]).mapValues(\.revision))
    }
  }

  /// The second half: commits a staged write and waits until it is durable. Returns the
  /// conflict when another instance overtook it (the write is then undone in memory).
  func commit<T: Sendable>(_ staged: StagedWrite<T>) async throws(FleetError) -> StoreConflict? {
    let changes = staged.changes
    guard !changes.isEmpty else { return nil }
    let progress = computeProgress(of: changes)
    do {
      try await store.commit(FleetCommit(changes: changes, expectedRevisions: staged.expected, progress: progress))
    } catch let refused as StoreConflict {
      state.withLock { $0.settle(changes, committed: false) }
      return refused
    } catch {
      state.withLock { s in
        s.settle(changes, committed: false)
        // An embedded store's memory is its only copy of a failed change's neighbours: stop.
        // A shared store recovers by itself, and the database is the truth.
        if follower == nil { s.storeFailure = String(describing: error) }
      }
      throw Self.unavailable(error)
    }
    state.withLock { $0.settle(changes, committed: true) }
    propagate(changes, progress: progress)
    eventObservers.notify(changes)
    return nil
  }

  static func unavailable(_ error: any Error) -> FleetError {
    FleetError(.unavailable, "the change could not be stored: \(error)")
  }
}
