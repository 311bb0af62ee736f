import Synchronization

/// Group commit: changes that arrive while a batch is being written go into the next batch, one
/// transaction for all of them. One waiting caller is promoted to write each batch, so there is
/// no background task and no caller waits behind more than one batch.
public final class GroupCommit<Item: Sendable>: Sendable {
  struct Entry {
    let items: [Item]
    let continuation: CheckedContinuation<Turn, Never>
  }

  enum Turn {
    /// This caller writes the queued batch.
    case lead
    case done(Result<Void, any Error>)
  }

  struct Queue {
    var waiting: [Entry] = []
    var writing = false
  }

  let queue = Mutex(Queue())
  let write: @Sendable ([Item]) async throws -> Void
  let failed: @Sendable (any Error, Int) -> Void

  /// `write` stores one batch in one transaction; `failed` is told a batch's error and size.
  public init(
    write: @escaping @Sendable ([Item]) async throws -> Void,
    failed: @escaping @Sendable (any Error, Int) -> Void = { _, _ in }
  ) {
    self.write = write
    self.failed = failed
  }

  /// Returns once `items` are written (in this caller's batch or another's).
  public func commit(_ items: [Item]) async throws {
    let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
      let lead = queue.withLock { q -> Bool in
        q.waiting.append(Entry(items: items, continuation: continuation))
        if q.writing { return false }
        q.writing = true
        return true
      }
      if lead { continuation.resume(returning: .lead) }
    }
    switch turn {
    case .done(let result): try result.get()
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
    let result: Result<Void, any Error>
    do {
      try await write(batch.flatMap(\.items))
      result = .success(())
    } catch {
      failed(error, batch.count)
      result = .failure(error)
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
    for entry in batch.dropFirst() { entry.continuation.resume(returning: .done(result)) }
    try result.get()
  }
}
