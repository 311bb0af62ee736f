import FleetCore
import FleetGeometry
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import SwiftProtobuf
import Testing

@testable import FleetServer

@Suite("Hostile input never crashes fleetd")
struct HostileInputTests {
  @Test func extremeTimestampsRoundTrip() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      try await server.withClients { _, vehicles in
        _ = try await vehicles.createVehicle(newVehicleRequest("car"), metadata: auth(token))
        var update = newLocationUpdate("car")
        update.vehicle.lastLocation.updateTime = Google_Protobuf_Timestamp(seconds: .max, nanos: .max)
        update.vehicle.lastLocation.rawLocationTime = Google_Protobuf_Timestamp(seconds: .min, nanos: -5)
        let updated = try await vehicles.updateVehicle(update, metadata: auth(token))
        #expect(updated.lastLocation.updateTime.seconds == 253_402_300_799)
        #expect(updated.lastLocation.rawLocationTime.seconds == -62_135_596_800)
      }
      let (status, _, _) = try await server.http(
        "POST", "/v1/providers/acme/trips:search", token: token, body: "{}", headers: ["X-Server-Timeout": "1e300"])
      #expect(status == 200)
    }
  }

  /// A client that sends its whole body before it reads, asking to close the connection after
  /// the answer (Python's urllib, most simple clients)
  /// gets the 413 at once when the body is a few times over the limit, and a closed connection
  /// at once when it is far over; it never waits on a connection nobody reads.
  @Test func anOversizedBodyIsAnsweredOrCutAtOnce() async throws {
    // Bodies larger than the sockets' buffers, so that a server that stops reading blocks the client.
    try await Fleetd.with(maximumRequestBytes: 1024 * 1024) { server in
      let port = server.httpPort
      let answer = try await onDedicatedThread(named: "oversized-body") {
        try Self.postWholeBody(port: port, bytes: 8 * 1024 * 1024)
      }
      #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
      #expect(answer.lowercased().contains("connection: close"), "\(answer)")
      let cut = try await onDedicatedThread(named: "far-oversized-body") {
        try Self.postWholeBody(port: port, bytes: 40 * 1024 * 1024)
      }
      // Closed before or after the 413: either way not a timeout.
      #expect(cut == "closed" || cut.hasPrefix("HTTP/1.1 413"), "\(cut)")
    }
  }

  /// Sends a POST with `bytes` of body in full, then reads: the response's head, "closed" when
  /// the server closed the connection, or "timed out" after 20 s (a server that stops reading
  /// never answers; a debug fleetd among the whole suite on two slow cores took over 5 s).
  static func postWholeBody(port: Int, bytes: Int) throws -> String {
    let connection = try RawConnection(port: port)
    let head =
      "POST /v1/providers/acme/trips?tripId=big HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
      + "Content-Type: application/json\r\nContent-Length: \(bytes)\r\n\r\n"
    let request = Array(head.utf8) + Array(repeating: UInt8(ascii: " "), count: bytes)
    if !connection.send(request) { return errno == EAGAIN ? "timed out" : "closed" }
    guard let answer = connection.receive(limit: 4096) else { return "timed out" }
    return answer.isEmpty ? "closed" : String(decoding: answer, as: UTF8.self)
  }

  @Test func nonFiniteNumbersAreRejectedAndNeverPoisonTheStore() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      try await server.withClients { _, vehicles in
        _ = try await vehicles.createVehicle(newVehicleRequest("car"), metadata: auth(token))
        var update = newLocationUpdate("car")
        for poison in [Double.nan, .infinity] {
          update.vehicle.lastLocation.altitude = .init(poison)
          #expect(
            await rpcCode { _ = try await vehicles.updateVehicle(update, metadata: auth(token)) } == .invalidArgument)
        }
        var attributes = Maps_Fleetengine_V1_UpdateVehicleAttributesRequest()
        attributes.name = "providers/acme/vehicles/car"
        var a = Maps_Fleetengine_V1_VehicleAttribute()
        a.key = "x"
        a.numberValue = .nan
        attributes.attributes = [a]
        #expect(
          await rpcCode { _ = try await vehicles.updateVehicleAttributes(attributes, metadata: auth(token)) }
            == .invalidArgument)
        // Writes still work afterwards.
        update.vehicle.lastLocation.altitude = .init(12.5)
        #expect(try await vehicles.updateVehicle(update, metadata: auth(token)).lastLocation.altitude.value == 12.5)
      }
    }
  }

  @Test func grpcTimeoutHeaderIsBounded() {
    #expect(GRPCTimeout.parse("100m") == .milliseconds(100))
    #expect(GRPCTimeout.parse("2S") == .seconds(2))
    #expect(GRPCTimeout.parse("999999999999H") == nil)
    #expect(GRPCTimeout.parse("H") == nil)
    #expect(GRPCTimeout.parse("-1S") == nil)
    #expect(GRPCTimeout.parse("12x") == nil)
    #expect(RESTFront.timeout(-3) == .zero)
    #expect(RESTFront.timeout(.infinity) == .zero)
    #expect(RESTFront.timeout(1e300) == .seconds(86_400))
  }
}
