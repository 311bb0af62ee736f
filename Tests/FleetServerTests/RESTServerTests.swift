import CZlib
import FleetCore
import FleetStoreSQLite
import FleetTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("fleetd over REST")
struct RESTServerTests {
  @Test func sameOperationsOverHTTP() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      var (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/vehicles?vehicleId=car-1", token: token,
        body:
          #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
      )
      #expect(status == 200 && json["name"] as? String == "providers/acme/vehicles/car-1")
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips?tripId=trip-1", token: token,
        body:
          #"{"tripType":"EXCLUSIVE","pickupPoint":{"point":{"latitude":43.73,"longitude":7.42}},"vehicleId":"car-1"}"#)
      #expect(status == 200 && json["tripStatus"] as? String == "NEW")
      (status, json, _) = try await server.http(
        "PUT", "/v1/providers/acme/trips/trip-1?updateMask=tripStatus", token: token,
        body: #"{"tripStatus":"ENROUTE_TO_PICKUP"}"#)
      #expect(status == 200 && json["tripStatus"] as? String == "ENROUTE_TO_PICKUP")
      (status, json, _) = try await server.http(
        "GET", "/v1/providers/acme/trips/trip-1?view=JOURNEY_SHARING_V1S", token: token)
      #expect(status == 200 && json["view"] as? String == "JOURNEY_SHARING_V1S")
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips:search", token: token, body: #"{"vehicleId":"car-1"}"#)
      #expect((json["trips"] as? [Any])?.count == 1)
      (status, json, _) = try await server.http(
        "GET", "/v1/providers/acme/vehicles?vehicleTypeCategories=AUTO&vehicleTypeCategories=TAXI&minimumCapacity=2",
        token: token)
      #expect(status == 200 && (json["vehicles"] as? [Any])?.count == 1)
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/vehicles/car-1:updateAttributes", token: token,
        body: #"{"attributes":[{"key":"ev","boolValue":true}]}"#)
      #expect(status == 200 && (json["attributes"] as? [Any])?.count == 1)
      (status, _, _) = try await server.http(
        "POST", "/v1/providers/acme/billableTrips/trip-1:report", token: token, body: #"{"countryCode":"MC"}"#)
      #expect(status == 200)
      (status, json, _) = try await server.http("DELETE", "/v1/providers/acme/vehicles/car-1", token: token)
      #expect(status == 400 && (json["error"] as? [String: Any])?["status"] as? String == "FAILED_PRECONDITION")
    }
  }

  /// HTTP clients may compress what they post (Google's Java API client gzips request bodies
  /// unless told not to): gzip and deflate bodies are read, to the same limit once inflated.
  @Test func compressedBodiesAreRead() async throws {
    try await Fleetd.with(maximumRequestBytes: 4096) { server in
      let token = try server.admin.token()
      let vehicle =
        #"{"vehicleState":"ONLINE","supportedTripTypes":["EXCLUSIVE"],"maximumCapacity":4,"vehicleType":{"category":"AUTO"}}"#
      for (id, coding, bytes) in [
        ("gz", "gzip", Self.compressed(vehicle, gzip: true)), ("xgz", "X-GZIP", Self.compressed(vehicle, gzip: true)),
        ("zl", "deflate", Self.compressed(vehicle, gzip: false)),
      ] {
        let (status, json, _) = try await server.http(
          "POST", "/v1/providers/acme/vehicles?vehicleId=\(id)", token: token, bytes: bytes,
          headers: ["Content-Encoding": coding, "Content-Type": "application/json"])
        #expect(status == 200 && json["name"] as? String == "providers/acme/vehicles/\(id)", "\(coding): \(json)")
      }
      // FleetKit's batch of reports too.
      let reports =
        #"{"reports":[{"sequence":"1","name":"providers/acme/vehicles/gz","vehicle":{"lastLocation":{"location":{"latitude":43.7,"longitude":7.41}}}}]}"#
      let (reported, answer, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/vehicles:reportLocations", token: token,
        bytes: Self.compressed(reports, gzip: true), headers: ["Content-Encoding": "gzip"])
      #expect(reported == 200 && (answer["acknowledged"] as? [Any])?.count == 1, "\(answer)")
      // The batch's body is read as every other one: past the limit, 413.
      let (overLimit, _, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/vehicles:reportLocations", token: token,
        body: String(repeating: " ", count: 5000))
      #expect(overLimit == 413)

      func refusal(_ coding: String, _ bytes: Data) async throws -> (Int, String?, [AnyHashable: Any]) {
        let (status, json, headers) = try await server.http(
          "POST", "/v1/providers/acme/vehicles?vehicleId=no", token: token, bytes: bytes,
          headers: ["Content-Encoding": coding])
        return (status, (json["error"] as? [String: Any])?["message"] as? String, headers)
      }
      let (unsupported, message, headers) = try await refusal("br", Data(vehicle.utf8))
      #expect(unsupported == 415)
      #expect(message == "Content-Encoding 'br' is not supported: a request body may be gzip, deflate or identity")
      #expect(headers["Accept-Encoding"] as? String == "gzip, deflate")
      // A few hundred bytes that inflate past the limit.
      let (tooLong, tooLongMessage, _) = try await refusal(
        "gzip", Self.compressed(String(repeating: " ", count: 100_000), gzip: true))
      #expect(tooLong == 413 && tooLongMessage == "the request body inflates past the limit of 4096 bytes")
      let (corrupt, corruptMessage, _) = try await refusal("gzip", Data(vehicle.utf8))
      #expect(corrupt == 400 && corruptMessage?.hasPrefix("the request body is not valid gzip data") == true)
      let (_, missing, _) = try await server.http("GET", "/v1/providers/acme/vehicles/no", token: token)
      #expect((missing["error"] as? [String: Any])?["status"] as? String == "NOT_FOUND")
      // No body: nothing to inflate, whatever the header says.
      let (read, got, _) = try await server.http(
        "GET", "/v1/providers/acme/vehicles/gz", token: token, headers: ["Content-Encoding": "gzip"])
      #expect(read == 200 && got["name"] as? String == "providers/acme/vehicles/gz")
    }
  }

