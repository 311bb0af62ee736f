import BenchSupport
import FleetGeometry
import FleetProto
import FleetRouting
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import SwiftProtobuf

/// For each position, one about 40 m towards another road point, snapped back onto a road: where
/// a reporting vehicle moves to and back.
func nudged(_ positions: [LatLng], routing: RoutingEngine, random: inout Seeded) -> [LatLng] {
  roadPoints(routing, count: positions.count, random: &random).enumerated().map { i, far in
    let start = positions[i]
    let f = min(1, 40 / max(1, start.distance(to: far)))
    let toward = LatLng(
      latitude: start.latitude + (far.latitude - start.latitude) * f,
      longitude: start.longitude + (far.longitude - start.longitude) * f)
    return (try? routing.nearest(toward).first?.location) ?? start
  }
}

/// Online AUTO vehicles v0 … v(n-1) of the provider 'bench' at the positions, 64 calls at a time.
func createOnlineVehicles(
  _ positions: [LatLng], service: Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>,
  metadata: Metadata
) async throws {
  try await withThrowingTaskGroup(of: Void.self) { creating in
    for (i, position) in positions.enumerated() {
      if i >= 64 { try await creating.next() }
      creating.addTask {
        var request = Maps_Fleetengine_V1_CreateVehicleRequest()
        request.parent = "providers/bench"
        request.vehicleID = "v\(i)"
        request.vehicle.vehicleState = .online
        request.vehicle.supportedTripTypes = [.exclusive, .shared]
        request.vehicle.maximumCapacity = 4
        request.vehicle.vehicleType.category = .auto
        request.vehicle.lastLocation.location.latitude = position.latitude
        request.vehicle.lastLocation.location.longitude = position.longitude
        _ = try await service.createVehicle(request, metadata: metadata)
      }
    }
    try await creating.waitForAll()
  }
}

/// Every vehicle's position reports over the whole run, spread evenly: each vehicle moves to its
/// nudged position and back, one report every `every` seconds.
func reportCalls(
  positions: [LatLng], moved: [LatLng], every: Double, for seconds: Double, due: (Double) -> NIODeadline
) throws -> [OpenLoopClient.Call] {
  let bodies = try positions.indices.map { v in
    try [moved[v], positions[v]].map { point in
      var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
      request.name = "providers/bench/vehicles/v\(v)"
      request.vehicle.lastLocation.location.latitude = point.latitude
      request.vehicle.lastLocation.location.longitude = point.longitude
      request.updateMask.paths = ["last_location"]
      return grpcMessage(try request.serializedBytes())
    }
  }
  let rate = Double(positions.count) / every
  return (0..<Int(rate * seconds)).map { i in
    .init(
      due: due(Double(i) / rate), path: "/maps.fleetengine.v1.VehicleService/UpdateVehicle",
      body: bodies[i % positions.count][(i / positions.count) % 2], label: "update")
  }
}
