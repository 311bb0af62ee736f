import FleetCore
import FleetGeocoding
import FleetGeometry
import FleetPlaces
import FleetTestSupport
import Foundation
import GRPCCore
import Testing

@testable import FleetLocation

let addressJSON =
  #"{"city":"Monaco","coordinate":{"latitude":43.7329,"longitude":7.4258},"countryCode":"MC","distance":8.7,"houseNumber":"6","street":"Quai Antoine 1er"}"#

/// Records the backoff waits instead of waiting.
final class Waits: Sendable {
  let recorded = Counter()
  var sleep: @Sendable (Duration) async throws -> Void { { [recorded] _ in _ = recorded.increment() } }
}

@Suite struct GeoServiceClientRetryTests {
  let monaco = LatLng(latitude: 43.733, longitude: 7.4258)

  @Test func networkFailuresAreRetriedWithBackoffUntilAnAnswer() async throws {
    let server = try await FakeGeoServer { $0 <= 2 ? .drop : .answer(status: 200, headers: [:], body: addressJSON) }
    defer { Task { try? await server.close() } }
    let waits = Waits()
    let client = GeoServiceClient(baseURL: server.url, apiKey: "fk_x", sleep: waits.sleep)
    let address = try await client.reverseGeocode(monaco)
    #expect(address.street == "Quai Antoine 1er")
    #expect(server.connections.count == 3)
    #expect(waits.recorded.count == 2)
  }

  @Test func anUnreachableServerIsReportedAfterTheLastTry() async throws {
    let server = try await FakeGeoServer { _ in .drop }
    try await server.close()
    let waits = Waits()
    let client = GeoServiceClient(
      baseURL: server.url, apiKey: "fk_x", configuration: .init(maximumAttempts: 3), sleep: waits.sleep)
    let error = await #expect(throws: FleetClientError.self) { try await client.reverseGeocode(monaco) }
    #expect(error?.code == .unavailable)
    #expect(error?.message.contains("after 3 tries") == true)
    #expect(waits.recorded.count == 2)
  }

  @Test(arguments: [
    (401, "UNAUTHENTICATED", RPCError.Code.unauthenticated, "the API key is not valid (unknown or revoked)"),
    (429, "RESOURCE_EXHAUSTED", .resourceExhausted, "API key 'abc' has used its 3 requests per minute; retry in 20.0 s"),
    (400, "INVALID_ARGUMENT", .invalidArgument, "lat must be a number, got 'x'"),
    (400, "FAILED_PRECONDITION", .failedPrecondition, "geocoding data is not loaded"),
    (403, "", .permissionDenied, "forbidden by a proxy"),
    (500, "INTERNAL", .internalError, "boom"),
  ])
  func answersAreNeverRetried(status: Int, name: String, code: RPCError.Code, message: String) async throws {
    let statusField = name.isEmpty ? "" : #","status":"\#(name)""#
    let body = #"{"error":{"code":\#(status),"message":"\#(message)"\#(statusField)}}"#
    let server = try await FakeGeoServer { _ in .answer(status: status, headers: ["Retry-After": "20"], body: body) }
    defer { Task { try? await server.close() } }
    let waits = Waits()
    let client = GeoServiceClient(baseURL: server.url, apiKey: "fk_x", sleep: waits.sleep)
    let error = await #expect(throws: FleetClientError.self) { try await client.reverseGeocode(monaco) }
    #expect(error?.code == code)
    #expect(error?.message == message)
    #expect(error?.httpStatus == status)
    #expect(error?.retryAfter == .seconds(20))
    #expect(server.connections.count == 1)
    #expect(waits.recorded.count == 0)
  }
}

/// The client against a real fleetd with the Monaco data and real API keys.
@Suite(.serialized) struct GeoEndpointTests {
  func withGeoFleetd(_ body: (Fleetd) async throws -> Void) async throws {
    let fleetd = Fleetd(geocoding: try await monacoGeocoding())
    try await fleetd.start()
    do {
      try await body(fleetd)
    } catch {
      try? await fleetd.stop()
      throw error
    }
    try await fleetd.stop()
  }

