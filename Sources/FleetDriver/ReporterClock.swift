import Synchronization

/// The reporter's sense of time: offsets from its start. Injected so that tests can step
/// through hours of reporting without waiting.
public protocol ReporterClock: Sendable {
  var now: Duration { get }
  func sleep(until deadline: Duration) async throws
}

/// Real time (`ContinuousClock`, which keeps counting while the device sleeps).
public struct SystemReporterClock: ReporterClock {
  let start = ContinuousClock.now

  public init() {}

  public var now: Duration { start.duration(to: .now) }

  public func sleep(until deadline: Duration) async throws {
    try await ContinuousClock().sleep(until: start.advanced(by: deadline), tolerance: .milliseconds(50))
  }
}

/// Wakes the reporter's loop when something changes. Holds at most one pending wake-up and
/// one waiter (the loop).
final class Wakeup: Sendable {
  struct State {
    var pending = false
    var waiter: CheckedContinuation<Void, Never>?
  }

  let state = Mutex(State())

  func signal() {
    let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
      if let waiter = s.waiter {
        s.waiter = nil
        return waiter
      }
      s.pending = true
      return nil
    }
    waiter?.resume()
  }

  /// Returns at the next signal (or at once if one is pending), or when the task is cancelled.
  func wait() async {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumeNow = state.withLock { s -> Bool in
          if s.pending || Task.isCancelled {
            s.pending = false
            return true
          }
          s.waiter = continuation
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
        defer { s.waiter = nil }
        return s.waiter
      }
      waiter?.resume()
    }
  }
}
