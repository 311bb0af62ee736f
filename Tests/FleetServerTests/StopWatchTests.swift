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
