import FleetCore
import Logging
import ServiceLifecycle
import Synchronization

/// One of fleetd's services, with its stop watched: once a graceful shutdown has begun, it says
/// every few seconds that the service has not stopped yet, and for how long — so that a
/// shutdown that hangs names the part that holds it. Once cancelled (a graceful shutdown past its
/// grace, or another service failed), a service that has still not returned after `leaveAfter`
/// is left behind, logged as an error, so that fleetd exits all the same: an await inside a
/// library that never resumes must not keep the process running. Its acknowledged writes are
/// already committed; what it was doing is cut short as a crash would cut it.
struct StopWatch: Service {
  let service: any Service
  let name: String
  let logger: Logger
  var every: Duration = .seconds(3)
  var leaveAfter: Duration = .seconds(1)

  func run() async throws {
    let outcome = FirstOutcome<Ending>()
    // Unstructured on purpose: a task group would wait for a service that never returns.
    // It inherits the task locals, the graceful shutdown's among them.
    let running = Task {
      do {
        try await watched()
        outcome.settle(.returned(.success(())))
      } catch {
        outcome.settle(.returned(.failure(error)))
      }
    }
    let leaveAfter = leaveAfter
    let ended = await withTaskCancellationHandler {
      await outcome.value()
    } onCancel: {
      running.cancel()
      Task {
        try? await Task.sleep(for: leaveAfter)
        outcome.settle(.leftBehind)
      }
    }
    switch ended {
    case .returned(let result): try result.get()
    case .leftBehind:
      logger.error(
        "\(name) did not stop within \(leaveAfter) of being cancelled; left behind so that fleetd can exit",
        metadata: ["service": "\(name)"])
    }
  }

  private enum Ending: Sendable {
    case returned(Result<Void, any Error>)
    case leftBehind
  }

  /// The service, and beside it the warnings while it holds a graceful shutdown.
  private func watched() async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        try await service.run()
        return true
      }
      group.addTask {
        // Never throws: a watch that ends (cancelled with its service) is no failure of the service.
        guard (try? await gracefulShutdown()) != nil else { return false }
        let began = ContinuousClock.now
        while true {
          try? await Task.sleep(for: every)
          guard !Task.isCancelled else { return false }
          logger.warning(
            "\(name) has not stopped yet",
            metadata: ["service": "\(name)", "stopping.seconds": "\((ContinuousClock.now - began).seconds)"])
        }
      }
      while let finished = try await group.next() {
        if finished {
          group.cancelAll()
          return
        }
      }
    }
  }
}

/// The first of several outcomes, awaited by one waiter; the later ones are dropped.
private final class FirstOutcome<Value: Sendable>: Sendable {
  private enum State {
    case waiting(CheckedContinuation<Value, Never>?)
    case settled(Value)
  }

  private let state = Mutex<State>(.waiting(nil))

  func settle(_ value: Value) {
    let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
      guard case .waiting(let waiter) = state else { return nil }
      state = .settled(value)
      return waiter
    }
    waiter?.resume(returning: value)
  }

  /// Waits for the first outcome, cancelled or not: the caller decides what ends the wait.
  func value() async -> Value {
    await withCheckedContinuation { continuation in
      let settled = state.withLock { state -> Value? in
        switch state {
        case .settled(let value): return value
        case .waiting:
          state = .waiting(continuation)
          return nil
        }
      }
      if let settled { continuation.resume(returning: settled) }
    }
  }
}
