import Synchronization
import Testing

@testable import FleetSimulator

/// The sleepers that woke before their time.
final class EarlyWakes: Sendable {
  let list = Mutex<[Int]>([])
}

@Suite("The drivers' ticker")
struct TickerTests {
  @Test func everySleeperWakesAndNeverBeforeItsTime() async throws {
    let ticker = Ticker(resolution: .milliseconds(5))
    let start = ContinuousClock.now
    let deadlines = (0..<200).map { start + .milliseconds(Int64($0 * 37 % 300)) }
    let early = EarlyWakes()
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await ticker.run() }
      try await withThrowingTaskGroup(of: Void.self) { sleepers in
        for (i, deadline) in deadlines.enumerated() {
          sleepers.addTask {
            try await ticker.sleep(until: deadline)
            if ContinuousClock.now < deadline { early.list.withLock { $0.append(i) } }
          }
        }
        try await sleepers.waitForAll()
      }
      // A time already past returns at once.
      try await ticker.sleep(until: start)
      group.cancelAll()
    }
    #expect(early.list.withLock { $0 }.isEmpty)
    #expect(ticker.state.withLock { $0.sleepers.isEmpty && $0.slots.isEmpty })
  }

  @Test func aCancelledSleeperReturnsAtOnceWithoutItsTick() async throws {
    let ticker = Ticker()
    // No `run`: only the cancellation can end the sleep.
    let sleeper = Task { try await ticker.sleep(until: .now + .seconds(3600)) }
    while ticker.state.withLock({ $0.sleepers.isEmpty }) { await Task.yield() }
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(ticker.state.withLock { $0.sleepers.isEmpty })
    // Cancelled before it sleeps: it never waits.
    let already = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await ticker.sleep(until: .now + .seconds(3600))
    }
    await #expect(throws: CancellationError.self) { try await already.value }
  }
}
