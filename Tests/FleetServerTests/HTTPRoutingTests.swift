import FleetCore
import FleetDispatch
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What fleetd's HTTP port answers beyond each call: FleetKit's own paths under `/fleetkit/v1`,
/// 405 with `Allow` for a wrong method, CORS for the configured origins only.
@Suite("HTTP routes")
struct HTTPRoutingTests {
  static func header(_ headers: [AnyHashable: Any], _ name: String) -> String? {
    headers.first { ($0.key as? String)?.lowercased() == name.lowercased() }?.value as? String
  }

  @Test func aWrongMethodOnAKnownPathIs405WithAllow() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      for (method, path, allowed) in [
        ("PATCH", "/v1/providers/acme/trips/t", ["GET", "PUT", "DELETE"]),
        ("GET", "/v1/providers/acme/trips", ["POST"]),
        ("DELETE", "/v1/providers/acme/vehicles", ["GET", "POST"]),
        ("GET", "/fleetkit/v1/providers/acme/vehicles:reportLocations", ["POST"]),
        ("PUT", "/fleetkit/v1/providers/acme/rides/r", ["GET", "DELETE"]),
        ("POST", "/fleetkit/v1/geo:reverse", ["GET"]),
        ("GET", "/fleetkit/v1/token", ["POST"]),
        ("POST", "/route/v1/driving/7.42,43.73;7.43,43.74", ["GET"]),
        ("POST", "/healthz", ["GET"]),
        ("DELETE", "/web/fleetkit/journey-sharing.js", ["GET"]),
      ] {
        let (status, json, headers) = try await server.http(method, path, token: token)
        #expect(status == 405, "\(method) \(path)")
        let allow = Self.header(headers, "Allow")?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for method in allowed { #expect(allow?.contains(method) == true, "\(path): \(allow ?? [])") }
        #expect(allow?.contains(method) == false)
        let error = json["error"] as? [String: Any]
        #expect(error?["code"] as? Int == 405)
        #expect((error?["message"] as? String)?.contains("\(method) is not allowed on \(path)") == true)
      }
      // HEAD is GET without a body, wherever GET is allowed.
      #expect(
        try await server.http("HEAD", "/v1/providers/acme/vehicles?vehicleTypeCategories=AUTO", token: token).0 == 200)
      #expect(try await server.http("HEAD", "/healthz", token: nil).0 == 200)
      // OPTIONS says what a path allows; a path that is none of fleetd's stays 404.
      let (status, _, headers) = try await server.http("OPTIONS", "/v1/providers/acme/trips/t", token: nil)
      #expect(status == 204)
      #expect(Self.header(headers, "Allow")?.contains("PUT") == true)
      #expect(try await server.http("PATCH", "/v1/providers/acme/elsewhere", token: token).0 == 404)
      #expect(try await server.http("GET", "/nowhere", token: token).0 == 404)
    }
  }

  /// FleetKit's own REST calls live under /fleetkit/v1; Fleet Engine's namespace holds only
  /// Fleet Engine's, so the old paths are gone.
  @Test func fleetKitsOwnCallsAreUnderFleetkitV1Only() async throws {
    try await Fleetd.with(dispatch: DispatchConfiguration()) { server in
      let token = try server.admin.token()
      try await server.withClients { trips, _ in
        _ = try await trips.createTrip(newTripRequest("t"), metadata: auth(token))
      }
      #expect(try await server.http("GET", "/fleetkit/v1/providers/acme/trips/t:rideStatus", token: token).0 == 200)
      #expect(try await server.http("GET", "/fleetkit/v1/providers/acme/rides", token: token).0 == 200)
      for old in [
        "/v1/providers/acme/trips/t:rideStatus", "/v1/providers/acme/trips/t:watch",
        "/v1/providers/acme/trips/t:watchRideStatus", "/dispatch/v1/providers/acme/rides",
        "/v1/providers/acme/rides", "/v1/geo:reverse?lat=1&lng=1", "/v1/places:search?q=x", "/v1/apiKey",
      ] {
        let (status, _, _) = try await server.http("GET", old, token: token)
        #expect(status == 404, "\(old) answered \(status)")
      }
      #expect(
        try await server.http("POST", "/v1/providers/acme/vehicles:reportLocations", token: token, body: "{}").0 == 404)
    }
  }

  @Test func corsHeadersGoToTheConfiguredOriginsOnly() async throws {
    let app = "https://app.example.com"
    try await Fleetd.with(corsOrigins: [app]) { server in
      let token = try server.admin.token()
      // A preflight from the app's origin learns the methods and headers it may use.
      var (status, _, headers) = try await server.http(
        "OPTIONS", "/v1/providers/acme/vehicles", token: nil,
        headers: [
          "Origin": app, "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization, content-type, x-secret",
        ])
      #expect(status == 204)
      #expect(Self.header(headers, "Access-Control-Allow-Origin") == app)
      #expect(Self.header(headers, "Access-Control-Allow-Methods")?.contains("POST") == true)
      #expect(Self.header(headers, "Access-Control-Allow-Headers") == "authorization, content-type")
      #expect(Self.header(headers, "Vary") == "Origin")
      // The answers to its calls carry the origin; errors too, so that the page can read them.
      for (path, expected) in [
        ("/v1/providers/acme/vehicles?vehicleTypeCategories=AUTO", 200), ("/v1/providers/acme/vehicles/none", 404),
        ("/web/fleetkit/journey-sharing.js", 200), ("/fleetkit/v1/providers/acme/trips/none:rideStatus", 404),
        ("/nearest/v1/driving/7.42,43.73", 400),
      ] {
        (status, _, headers) = try await server.http("GET", path, token: token, headers: ["Origin": app])
        #expect(status == expected, "\(path)")
        #expect(Self.header(headers, "Access-Control-Allow-Origin") == app, "\(path)")
        #expect(Self.header(headers, "Access-Control-Expose-Headers")?.contains("x-request-id") == true)
      }
      // Another origin, fleetd's own pages and its operations endpoints get no CORS headers.
      (status, _, headers) = try await server.http(
        "GET", "/v1/providers/acme/vehicles?vehicleTypeCategories=AUTO", token: token,
        headers: ["Origin": "https://evil.example.com"])
      #expect(status == 200 && Self.header(headers, "Access-Control-Allow-Origin") == nil)
      (status, _, headers) = try await server.http(
        "OPTIONS", "/v1/providers/acme/vehicles", token: nil,
        headers: ["Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"])
      #expect(Self.header(headers, "Access-Control-Allow-Origin") == nil)
      for path in ["/metrics", "/healthz", "/fleet"] {
        (_, _, headers) = try await server.http("GET", path, token: nil, headers: ["Origin": app])
        #expect(Self.header(headers, "Access-Control-Allow-Origin") == nil, "\(path)")
      }
    }
    // Without --cors-origin, nobody.
    try await Fleetd.with { server in
      let (_, _, headers) = try await server.http(
        "GET", "/v1/providers/acme/vehicles", token: try server.admin.token(), headers: ["Origin": app])
      #expect(Self.header(headers, "Access-Control-Allow-Origin") == nil)
    }
  }

  /// A stream's reports are logged as every call is: a line per refused report, one when the
  /// stream ends; and a REST batch logs as a call.
  @Test func reportsAreLoggedByTheGate() async throws {
    let log = LogCapture()
    var options = Fleetd.Options()
    options.logger = log.logger(level: .debug)
    try await Fleetd.with(options) { server in
      try await server.createVehicles(["car"])
      let token = try server.admin.token()
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let updates = Fleetkit_V1_VehicleUpdates.Client(wrapping: client)
        try await updates.reportLocations(
          metadata: auth(token),
          requestProducer: { writer in
            var message = Fleetkit_V1_ReportLocationsRequest()
            message.reports = [
              locationReport(1, "car", 43.7, 7.4), locationReport(2, "ghost", 43.7, 7.4),
              locationReport(3, "car", 95, 7.4),
            ]
            try await writer.write(message)
          },
          onResponse: { response in
            for try await message in response.messages where message.window == 0 {
              #expect(message.acknowledged.map(\.sequence) == [1])
              #expect(message.errors.map(\.sequence).sorted() == [2, 3])
              break
            }
          })
      }
      let (status, _, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/vehicles:reportLocations", token: token,
        body:
          #"{"reports":[{"sequence":"9","name":"providers/acme/vehicles/car","vehicle":{"lastLocation":{"location":{"latitude":43.7,"longitude":7.41}}}}]}"#
      )
      #expect(status == 200)
      try await eventually("the stream's line") { log.lines.contains { $0.message.hasPrefix("stream ended") } }
    }
    let reports = log.lines.filter { $0.metadata["rpc"] == "ReportLocations" }
    let refused = reports.filter { $0.level == .info }
    #expect(refused.map(\.message).contains { $0.hasPrefix("report 2: NOT_FOUND") })
    #expect(refused.map(\.message).contains { $0.hasPrefix("report 3: INVALID_ARGUMENT") })
    #expect(refused.count == 2)
    let ended = reports.filter { $0.message.hasPrefix("stream ended") }
    #expect(ended.map(\.message) == ["stream ended: 1 reports acknowledged, 2 refused"])
    #expect(ended.first?.metadata["provider"] == "acme")
    #expect(reports.contains { $0.message == "1 reports" && $0.metadata["request.id"] != nil })
  }
}
