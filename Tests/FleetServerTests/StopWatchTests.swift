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
    var configuration = ServiceGroupConfiguration(
      services: [
        .init(service: StopWatch(service: Prompt(), name: "prompt", logger: logger, every: .milliseconds(100))),
        .init(service: StopWatch(service: Stubborn(), name: "stubborn", logger: logger, every: .milliseconds(100))),
      ],
      logger: logger)
    configuration.maximumGracefulShutdownDuration = .milliseconds(700)
    let group = ServiceGroup(configuration: configuration)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      try await Task.sleep(for: .milliseconds(100))
      await group.triggerGracefulShutdown()
      try await tasks.next()
    }
    let named = log.lines.filter { $0.level == .warning }.map { $0.metadata["service"] }
    // The stubborn one, a few times before the group cancelled it; the prompt one never.
    #expect(named.count >= 3)
    #expect(Set(named) == ["stubborn"])
  }
}
