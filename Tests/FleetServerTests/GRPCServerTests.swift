import FleetAuth
import FleetCore
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf
import SwiftProtobuf
import Testing

@Suite("fleetd over gRPC")
struct GRPCServerTests {
  @Test func tripAndVehicleLifecycle() async throws {
    try await Fleetd.with { server in
      let token = try server.admin.token()
      try await server.withClients { trips, vehicles in
        let vehicle = try await vehicles.createVehicle(newVehicleRequest("car-1"), metadata: auth(token))
        #expect(vehicle.name == "providers/acme/vehicles/car-1")
        let trip = try await trips.createTrip(newTripRequest("trip-1", vehicle: "car-1"), metadata: auth(token))
        #expect(trip.tripStatus == .new && trip.vehicleWaypoints.count == 2)

        let located = try await vehicles.updateVehicle(newLocationUpdate("car-1", 43.735, 7.421), metadata: auth(token))
        #expect(located.lastLocation.hasServerTime)

        var get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = "providers/acme/trips/trip-1"
        let read = try await trips.getTrip(get, metadata: auth(token))
        #expect(read.lastLocation.location.latitude == 43.735)
        #expect(read.vehicleWaypoints.isEmpty, "GetTrip never returns vehicle_waypoints")

        var progress = Maps_Fleetengine_V1_UpdateTripRequest()
        progress.name = "providers/acme/trips/trip-1"
        progress.updateMask.paths = ["trip_status"]
        for status: Maps_Fleetengine_V1_TripStatus in [
          .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff, .complete,
        ] {
          progress.trip.tripStatus = status
          #expect(try await trips.updateTrip(progress, metadata: auth(token)).tripStatus == status)
        }
        progress.trip.tripStatus = .enrouteToPickup
        #expect(
          await rpcCode { _ = try await trips.updateTrip(progress, metadata: auth(token)) } == .failedPrecondition)

        var search = Maps_Fleetengine_V1_SearchTripsRequest()
        search.parent = "providers/acme"
        search.vehicleID = "car-1"
        #expect(
          try await trips.searchTrips(search, metadata: auth(token)).trips.map(\.name) == [
            "providers/acme/trips/trip-1"
          ])
        search.activeTripsOnly = true
        #expect(try await trips.searchTrips(search, metadata: auth(token)).trips.isEmpty)

        var list = Maps_Fleetengine_V1_ListVehiclesRequest()
        list.parent = "providers/acme"
        list.vehicleTypeCategories = [.auto]
        let listed = try await vehicles.listVehicles(list, metadata: auth(token))
        #expect(listed.totalSize == 1 && listed.vehicles.first?.currentTrips.isEmpty == true)

        var attributes = Maps_Fleetengine_V1_UpdateVehicleAttributesRequest()
        attributes.name = "providers/acme/vehicles/car-1"
        var a = Maps_Fleetengine_V1_VehicleAttribute()
        a.key = "ev"
        a.boolValue = true
        attributes.attributes = [a]
        #expect(
          try await vehicles.updateVehicleAttributes(attributes, metadata: auth(token)).attributes.first?.boolValue
            == true)

        var billable = Maps_Fleetengine_V1_ReportBillableTripRequest()
        billable.name = "providers/acme/billableTrips/trip-1"
        billable.countryCode = "MC"
        _ = try await trips.reportBillableTrip(billable, metadata: auth(token))

