import Synchronization

/// Wakes many sleeping tasks from one timer. Ten thousand simulated drivers each sleeping on a
/// timer of their own kept one of the process's threads busy arming and firing timers (a tenth of
/// the simulator's CPU at 2,000 reports a second), and woke a thread per timer. Here a sleeper
/// waits in the slot of the tick at or after its time, and `run` resumes each tick's sleepers
/// together: never before their time, at most about `resolution` after it.
final class Ticker: Sendable {
  struct State {
    /// Sleepers by the tick that wakes them.
    var slots: [Int64: [UInt64]] = [:]
    var sleepers: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    /// Sleepers cancelled before they were registered.
    var cancelled: Set<UInt64> = []
    var nextID: UInt64 = 0
    /// Every tick up to this one has been woken.
    var woken: Int64 = 0
  }

  let resolution: Duration
  let origin = ContinuousClock.now
  let state = Mutex(State())

  init(resolution: Duration = .milliseconds(10)) {
    precondition(resolution > .zero)
    self.resolution = resolution
  }

  /// Returns at `deadline` or soon after; throws `CancellationError` when the task is cancelled.
  func sleep(until deadline: ContinuousClock.Instant) async throws {
    try Task.checkCancellation()
    // The first tick at or after the deadline.
    let slot = Int64(((deadline - origin) / resolution).rounded(.up))
    let id = state.withLock { s in
      s.nextID += 1
      return s.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let now: Result<Void, any Error>? = state.withLock { s in
          if s.cancelled.remove(id) != nil { return .failure(CancellationError()) }
          if slot <= s.woken { return .success(()) }
          s.sleepers[id] = continuation
          s.slots[slot, default: []].append(id)
          return nil
        }
        if let now { continuation.resume(with: now) }
      }
    } onCancel: {
      let sleeper = state.withLock { s in
        guard let sleeper = s.sleepers.removeValue(forKey: id) else {
          // Not registered yet (or woken already: then the mark is never read).
          s.cancelled.insert(id)
          return CheckedContinuation<Void, any Error>?.none
        }
        return sleeper
      }
      sleeper?.resume(throwing: CancellationError())
    }
  }

  /// Wakes the sleepers tick by tick until cancelled.
  func run() async throws {
    let clock = ContinuousClock()
    var next = clock.now
    while true {
      next += resolution
      try await clock.sleep(until: next)
      let current = Int64(((clock.now - origin) / resolution).rounded(.down))
      let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
        guard current > s.woken else { return [] }
        // Normally one tick has passed; after a stall, only the slots that hold sleepers.
        let ticks: [Int64] =
          current - s.woken <= 64
          ? Array((s.woken + 1)...current) : s.slots.keys.filter { $0 <= current }.sorted()
        s.woken = current
        var due: [CheckedContinuation<Void, any Error>] = []
        for tick in ticks {
          for id in s.slots.removeValue(forKey: tick) ?? [] {
            if let sleeper = s.sleepers.removeValue(forKey: id) { due.append(sleeper) }
          }
        }
        return due
      }
      for sleeper in due { sleeper.resume() }
      // Behind by more than a tick (a busy machine): carry on from now, not in a burst.
      if clock.now - next > resolution { next = clock.now }
    }
  }
}
