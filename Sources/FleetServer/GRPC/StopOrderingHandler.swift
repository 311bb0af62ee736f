import FleetCore
import FleetProto
import GRPCCore

/// fleetkit.v1.StopOrdering over gRPC.
struct StopOrderingHandler: Fleetkit_V1_StopOrdering.ServiceProtocol {
  let front: GRPCFront

  func optimizeStops(request: ServerRequest<Fleetkit_V1_OptimizeStopsRequest>, context: ServerContext) async throws
    -> ServerResponse<Fleetkit_V1_OptimizeStopsResponse>
  {
    try await front.respond(.optimizeStops, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.optimizeStops(r, c)
    }
  }
}