        var deleteTrip = Maps_Fleetengine_V1_DeleteTripRequest()
        deleteTrip.name = "providers/acme/trips/trip-1"
        _ = try await trips.deleteTrip(deleteTrip, metadata: auth(token))
        var deleteVehicle = Maps_Fleetengine_V1_DeleteVehicleRequest()
        deleteVehicle.name = "providers/acme/vehicles/car-1"
        _ = try await vehicles.deleteVehicle(deleteVehicle, metadata: auth(token))
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(token)) } == .notFound)
      }
    }
  }

  @Test func statusCodes() async throws {
    try await Fleetd.with(quotas: QuotaConfiguration(perMinute: [.list: 2])) { server in
      let token = try server.admin.token()
      try await server.withClients { trips, vehicles in
        _ = try await vehicles.createVehicle(newVehicleRequest("car-1"), metadata: auth(token))
        #expect(
          await rpcCode { _ = try await vehicles.createVehicle(newVehicleRequest("car-1"), metadata: auth(token)) }
            == .alreadyExists)
        var bad = newVehicleRequest("car-2")
        bad.vehicle.maximumCapacity = 0
        #expect(await rpcCode { _ = try await vehicles.createVehicle(bad, metadata: auth(token)) } == .invalidArgument)
        var badEnum = newTripRequest("t")
        badEnum.trip.tripType = .UNRECOGNIZED(42)
        #expect(await rpcCode { _ = try await trips.createTrip(badEnum, metadata: auth(token)) } == .invalidArgument)
        _ = try await trips.createTrip(newTripRequest("t", vehicle: "car-1"), metadata: auth(token))
        var deleteVehicle = Maps_Fleetengine_V1_DeleteVehicleRequest()
        deleteVehicle.name = "providers/acme/vehicles/car-1"
        #expect(
          await rpcCode { _ = try await vehicles.deleteVehicle(deleteVehicle, metadata: auth(token)) }
            == .failedPrecondition)
        // An RPC fleetd does not serve at all.
        let unknown = try await withGRPCClient(
          transport: .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
        ) { client in
          await rpcCode {
            _ = try await client.unary(
              request: ClientRequest(message: Maps_Fleetengine_V1_GetVehicleRequest(), metadata: auth(token)),
              descriptor: MethodDescriptor(
                fullyQualifiedService: "maps.fleetengine.v1.VehicleService", method: "UpdateVehicleLocation"),
              serializer: ProtobufSerializer(), deserializer: ProtobufDeserializer<Maps_Fleetengine_V1_Vehicle>(),
              options: .defaults
            ) { try $0.message }
          }
        }
        #expect(unknown == .unimplemented)

        var list = Maps_Fleetengine_V1_ListVehiclesRequest()
        list.parent = "providers/acme"
        list.vehicleTypeCategories = [.auto]
        _ = try await vehicles.listVehicles(list, metadata: auth(token))
        _ = try await vehicles.listVehicles(list, metadata: auth(token))
        #expect(
          await rpcCode { _ = try await vehicles.listVehicles(list, metadata: auth(token)) } == .resourceExhausted)

        // Authentication and authorization.
        var get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = "providers/acme/trips/t"
        #expect(await rpcCode { _ = try await trips.getTrip(get) } == .unauthenticated)
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth("not.a.jwt")) } == .unauthenticated)
        let expired = try server.admin.token(lifetime: 60, now: Date().addingTimeInterval(-3600))
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(expired)) } == .unauthenticated)
        let parts = token.split(separator: ".")
        let none = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.\(parts[1])."
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(none)) } == .unauthenticated)
        let forged = "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(forged)) } == .unauthenticated)

        let consumer = try await server.signer(role: .consumer)
        #expect(try await trips.getTrip(get, metadata: auth(consumer.token(tripID: "t"))).view == .journeySharingV1S)
        #expect(
          await rpcCode { _ = try await trips.getTrip(get, metadata: auth(consumer.token(tripID: "u"))) }
            == .permissionDenied)
        let other = try await server.signer(role: .admin, provider: "other")
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(other.token())) } == .permissionDenied)
        let viewer = try await server.signer(role: .viewer)
        #expect(
          await rpcCode { _ = try await trips.createTrip(newTripRequest("v"), metadata: auth(viewer.token())) }
            == .permissionDenied)

        // A revoked key stops working once the key cache expires (5 s).
        let revocable = try await server.signer(role: .admin)
        let revocableToken = try revocable.token()
        _ = try await trips.getTrip(get, metadata: auth(revocableToken))
        let keys = try await KeyRing(store: (try server.daemon).store).list()
        try await KeyRing(store: (try server.daemon).store).revoke(keyID: keys.last!.keyID)
        try await Task.sleep(for: .seconds(6))
        #expect(await rpcCode { _ = try await trips.getTrip(get, metadata: auth(revocableToken)) } == .unauthenticated)
      }
    }
  }
}
