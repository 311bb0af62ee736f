import FleetClient

/// How trip models follow their trips; defaults as documented on each field.
public struct ConsumerConfiguration: Sendable {
  public enum Transport: Sendable, Hashable {
    /// fleetd's push stream (`fleetkit.v1.TripUpdates/WatchTrip`), polling GetTrip when the
    /// server does not offer it (UNIMPLEMENTED, as Fleet Engine itself answers).
    case automatic
    /// Only the push stream.
    case push
    /// Only GetTrip, every `pollingInterval`.
    case polling
  }

  public var transport = Transport.automatic
  /// Between two GetTrip calls when polling (Fleet Engine's clients poll every 5 s).
  public var pollingInterval: Duration = .seconds(5)
  /// A push stream is reopened after this long even when it looks healthy, so that a
  /// connection that died silently (no reset reached the phone) costs at most this much
  /// staleness.
  public var pushStreamLifetime: Duration = .seconds(60)
  /// Retries after failures: about `initial` first, doubling up to `maximum`, with jitter.
  public var retryBackoff = RetryBackoff(initial: .seconds(1), maximum: .seconds(30))
  /// Deadline of each GetTrip call.
  public var callTimeout: Duration = .seconds(10)

  public init() {}
}
