import FleetTestSupport
import Foundation
import Testing

/// `fleetd serve`'s dispatch flags out of their range: fleetd exits before serving, with one
/// line naming the flag and its rule.
@Suite struct ServeFlagTests {
  @Test(
    .timeLimit(.minutes(1)),
    arguments: [
      (["--dispatch-radius", "399"], "--dispatch-radius must be between 400 and 10000 metres, got 399"),
      (["--dispatch-radius", "10001"], "--dispatch-radius must be between 400 and 10000 metres, got 10001"),
      (
        ["--dispatch-radius-growth=-1"],
        "--dispatch-radius-growth must be between 0 and 10000 metres a minute, got -1"
      ),
      (
        ["--dispatch-radius-growth", "10001"],
        "--dispatch-radius-growth must be between 0 and 10000 metres a minute, got 10001"
      ),
      (["--dispatch-wait-weight", "11"], "--dispatch-wait-weight must be between 0 and 10, got 11.0"),
      (["--dispatch-interval", "0"], "--dispatch-interval must be above 0 and at most 3600 seconds, got 0.0"),
      (["--dispatch-timeout", "86401"], "--dispatch-timeout must be above 0 and at most 86400 seconds, got 86401.0"),
      (["--dispatch-policy", "fastest"], "--dispatch-policy must be batched or greedy, got 'fastest'"),
    ])
  func aDispatchFlagOutOfItsRangeIsRefusedNamingIt(flag: [String], rule: String) async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-flags-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let refused = try await ChildProcess.run(
      ChildProcess.built("fleetd"),
      ["serve", "--data-dir", directory, "--grpc-port", "0", "--http-port", "0", "--dispatch"] + flag)
    #expect(refused.status != 0)
    #expect(refused.errors.contains("Error: \(rule)"), "\(refused.errors)")
    #expect(!refused.errors.contains("fleetd listening"), "\(refused.errors)")
  }
}
