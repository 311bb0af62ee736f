import Synchronization

/// Group commit: commits that arrive while a batch is being written go into the next batch, one
/// transaction for all of them. One waiting caller is promoted to write each batch, so there is
/// no background task and no caller waits behind more than one batch.
///
/// `Item` is one caller's commit. The writer answers each item (a shared store may refuse one
/// item and write the others), or throws for the whole batch.
public final class GroupCommit<Item: Sendable>: Sendable {
  struct Entry {
    let item: Item
    let continuation: CheckedContinuation<Turn, Never>
  }

  enum Turn {
    /// This caller writes the queued batch.
    case lead
    case done((any Error)?)
  }

  struct Queue {
    var waiting: [Entry] = []
    var writing = false
  }

  let queue = Mutex(Queue())
  let write: @Sendable ([Item]) async throws -> [(any Error)?]
  let failed: @Sendable (any Error, Int) -> Void

  /// `write` stores one batch in one transaction and answers each item (nil: written);
  /// `failed` is told a batch's error and size.
  public init(
    answering write: @escaping @Sendable ([Item]) async throws -> [(any Error)?],
    failed: @escaping @Sendable (any Error, Int) -> Void = { _, _ in }
  ) {
    self.write = write
    self.failed = failed
  }

  /// A writer that stores every item of a batch or none.
  public convenience init(
    write: @escaping @Sendable ([Item]) async throws -> Void,
    failed: @escaping @Sendable (any Error, Int) -> Void = { _, _ in }
  ) {
    self.init(
      answering: { items in
        try await write(items)
        return Array(repeating: nil, count: items.count)
      }, failed: failed)
  }

  /// Returns once `item` is written (in this caller's batch or another's).
  public func commit(_ item: Item) async throws {
    let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
      let lead = queue.withLock { q -> Bool in
        q.waiting.append(Entry(item: item, continuation: continuation))
        if q.writing { return false }
        q.writing = true
        return true
      }
      if lead { continuation.resume(returning: .lead) }
    }
    switch turn {
    case .done(let error): if let error { throw error }
    case .lead: try await writeBatch()
    }
  }

  /// Writes everything queued in one transaction, hands the lead to the next waiter (if any), and
  /// tells the batch's callers the outcome.
  func writeBatch() async throws {
    let batch = queue.withLock { q -> [Entry] in
      defer { q.waiting = [] }
      return q.waiting
    }
    var outcomes: [(any Error)?]
    do {
      outcomes = try await write(batch.map(\.item))
      precondition(outcomes.count == batch.count, "a group-commit writer must answer every item")
    } catch {
      failed(error, batch.count)
      outcomes = Array(repeating: error, count: batch.count)
    }
    // A waiter that queued during the write leads the next batch; its own entry stays first in
    // the queue, so it writes itself along with the others.
    let nextLeader = queue.withLock { q -> Entry? in
      if let next = q.waiting.first { return next }
      q.writing = false
      return nil
    }
    nextLeader?.continuation.resume(returning: .lead)
    // The first entry is the leader itself (it queued before it led); it returns below.
    for (entry, outcome) in zip(batch, outcomes).dropFirst() { entry.continuation.resume(returning: .done(outcome)) }
    if let own = outcomes.first ?? nil { throw own }
  }
}
