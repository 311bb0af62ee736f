import FleetCore
import FleetDispatch
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Quotes and priced bookings over REST and gRPC, with the tariffs and Monaco zones the
/// repository ships.
@Suite("Ride service over REST and gRPC")
struct RideServiceAPITests {
  let trip = """
    "pickupPoint":{"point":{"latitude":43.7384,"longitude":7.4246}},
    "dropoffPoint":{"point":{"latitude":43.7275,"longitude":7.4190}}
    """

  func options() throws -> Fleetd.Options {
    var options = Fleetd.Options()
    var dispatch = DispatchConfiguration()
    dispatch.interval = .seconds(3600)
    options.dispatch = dispatch
    options.fleet = try shippedRideService(for: "acme")
    return options
  }

  func error(_ json: [String: Any]) -> (status: String?, message: String) {
    let e = json["error"] as? [String: Any]
    return (e?["status"] as? String, e?["message"] as? String ?? "")
  }

  /// google.type.Money as JSON, in minor units (cents).
  func cents(_ money: Any?) -> Int? {
    guard let money = money as? [String: Any], money["currencyCode"] as? String == "EUR" else { return nil }
    let units = Int(money["units"] as? String ?? "0") ?? 0
    let nanos = money["nanos"] as? Int ?? 0
    return units * 100 + nanos / 10_000_000
  }

