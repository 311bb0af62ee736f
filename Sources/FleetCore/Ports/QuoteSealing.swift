/// The port that seals quote terms into a quote ID and opens them again, so that a quote needs
/// no storage and any instance can honour it (FleetAuth's `QuoteSealer`: an HMAC under a secret
/// kept in the store).
public protocol QuoteSealing: Sendable {
  func seal(_ terms: [UInt8]) -> String
  /// The sealed bytes; nil when the ID was not sealed with this secret or was altered.
  func open(_ id: String) -> [UInt8]?
}
