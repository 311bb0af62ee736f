/// How long to wait before the next retry: exponential in the failures so far, capped, with
/// "equal jitter" (half fixed, half random) so that many clients failing together do not all
/// come back at the same moment.
public struct RetryBackoff: Sendable, Hashable {
  /// The first retry waits about this long, each further one twice as long…
  public var initial: Duration
  /// …up to this.
  public var maximum: Duration

  public init(initial: Duration, maximum: Duration) {
    self.initial = initial
    self.maximum = max(initial, maximum)
  }

  /// The delay after `failures` consecutive failures (1 for the first); `jitter` in 0…1.
  public func delay(afterFailures failures: Int, jitter: Double) -> Duration {
    let doublings = min(max(failures - 1, 0), 30)
    let base = initial * Int(min(1 << doublings, Int(Int32.max)))
    let capped = min(base, maximum)
    return capped * (0.5 + 0.5 * min(max(jitter, 0), 1))
  }
}
