import GRPCCore
import GRPCNIOTransportHTTP2

extension FleetEndpoint {
  /// Runs `body` with a gRPC client connected to fleetd, and shuts it down gracefully after.
  ///
  /// The client reconnects within seconds once fleetd is back, not after gRPC's default two
  /// minutes: an SDK's backlog or a rider's map should not wait longer than the outage.
  public func withClient<Result: Sendable>(
    _ body: (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Result
  ) async throws -> Result {
    try await withGRPCClient(
      transport: .http2NIOPosix(
        target: .dns(host: host, port: port),
        transportSecurity: usesTLS ? .tls : .plaintext,
        config: .defaults {
          $0.backoff = .init(initial: .milliseconds(250), max: .seconds(10), multiplier: 1.6, jitter: 0.2)
        })
    ) { client in
      let result = try await body(client)
      client.beginGracefulShutdown()
      return result
    }
  }
}