  /// `text` compressed as gzip (RFC 1952) or in zlib's format (HTTP's deflate).
  static func compressed(_ text: String, gzip: Bool) -> Data {
    var input = Array(text.utf8)
    var stream = z_stream()
    let level = Z_DEFAULT_COMPRESSION
    _ = deflateInit2_(
      &stream, level, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
      Int32(MemoryLayout<z_stream>.size))
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
    let produced = input.withUnsafeMutableBufferPointer { inputBytes in
      output.withUnsafeMutableBufferPointer { outputBytes in
        stream.next_in = inputBytes.baseAddress
        stream.avail_in = uInt(inputBytes.count)
        stream.next_out = outputBytes.baseAddress
        stream.avail_out = uInt(outputBytes.count)
        let status = deflate(&stream, Z_FINISH)
        #expect(status == Z_STREAM_END)
        return outputBytes.count - Int(stream.avail_out)
      }
    }
    return Data(output[..<produced])
  }

  @Test func errorsUseGooglesBodyAndStatus() async throws {
    try await Fleetd.with(quotas: QuotaConfiguration(perMinute: [.read: 1]), maximumRequestBytes: 1024) { server in
      let token = try server.admin.token()
      func error(_ json: [String: Any]) -> (Int?, String?, String?) {
        let e = json["error"] as? [String: Any]
        return (e?["code"] as? Int, e?["status"] as? String, e?["message"] as? String)
      }
      var (status, json, headers) = try await server.http("PUT", "/v1/providers/acme/trips/x", token: token, body: "{}")
      #expect(status == 400 && error(json).0 == 400 && error(json).1 == "INVALID_ARGUMENT")
      #expect(error(json).2 == "update_mask cannot be empty")
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips?tripId=a", token: token, body: #"{"tripType":"SIDEWAYS"}"#)
      #expect(status == 400 && error(json).2?.contains("Trip") == true)
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips?tripId=a", token: token,
        body: #"{"tripType":"EXCLUSIVE","pickupPoint":{"point":{"latitude":95,"longitude":0}}}"#)
      #expect(status == 400 && error(json).2?.contains("trip.pickup_point.point.latitude") == true)
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips?tripId=a/b", token: token,
        body: #"{"tripType":"EXCLUSIVE","pickupPoint":{"point":{"latitude":1,"longitude":1}}}"#)
      #expect(status == 400 && error(json).2?.contains("trip_id") == true)
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips?tripId=big", token: token,
        body: String(repeating: " ", count: 2048))
      #expect(status == 413)
      (status, json, _) = try await server.http("GET", "/v1/providers/acme/trips/none", token: nil)
      #expect(status == 401 && error(json).1 == "UNAUTHENTICATED")
      (status, json, _) = try await server.http("GET", "/v1/providers/acme/trips/none", token: token)
      #expect(status == 404 && error(json).1 == "NOT_FOUND")
      (status, json, headers) = try await server.http("GET", "/v1/providers/acme/trips/none", token: token)
      #expect(status == 429 && error(json).1 == "RESOURCE_EXHAUSTED")
      #expect(headers["Retry-After"] != nil || headers["retry-after"] != nil)
      (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/trips:search", token: token, body: "{}", headers: ["X-Server-Timeout": "0"])
      #expect(status == 504 && error(json).1 == "DEADLINE_EXCEEDED")
      (status, _, _) = try await server.http("GET", "/v1/elsewhere", token: token)
      #expect(status == 404)
      (status, _, _) = try await server.http("GET", "/healthz", token: nil)
      #expect(status == 200)
      let metrics = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.httpPort)/metrics")!)
        .0
      #expect(
        String(decoding: metrics, as: UTF8.self).contains(
          #"fleetd_requests_total{rpc="GetTrip",transport="rest",code="NOT_FOUND"}"#))
    }
  }

  @Test func acknowledgedWritesSurviveARestart() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      for i in 0..<20 {
        let (status, _, _) = try await server.http(
          "POST", "/v1/providers/acme/vehicles?vehicleId=v\(i)", token: token,
          body:
            #"{"vehicleState":"ONLINE","supportedTripTypes":["SHARED"],"maximumCapacity":2,"vehicleType":{"category":"TAXI"}}"#
        )
        #expect(status == 200)
      }
      // A second fleet opened on the same directory (as after a crash) sees every acknowledged write.
      let reopened = try await Fleet(store: try SQLiteStore(directory: server.dataDirectory))
      var query = Fleet.VehicleListing()
      query.categories = [.taxi]
      #expect(try reopened.listVehicles(caller: .admin(of: "acme"), provider: "acme", query: query).totalSize == 20)
    }
  }
}
