import GRPCCore
import GRPCNIOTransportHTTP2

extension FleetEndpoint {
  /// Runs `body` with a gRPC client connected to fleetd, and shuts it down gracefully after.
  ///
  /// The client reconnects within seconds once fleetd is back, not after gRPC's default two
  /// minutes: an SDK's backlog or a rider's map should not wait longer than the outage.
  /// A body that makes no call returns its result: its client, stopped before it began running,
  /// is no error (grpc-swift's `withGRPCClient` throws `clientIsStopped` there).
  public func withClient<Result: Sendable>(
    _ body: (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Result
  ) async throws -> Result {
    let client = GRPCClient(
      transport: try HTTP2ClientTransport.Posix(
        target: .dns(host: host, port: port),
        transportSecurity: usesTLS ? .tls : .plaintext,
        config: .defaults {
          $0.backoff = .init(initial: .milliseconds(250), max: .seconds(10), multiplier: 1.6, jitter: 0.2)
        }))
    return try await withThrowingDiscardingTaskGroup { group in
      group.addTask {
        do {
          try await client.runConnections()
        } catch let error as RuntimeError where error.code == .clientIsStopped {
          // The body ended before the client ran: it made no call, and nothing was connected.
        }
      }
      defer { client.beginGracefulShutdown() }
      return try await body(client)
    }
  }
}
