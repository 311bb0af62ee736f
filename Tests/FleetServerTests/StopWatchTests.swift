import FleetTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import FleetServer

/// fleetd's services with their stop watched: a shutdown that hangs names the part holding it.
@Suite("Stop watch")
struct StopWatchTests {
  /// Ignores graceful shutdown; stops only when cancelled.
  struct Stubborn: Service {
    func run() async throws {
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
    }
  }

  /// Stops as soon as a graceful shutdown begins.
  struct Prompt: Service {
    func run() async throws {
      try? await gracefulShutdown()
    }
  }

  /// Ignores cancellation too: an await that never resumes until the test lets it go, as a
  /// library's wait that lost its wake-up would.
  struct Deaf: Service {
    final class Held: Sendable {
      enum State {
        case holding(CheckedContinuation<Void, Never>?)
        case released
      }

      let state = Mutex(State.holding(nil))

      func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
          defer { state = .released }
          guard case .holding(let waiter) = state else { return nil }
          return waiter
        }
        waiter?.resume()
      }
    }

    let held: Held

    func run() async throws {
      await withCheckedContinuation { continuation in
        let released = held.state.withLock { state in
          guard case .holding = state else { return true }
          state = .holding(continuation)
          return false
        }
        if released { continuation.resume() }
      }
    }
  }

  @Test(.timeLimit(.minutes(1))) func aServiceThatIgnoresCancellationIsLeftBehindAndTheGroupReturns() async throws {
    let log = LogCapture()
    let logger = log.logger(level: .info)
    let held = Deaf.Held()
    var configuration = ServiceGroupConfiguration(
      services: [
        .init(service: StopWatch(service: Prompt(), name: "prompt", logger: logger, leaveAfter: .milliseconds(100))),
        .init(
          service: StopWatch(service: Deaf(held: held), name: "deaf", logger: logger, leaveAfter: .milliseconds(100))),
      ],
      logger: logger)
    // As fleetd's: a graceful shutdown past its grace is escalated to cancellation.
    configuration.maximumGracefulShutdownDuration = .milliseconds(200)
    let group = ServiceGroup(configuration: configuration)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      try await Task.sleep(for: .milliseconds(100))
      await group.triggerGracefulShutdown()
      // The group returns although the deaf service never does.
      try await tasks.next()
    }
    let errors = log.lines.filter { $0.level == .error }
    #expect(errors.map { $0.metadata["service"] } == ["deaf"])
    #expect(errors.first?.message.contains("left behind") == true)
    held.release()
  }

  @Test func aServiceThatDoesNotStopIsNamedUntilItIsCancelled() async throws {
    let log = LogCapture()
    let logger = log.logger(level: .info)
    let group = ServiceGroup(
      configuration: ServiceGroupConfiguration(
        services: [
          .init(service: StopWatch(service: Prompt(), name: "prompt", logger: logger, every: .milliseconds(50))),
          .init(service: StopWatch(service: Stubborn(), name: "stubborn", logger: logger, every: .milliseconds(50))),
        ],
        logger: logger))
    let warnings = { log.lines.filter { $0.level == .warning } }
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      try await Task.sleep(for: .milliseconds(100))
      await group.triggerGracefulShutdown()
      // Named again and again while it holds the shutdown (however slow the machine is today)…
      for _ in 0..<600 where warnings().count < 3 { try await Task.sleep(for: .milliseconds(50)) }
      // …and the watch ends with it when it is cancelled at last: the group returns.
      tasks.cancelAll()
      try await tasks.next()
    }
    let named = warnings().map { $0.metadata["service"] }
    // The stubborn one, a few times; the prompt one never.
    #expect(named.count >= 3)
    #expect(Set(named) == ["stubborn"])
  }
}
