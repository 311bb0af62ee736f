import FleetCore
import FleetProto
import GRPCCore

/// fleetkit.v1.Rides over gRPC.
struct RidesHandler: Fleetkit_V1_Rides.ServiceProtocol {
  let front: GRPCFront

  func createRide(request: ServerRequest<Fleetkit_V1_CreateRideRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_Ride>
  {
    try await front.respond(.createRide, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.createRide(r, c)
    }
  }

  func getRide(request: ServerRequest<Fleetkit_V1_GetRideRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_Ride>
  {
    try await front.respond(.getRide, request) { [rpcs = front.rpcs] r, c throws(FleetError) in try rpcs.getRide(r, c) }
  }

  func listRides(request: ServerRequest<Fleetkit_V1_ListRidesRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_ListRidesResponse>
  {
    try await front.respond(.listRides, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.listRides(r, c)
    }
  }

  func cancelRide(request: ServerRequest<Fleetkit_V1_CancelRideRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_Ride>
  {
    try await front.respond(.cancelRide, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.cancelRide(r, c)
    }
  }

  func quoteRide(request: ServerRequest<Fleetkit_V1_QuoteRideRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_QuoteRideResponse>
  {
    try await front.respond(.quoteRide, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.quoteRide(r, c)
    }
  }

  func listAreas(request: ServerRequest<Fleetkit_V1_ListAreasRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_ListAreasResponse>
  {
    try await front.respond(.listAreas, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.listAreas(r, c)
    }
  }
}