  @Test func reverseAndSearchWithAKeyAndTheKeysRules() async throws {
    try await withGeoFleetd { fleetd in
      let key = try await fleetd.apiKey(app: "rider", perMinute: 4)
      let client = GeoServiceClient(baseURL: fleetd.httpURL, apiKey: key)
      let registered = try await client.register()
      #expect(registered.app == "rider")
      #expect(registered.perMinute == 4)
      #expect(key.hasPrefix("fk_\(registered.id)_"))
      let address = try await client.reverseGeocode(LatLng(latitude: 43.7330, longitude: 7.4258))
      #expect(address.houseNumber == "6")
      #expect(address.street == "Quai Antoine 1er")
      #expect(address.city == "Monaco")

      let page = try await client.searchPlaces(
        PlaceSearch(keyword: "pharmacy", near: LatLng(latitude: 43.7345, longitude: 7.4230), pageSize: 3))
      #expect(page.city == "Monaco")
      #expect(page.places.count == 3)
      #expect(page.places.allSatisfy { $0.category == "amenity=pharmacy" })
      #expect(page.nextPageToken == "3")

      let bad = await #expect(throws: FleetClientError.self) {
        try await client.reverseGeocode(LatLng(latitude: 95, longitude: 7))
      }
      #expect(bad?.code == .invalidArgument)
      #expect(bad?.message.contains("latitude in -90…90") == true)

      // The fifth request this minute is over the quota of 4 (registering and the refused one
      // counted too).
      let over = await #expect(throws: FleetClientError.self) {
        try await client.reverseGeocode(LatLng(latitude: 43.7330, longitude: 7.4258))
      }
      #expect(over?.code == .resourceExhausted)
      #expect(over?.httpStatus == 429)
      #expect((over?.retryAfter ?? .zero) > .zero)

      let stranger = GeoServiceClient(baseURL: fleetd.httpURL, apiKey: "fk_000000000000_made-up")
      let refused = await #expect(throws: FleetClientError.self) { try await stranger.register() }
      #expect(refused?.code == .unauthenticated)
      #expect(refused?.httpStatus == 401)
    }
  }

  @Test func withoutGeocodingDataFleetdSaysWhichFlagsAreMissing() async throws {
    try await Fleetd.with { fleetd in
      let client = GeoServiceClient(baseURL: fleetd.httpURL, apiKey: try await fleetd.apiKey())
      _ = try await client.register()
      let error = await #expect(throws: FleetClientError.self) {
        try await client.reverseGeocode(LatLng(latitude: 43.7330, longitude: 7.4258))
      }
      #expect(error?.code == .failedPrecondition)
      #expect(error?.message.contains("--geo-osm FILE and/or --geonames FILE") == true)
    }
  }

  @Test func aRevokedKeyIsRefusedWithinSeconds() async throws {
    try await withGeoFleetd { fleetd in
      let key = try await fleetd.apiKey()
      let client = GeoServiceClient(baseURL: fleetd.httpURL, apiKey: key)
      _ = try await client.reverseGeocode(LatLng(latitude: 43.7330, longitude: 7.4258))
      try await fleetd.revokeAPIKey(key)
      // fleetd trusts a looked-up key for 5 s; ask every half second, well within the quota.
      let deadline = ContinuousClock.now + .seconds(30)
      var refused: FleetClientError?
      while refused == nil, ContinuousClock.now < deadline {
        do {
          _ = try await client.reverseGeocode(LatLng(latitude: 43.7330, longitude: 7.4258))
          try await Task.sleep(for: .milliseconds(500))
        } catch let error as FleetClientError {
          refused = error
        }
      }
      #expect(refused?.code == .unauthenticated)
    }
  }

  @Test func theLocationServiceLooksUpItsAddressThroughFleetd() async throws {
    try await withGeoFleetd { fleetd in
      let client = GeoServiceClient(baseURL: fleetd.httpURL, apiKey: try await fleetd.apiKey())
      let service = LocationService(
        provider: ManualProvider(cached: fix(43.7396, 7.4270, at: 0)), geocoder: client,
        configuration: .init(addressRefreshInterval: .milliseconds(50)))
      let running = Task { try await service.run() }
      defer { running.cancel() }
      try await eventually("the address") { service.currentAddress?.place == "Monte-Carlo" }
      #expect(service.currentAddress?.countryCode == "MC")
    }
  }
}
