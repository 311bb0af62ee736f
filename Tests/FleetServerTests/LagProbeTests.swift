import FleetTestSupport
import Foundation
import NIOPosix
import Testing

/// The lag probes at GET /metrics: a loop held by something shows as a late timer.
@Suite("Lag probes")
struct LagProbeTests {
  @Test(.timeLimit(.minutes(1)))
  func aHeldEventLoopShowsAsALateTimer() async throws {
    try await Fleetd.with(Fleetd.Options()) { server in
      let late = "fleetd_event_loop_lag_seconds"
      // The probes run: every loop's timer has fired, each within a quarter of a second.
      try await eventually("the probes recorded", timeout: .seconds(10)) {
        (try await server.metrics()["\(late)_count"] ?? 0) >= 4
      }
      let before = try await server.metrics()
      let slowBefore = (before["\(late)_count"] ?? 0) - (before["\(late)_bucket{le=\"0.25\"}"] ?? 0)
      // Something holds every loop for 0.4 s (as a long synchronous call on a loop would).
      for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
        loop.execute { Thread.sleep(forTimeInterval: 0.4) }
      }
      try await eventually("the held loops recorded", timeout: .seconds(10)) {
        let after = try await server.metrics()
        let slowAfter = (after["\(late)_count"] ?? 0) - (after["\(late)_bucket{le=\"0.25\"}"] ?? 0)
        return slowAfter >= slowBefore + 1
      }
      let after = try await server.metrics()
      #expect(after["fleetd_thread_pool_lag_seconds_count"] ?? 0 > 0)
      #expect(after["fleetd_task_lag_seconds_count"] ?? 0 > 0)
    }
  }
}
