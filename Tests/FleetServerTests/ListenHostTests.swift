import FleetServer
import Testing

/// Where fleetd's own warm-up and `fleetd demo`'s clients connect for a server listening on a host.
@Suite struct ListenHostTests {
  @Test(arguments: [
    ("", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"), ("localhost", "127.0.0.1"), ("::", "::1"),
    ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("10.1.2.3", "10.1.2.3"), ("fleet.example", "fleet.example"),
  ])
  func aWildcardIsReachedOnTheLoopbackOfItsFamily(listening: String, connect: String) {
    #expect(ListenHost.loopback(listening) == connect)
  }
}
