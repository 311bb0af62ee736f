import Foundation

/// Where a provider's events are sent (`fleetd webhooks add`), following the Standard Webhooks
/// specification.
public struct WebhookEndpoint: Sendable, Hashable {
  /// `ep_…`.
  public var id: String
  public var provider: String
  public var url: URL
  /// `whsec_` + base64 of the signing key (Standard Webhooks' form).
  public var secret: String
  /// The event types it receives; empty: every type.
  public var eventTypes: [FleetEventType]
  public var createTime: Date
  /// Set when the endpoint answered 410 Gone: nothing more is sent to it.
  public var disabledTime: Date?
  public var disabledReason: String?

  public init(
    id: String, provider: String, url: URL, secret: String, eventTypes: [FleetEventType], createTime: Date,
    disabledTime: Date? = nil, disabledReason: String? = nil
  ) {
    self.id = id
    self.provider = provider
    self.url = url
    self.secret = secret
    self.eventTypes = eventTypes
    self.createTime = createTime
    self.disabledTime = disabledTime
    self.disabledReason = disabledReason
  }

  /// A new endpoint with a fresh ID and a fresh 24-byte secret.
  public static func new(provider: String, url: URL, eventTypes: [FleetEventType], now: Date) -> WebhookEndpoint {
    var generator = SystemRandomNumberGenerator()
    let key = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let id = "ep_" + String(generator.next() as UInt64, radix: 36)
    return WebhookEndpoint(
      id: id, provider: provider, url: url, secret: "whsec_" + Data(key).base64EncodedString(),
      eventTypes: eventTypes, createTime: now)
  }
}

/// One event on its way to one endpoint.
public struct WebhookDelivery: Sendable, Hashable {
  public var endpoint: WebhookEndpoint
  public var event: FleetEvent
  /// Attempts made so far.
  public var attempts: Int

  public init(endpoint: WebhookEndpoint, event: FleetEvent, attempts: Int) {
    self.endpoint = endpoint
    self.event = event
    self.attempts = attempts
  }
}

/// What became of one delivery attempt.
public enum WebhookOutcome: Sendable, Hashable {
  /// A 2xx answer.
  case delivered(status: Int, at: Date)
  /// Anything else: tried again at `next`.
  case retry(next: Date, status: Int?, error: String)
  /// Out of retries (the retry window passed): given up.
  case failed(status: Int?, error: String, at: Date)
  /// 410 Gone: the endpoint is disabled, its pending deliveries given up.
  case gone(at: Date)
}

/// How many deliveries are in each state (metrics, `fleetd webhooks list`).
public struct WebhookCounts: Sendable, Hashable {
  public var pending = 0
  public var delivered = 0
  public var failed = 0

  public init(pending: Int = 0, delivered: Int = 0, failed: Int = 0) {
    self.pending = pending
    self.delivered = delivered
    self.failed = failed
  }
}

/// When a failed delivery is tried again: exponential backoff from `initial` up to `maximum`,
/// with jitter (a random half of each delay), until `window` after the event; then it fails.
public struct WebhookRetryPolicy: Sendable, Hashable {
  public var initial: Duration = .seconds(5)
  public var maximum: Duration = .seconds(3600)
  public var window: Duration = .seconds(24 * 3600)

  public init() {}

  /// The outcome of a failed attempt, `attempts` made so far (this one included).
  public func afterFailure(
    attempts: Int, eventTime: Date, now: Date, status: Int?, error: String, jitter: Double = .random(in: 0...1)
  ) -> WebhookOutcome {
    let doublings = min(max(attempts - 1, 0), 30)
    let base = min(initial.seconds * Double(1 << doublings), maximum.seconds)
    let next = now.addingTimeInterval(base * (0.5 + 0.5 * min(max(jitter, 0), 1)))
    guard next.timeIntervalSince(eventTime) <= window.seconds else {
      return .failed(status: status, error: error, at: now)
    }
    return .retry(next: next, status: status, error: error)
  }
}
