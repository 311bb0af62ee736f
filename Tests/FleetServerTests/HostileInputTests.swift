import FleetProto
import Foundation
import GRPCCore
import SwiftProtobuf
import Testing

@testable import FleetServer

@Suite("Hostile input never crashes fleetd")
struct HostileInputTests {
  @Test func extremeTimestampsRoundTrip() async throws {
    try await TestServer.run { server in
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

  @Test func nonFiniteNumbersAreRejectedAndNeverPoisonTheStore() async throws {
    try await TestServer.run { server in
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
