/// Where fleetd listens.
public struct FleetEndpoint: Sendable, Hashable {
  public var host: String
  public var port: Int
  /// TLS with the system's trust roots; plaintext for loopback and private networks.
  public var usesTLS: Bool

  public init(host: String, port: Int, usesTLS: Bool = false) {
    self.host = host
    self.port = port
    self.usesTLS = usesTLS
  }

  /// `HOST:PORT`.
  public init?(_ text: String, usesTLS: Bool = false) {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
      (1...65535).contains(port)
    else { return nil }
    self.init(host: String(text[..<colon]), port: port, usesTLS: usesTLS)
  }
}
