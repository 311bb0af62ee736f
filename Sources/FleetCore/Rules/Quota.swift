/// Fleet Engine's quota buckets.
public enum QuotaBucket: String, Sendable, CaseIterable, Hashable {
  case create, read, update, search, list, billing
}

/// Requests per minute per provider for each bucket. Defaults are sized for one fleetd on one
/// machine; tune them with `fleetd serve --quota bucket=N`.
public struct QuotaConfiguration: Sendable, Hashable {
  public var perMinute: [QuotaBucket: Int]

  public init(perMinute: [QuotaBucket: Int] = QuotaConfiguration.defaultLimits) {
    self.perMinute = perMinute
  }

  public static let defaultLimits: [QuotaBucket: Int] = [
    .create: 60_000, .read: 1_200_000, .update: 3_000_000, .search: 60_000, .list: 60_000, .billing: 60_000,
  ]

  /// Parses `bucket=N`.
  public mutating func apply(_ setting: String) throws(FleetError) {
    let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2, let bucket = QuotaBucket(rawValue: parts[0]), let limit = Int(parts[1]), limit > 0 else {
      throw .invalid(
        "quota must be BUCKET=N with BUCKET one of \(QuotaBucket.allCases.map(\.rawValue).joined(separator: ", ")) and N > 0, got '\(setting)'"
      )
    }
    perMinute[bucket] = limit
  }
}

/// A token bucket per (provider, bucket): `limit` tokens a minute, refilled continuously, with a
/// burst of one minute's worth. Pure: the caller passes the time.
public struct QuotaLimiter: Sendable {
  struct Bucket {
    var tokens: Double
    var updated: Double
  }

  public let configuration: QuotaConfiguration
  var buckets: [String: [QuotaBucket: Bucket]] = [:]

  public init(configuration: QuotaConfiguration) { self.configuration = configuration }

  /// Takes one token at `now` (seconds on any monotonic clock), or throws RESOURCE_EXHAUSTED with
  /// the delay after which one will be available. With `share` instances serving one fleet, each
  /// allows its part of the provider's quota, so that together they allow it once.
  public mutating func acquire(provider: String, bucket: QuotaBucket, now: Double, share: Int = 1) throws(FleetError) {
    if let refusal = acquire(upTo: 1, provider: provider, bucket: bucket, now: now, share: share).refusal {
      throw refusal
    }
  }

  /// Takes up to `count` tokens, one per request of a batch (the streaming location channel):
  /// the first `granted` requests may go on, the rest are refused with `refusal`.
  public mutating func acquire(upTo count: Int, provider: String, bucket: QuotaBucket, now: Double, share: Int = 1)
    -> (granted: Int, refusal: FleetError?)
  {
    let configured = Double(configuration.perMinute[bucket] ?? Int.max)
    let limit = configured / Double(max(share, 1))
    let rate = limit / 60
    var state = buckets[provider]?[bucket] ?? Bucket(tokens: limit, updated: now)
    state.tokens = min(limit, state.tokens + max(0, now - state.updated) * rate)
    state.updated = now
    // Compared as doubles first: an unlimited bucket holds more tokens than an Int can.
    let granted = state.tokens >= Double(count) ? count : max(0, Int(state.tokens.rounded(.down)))
    state.tokens -= Double(granted)
    buckets[provider, default: [:]][bucket] = state
    guard granted < count else { return (granted, nil) }
    let wait = (1 - state.tokens) / rate
    let refusal = FleetError(
      .resourceExhausted,
      "quota '\(bucket.rawValue)' of \(Int(configured)) requests per minute for provider '\(provider)' is exhausted; retry in \(String(format: "%.3f", wait)) s",
      retryAfter: .milliseconds(Int64((wait * 1000).rounded(.up))))
    return (granted, refusal)
  }
}
