/// Where a ride's status comes from: fleetd over HTTP in an app (`FleetdRideStatusSource` in
/// FleetRideStatusClient), anything else in tests.
public protocol RideStatusSource: Sendable {
  /// The ride's status now. `RideStatusUpdater` calls it every interval, with a deadline.
  func status(rideIdentifier: String) async throws -> RideStatus

  /// Calls `onChange` with each status the source pushes as the ride changes, until the task is
  /// cancelled. It may return early (no push channel, the stream ended); the updater then relies
  /// on its interval.
  func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async
}

extension RideStatusSource {
  /// No push channel: statuses come from polling alone.
  public func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async {}
}

/// Receives a ride's live statuses, as SiriKit's `INRideStatusUpdateReceiver` does.
public protocol RideStatusReceiver: AnyObject, Sendable {
  /// A new valid status, or the last valid one again while the source is failing. Called on
  /// the updater's task, one call at a time; it should return quickly.
  func send(_ status: RideStatus)

  /// The updater stopped on its own: the ride ended, or the source failed too often. Not called
  /// after `stopSendingUpdates()`.
  func rideStatusUpdatesStopped(_ reason: RideStatusUpdatesStopReason)
}

extension RideStatusReceiver {
  public func rideStatusUpdatesStopped(_ reason: RideStatusUpdatesStopReason) {}
}

/// Why `RideStatusUpdater` stopped by itself.
public enum RideStatusUpdatesStopReason: Sendable, Hashable {
  /// The completed status was sent: nothing more will change.
  case rideEnded
  /// The source failed (error, deadline, invalid status) this many times in a row.
  case sourceFailing(consecutiveFailures: Int, lastError: String)
}

/// A `RideStatusUpdater` call that cannot be done.
public struct RideStatusUpdaterError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable, Hashable {
    /// `startSendingUpdates` while a ride's updates are being sent (SiriKit calls it once).
    case alreadySending
    /// An empty ride identifier.
    case invalidRideIdentifier
    /// `startSendingUpdates` after the updater's `run()` ended.
    case updaterEnded
    /// The source did not answer within the deadline.
    case deadlineExceeded
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code.rawValue): \(message)" }
}
