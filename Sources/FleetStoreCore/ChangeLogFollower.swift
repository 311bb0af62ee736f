import FleetCore
import Synchronization

/// Follows a shared store's change log for one instance: the cursor, and catch-ups run one after
/// another so that batches are applied in commit order. Callers that arrive while one runs share
/// the next one: it starts after they arrived, so it reads everything committed before them,
/// and a crowd of callers costs one query.
public final class ChangeLogFollower: CommitFollower {
  struct Progress {
    var cursor: UInt64
    var running: Task<Void, any Error>?
    var queued: Task<Void, any Error>?
  }

  let feed: any ChangeFeed
  let progress: Mutex<Progress>

  /// Follows `feed` from `cursor`: the newest batch when the store was opened, before the fleet
  /// was loaded from its tables.
  public init(feed: any ChangeFeed, cursor: UInt64) {
    self.feed = feed
    self.progress = Mutex(Progress(cursor: cursor))
  }

  public func catchUp(_ fleet: Fleet) async throws {
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
      for batch in batches { fleet.apply(batch) }
      guard let last = batches.last else { return }
      progress.withLock { $0.cursor = max($0.cursor, last.sequence) }
      if batches.count < 256 { return }
    }
  }

  /// A catch-up at every wake-up of the feed and at least every `interval` (a lost wake-up only
  /// delays a change).
  public func follow(_ fleet: Fleet, every interval: Duration) async {
    await withTaskGroup(of: Void.self) { group in
      let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
      group.addTask {
        for await _ in self.feed.wakeUps() { tick.yield() }
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
          try await catchUp(fleet)
        } catch let error as ChangeFeedError {
          fleet.stopWrites(error.description)
        } catch {
          // Unreachable for now: the next wake-up or tick tries again.
        }
        if Task.isCancelled { break }
      }
      group.cancelAll()
    }
  }
}
