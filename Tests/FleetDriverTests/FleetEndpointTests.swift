import FleetClient
import FleetProto
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

/// `FleetEndpoint.withClient`, the client every SDK and `fleet` command runs its calls on.
@Suite struct FleetEndpointTests {
  /// A body may end without making a call (a command with nothing to send, a reporter stopped
  /// at once): its result comes back, and the client, stopped before it ever connected, is no
  /// error. grpc-swift's `withGRPCClient` throws `clientIsStopped` there when its connections'
  /// task had not yet started, which a caller cannot tell from a failure.
  @Test func aBodyThatMakesNoCallReturnsItsResult() async throws {
    // Nothing listens there: the client never needs to connect.
    let endpoint = FleetEndpoint(host: "127.0.0.1", port: 9)
    for round in 0..<20 {
      let result = try await endpoint.withClient { _ in round }
      #expect(result == round)
    }
  }

  /// A body that fails gets its own error back, not the client's.
  @Test func aBodyThatFailsThrowsItsError() async throws {
    struct Refused: Error {}
    let endpoint = FleetEndpoint(host: "127.0.0.1", port: 9)
    await #expect(throws: Refused.self) {
      try await endpoint.withClient { _ -> Int in throw Refused() }
    }
  }

  /// A call on a server that is there goes through, and the client shuts down after it.
  @Test func aCallGoesThroughAndTheClientStopsAfter() async throws {
    try await withGRPCServer(
      transport: HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
      services: [UnaryOnlyVehicles()]
    ) { server in
      let port = try #require(try await server.listeningAddress?.ipv4?.port)
      let vehicle = try await FleetEndpoint(host: "127.0.0.1", port: port).withClient { client in
        var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
        request.name = "providers/acme/vehicles/v1"
        return try await Maps_Fleetengine_V1_VehicleService.Client(wrapping: client).updateVehicle(request)
      }
      #expect(vehicle.name == "providers/acme/vehicles/v1")
      server.beginGracefulShutdown()
    }
  }
}