  @Test func quoteThenBookTheQuoteAtItsPrice() async throws {
    try await Fleetd.with(try options()) { server in
      let token = try server.admin.token()
      var (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides:quote", token: token, body: "{\(trip)}")
      #expect(status == 200)
      let quotes = try #require(json["quotes"] as? [[String: Any]])
      #expect(quotes.map { $0["product"] as? String } == ["standard", "shared", "taxi"])
      let standard = quotes[0]
      let breakdown = try #require(standard["fareBreakdown"] as? [[String: Any]])
      #expect(breakdown.compactMap { cents($0["amount"]) }.reduce(0, +) == cents(standard["fare"]))
      #expect(breakdown.contains { $0["kind"] as? String == "ZONE_FEE" }, "the drop-off is at the heliport")
      #expect(standard["pricing"] as? String == "UPFRONT" && quotes[2]["pricing"] as? String == "METERED")
      #expect((standard["tripDistanceMeters"] as? Int ?? 0) > 1000)
      #expect((standard["tripDuration"] as? String)?.hasSuffix("s") == true)
      #expect(standard["pickupEta"] == nil && (standard["pickupEtaUnavailableReason"] as? String)?.isEmpty == false)
      #expect(standard["surgeZone"] as? String == "Monte-Carlo" && standard["surgeMultiplier"] as? Double == 1)
      #expect(standard["expireTime"] is String)
      // The shared product states how long the ride may take with other riders' detours: the
      // drive times the dispatcher's bound (1.5 by default); a product that does not share, not.
      #expect(standard["maximumTripDuration"] == nil)
      let direct = try #require(Double((quotes[1]["tripDuration"] as? String ?? "").dropLast()))
      let longest = try #require(Double((quotes[1]["maximumTripDuration"] as? String ?? "").dropLast()))
      #expect(abs(longest - direct * 1.5) <= 1, "\(quotes[1])")

      let quoteID = try #require(standard["quoteId"] as? String)
      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r1", token: token,
        body: "{\(trip),\"quoteId\":\"\(quoteID)\"}")
      #expect(status == 200)
      #expect(json["product"] as? String == "standard" && json["pricing"] as? String == "UPFRONT")
      #expect(cents(json["fare"]) == cents(standard["fare"]))
      #expect((json["fareBreakdown"] as? [[String: Any]])?.count == breakdown.count)

      // The same quote for other points is refused, naming why.
      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r2", token: token,
        body: """
          {"pickupPoint":{"point":{"latitude":43.7384,"longitude":7.4246}},
           "dropoffPoint":{"point":{"latitude":43.7300,"longitude":7.4200}},"quoteId":"\(quoteID)"}
          """)
      #expect(status == 400 && error(json).status == "FAILED_PRECONDITION")
      #expect(error(json).message.contains("ride.dropoff_point differs from the quote"))
    }
  }

  @Test func quotesOverGRPCCarryMoneyAsGoogleTypeMoney() async throws {
    try await Fleetd.with(try options()) { server in
      let token = try server.admin.token()
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let rides = Fleetkit_V1_Rides.Client(wrapping: client)
        var request = Fleetkit_V1_QuoteRideRequest()
        request.parent = "providers/acme"
        request.pickupPoint.point = latLng(43.7384, 7.4246)
        request.dropoffPoint.point = latLng(43.7396, 7.4275)
        request.numberOfPassengers = 2
        let response = try await rides.quoteRide(request, metadata: auth(token))
        #expect(response.quotes.map(\.product) == ["standard", "taxi"], "shared seats one")
        let fare = response.quotes[0].fare
        #expect(fare.currencyCode == "EUR" && fare.units >= 7)
        #expect(fare.nanos % 10_000_000 == 0, "whole cents")
        let sum = response.quotes[0].fareBreakdown.reduce(Int64(0)) {
          $0 + $1.amount.units * 100 + Int64($1.amount.nanos / 10_000_000)
        }
        #expect(sum == fare.units * 100 + Int64(fare.nanos / 10_000_000))
      }
    }
  }

  /// ListAreas: the service area and zones in the file's order, fees in the provider's currency,
  /// surge where it is computed; read by the fleet page (viewer) and riders (consumer).
  @Test func areasListTheZonesWithTheirFeeAndSurge() async throws {
    try await Fleetd.with(try options()) { server in
      let viewer = try await server.signer(role: .viewer).token()
      let (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/areas", token: viewer)
      #expect(status == 200)
      let areas = try #require(json["areas"] as? [[String: Any]])
      #expect(
        areas.map { $0["name"] as? String } == [
          "Monaco and its neighbours", "Monte-Carlo", "Monaco-Ville", "Heliport", "Railway station",
        ])
      #expect(areas[0]["kind"] as? String == "SERVICE_AREA" && areas[1]["kind"] as? String == "ZONE")
      #expect(areas[1]["surge"] as? Bool == true && areas[1]["surgeMultiplier"] as? Double == 1)
      #expect((areas[1]["surgeReason"] as? String)?.isEmpty == false)
      #expect(cents(areas[3]["fee"]) == 300 && areas[3]["surge"] == nil)
      let ring = try #require(
        ((areas[3]["polygons"] as? [[String: Any]])?.first?["rings"] as? [[String: Any]])?.first?["points"]
          as? [[String: Any]])
      #expect(ring.count >= 4 && ring.allSatisfy { ($0["latitude"] as? Double ?? 0) > 43.7 })
      // Each surge zone's multiplier, demand and supply at GET /metrics.
      try await eventually("surge metrics per zone", timeout: .seconds(30)) {
        let (data, _) = try await URLSession.shared.data(from: server.httpURL.appendingPathComponent("metrics"))
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        return ["fleetd_surge_multiplier", "fleetd_surge_waiting_rides", "fleetd_surge_free_vehicles"].allSatisfy {
          name in
          lines.contains { $0.hasPrefix(name + "{") && $0.contains(#"zone="Monte-Carlo""#) }
        } && lines.contains { $0.hasPrefix("fleetd_surge_multiplier{") && $0.contains(#"zone="Monaco-Ville""#) }
      }
      // Another provider's token is refused; a driver may not list areas.
      let other = try await server.signer(role: .viewer, provider: "other").token()
      #expect(try await server.http("GET", "/fleetkit/v1/providers/acme/areas", token: other).0 == 403)
      let driver = try await server.signer(role: .driver).token(vehicleID: "v1")
      #expect(try await server.http("GET", "/fleetkit/v1/providers/acme/areas", token: driver).0 == 403)
    }
  }

  /// A rider reads the ride of its own trip (its agreed fare), and no other.
  @Test func aRiderReadsItsOwnRideAndNoOther() async throws {
    try await Fleetd.with(try options()) { server in
      let token = try server.admin.token()
      for id in ["mine", "theirs"] {
        let (status, _, _) = try await server.http(
          "POST", "/fleetkit/v1/providers/acme/rides?rideId=\(id)", token: token, body: "{\(trip)}")
        #expect(status == 200)
      }
      let rider = try await server.signer(role: .consumer).token(tripID: "mine")
      let (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/mine", token: rider)
      #expect(status == 200 && json["product"] as? String == "standard" && cents(json["fare"]) != nil)
      let (denied, body, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/theirs", token: rider)
      #expect(denied == 403 && error(body).message.contains("not 'theirs'"), "\(body)")
      #expect(try await server.http("GET", "/fleetkit/v1/providers/acme/rides", token: rider).0 == 403)
    }
  }

  /// `fleet ride --quotes` prints the quotes; `--quote` books one at its price; `--product`
  /// with `--at` books that product for later.
  @Test func fleetRidePrintsQuotesAndBooksAQuoteOrAProductForLater() async throws {
    try await Fleetd.with(try options()) { server in
      let directory = NSTemporaryDirectory() + "fleetkit-ride-\(UUID().uuidString)"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let key = directory + "/server.json"
      try await server.key(role: .server).encoded().write(to: URL(fileURLWithPath: key))
      let common = [
        "ride", "--grpc-port", "\(server.grpcPort)", "--provider", "acme", "--key", key, "--from", "43.7384,7.4246",
        "--to", "43.7275,7.4190",
      ]
      func json(_ outcome: ChildProcess.Outcome) throws -> [String: Any] {
        #expect(outcome.status == 0, "\(outcome.errors)")
        return try #require(try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any])
      }
      let quotes = try #require(
        try json(try await ChildProcess.runFleet(common + ["--quotes"]))["quotes"] as? [[String: Any]])
      #expect(quotes.map { $0["product"] as? String } == ["standard", "shared", "taxi"])
      let quoteID = try #require(quotes[0]["quoteId"] as? String)
      let booked = try json(try await ChildProcess.runFleet(common + ["--ride", "cli-1", "--quote", quoteID]))
      #expect(booked["product"] as? String == "standard" && booked["state"] as? String == "WAITING")
      #expect(cents(booked["fare"]) == cents(quotes[0]["fare"]))

      let later = try json(
        try await ChildProcess.runFleet(common + ["--ride", "cli-2", "--product", "taxi", "--at", "+90m"]))
      #expect(later["product"] as? String == "taxi" && later["state"] as? String == "SCHEDULED")
      let pickup = try #require((later["pickupTime"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
      #expect(abs(pickup.timeIntervalSinceNow - 90 * 60) < 120)

      let wrong = try await ChildProcess.runFleet(common + ["--at", "tomorrow"])
      #expect(wrong.status == 64 && wrong.errors.contains("--at: expected an ISO 8601 time"), "\(wrong.errors)")
    }
  }

  @Test func badQuotesAndBookingsNameTheFieldAndTheRule() async throws {
    try await Fleetd.with(try options()) { server in
      let token = try server.admin.token()
      let later = Date().addingTimeInterval(3600).formatted(.iso8601)
      let past = Date().addingTimeInterval(-3600).formatted(.iso8601)
      let cases: [(String, String, Int, String, String)] = [
        (
          "rides:quote", #"{"pickupPoint":{"point":{"latitude":43.7384,"longitude":7.4246}}}"#, 400,
          "INVALID_ARGUMENT", "dropoff_point is required"
        ),
        (
          "rides:quote",
          #"{"pickupPoint":{"point":{"latitude":43.70,"longitude":7.27}},"dropoffPoint":{"point":{"latitude":43.7384,"longitude":7.4246}}}"#,
          400, "FAILED_PRECONDITION", "pickup_point (43.7, 7.27) is outside every service area"
        ),
        ("rides:quote", "{\(trip),\"pickupTime\":\"\(past)\"}", 400, "INVALID_ARGUMENT", "pickup_time"),
        (
          "rides?rideId=x1", "{\(trip),\"product\":\"limousine\"}", 400, "INVALID_ARGUMENT",
          "'limousine' is not a product"
        ),
        (
          "rides?rideId=x2", "{\(trip),\"quoteId\":\"q1.forged\"}", 400, "FAILED_PRECONDITION",
          "not a quote this fleet issued"
        ),
        (
          "rides?rideId=x3", "{\(trip),\"pickupTime\":\"2099-01-01T00:00:00Z\"}", 400, "INVALID_ARGUMENT",
          "beyond the booking horizon"
        ),
      ]
      for (path, body, expected, code, words) in cases {
        let (status, json, _) = try await server.http(
          "POST", "/fleetkit/v1/providers/acme/\(path)", token: token, body: body)
        #expect(status == expected && error(json).status == code, "\(path) \(body)")
        #expect(error(json).message.contains(words), "\(error(json).message)")
      }
      // A ride for later is SCHEDULED and listed so.
      var (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=later", token: token,
        body: "{\(trip),\"pickupTime\":\"\(later)\"}")
      #expect(status == 200 && json["state"] as? String == "SCHEDULED" && json["pickupTime"] is String)
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides", token: token)
      #expect((json["rides"] as? [[String: Any]])?.first?["state"] as? String == "SCHEDULED")
    }
  }
}
