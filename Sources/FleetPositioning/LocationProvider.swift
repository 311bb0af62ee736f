import Foundation

/// A source of positions: GPS hardware, a location daemon, a recorded track, a simulation.
/// Each call to `fixes()` starts a new sequence from the source; the source stops when its
/// consumer stops iterating (or its task is cancelled). Fixes come in time order.
public protocol LocationProvider: Sendable {
  func fixes() -> AsyncThrowingStream<LocationFix, any Error>

  /// The newest fix the source still holds from before, without starting it (Core Location's
  /// `location`, a fix cached on disk); nil when it holds none.
  func lastKnownFix() async -> LocationFix?
}

extension LocationProvider {
  public func lastKnownFix() async -> LocationFix? { nil }
}

/// How providers wait and read the time; injected so that tests run without waiting.
public struct PositioningClock: Sendable {
  public var now: @Sendable () -> Date
  public var sleep: @Sendable (Duration) async throws -> Void

  public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
    self.now = now
    self.sleep = sleep
  }

  /// The wall clock, and `Task.sleep`.
  public static let system = PositioningClock(now: { Date() }, sleep: { try await Task.sleep(for: $0) })
}
