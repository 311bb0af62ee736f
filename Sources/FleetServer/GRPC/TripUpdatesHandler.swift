import FleetCore
import FleetProto
import GRPCCore

/// fleetkit.v1.TripUpdates over gRPC: the trip pushed on every change.
struct TripUpdatesHandler: Fleetkit_V1_TripUpdates.ServiceProtocol {
  let front: GRPCFront

  func watchTrip(request: ServerRequest<Fleetkit_V1_WatchTripRequest>, context: ServerContext) async throws
    -> StreamingServerResponse<Maps_Fleetengine_V1_Trip>
  {
    // Authentication, quota and authorization happen once, when the stream opens.
    let opened = try await front.respond(.watchTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.watchTrip(r, c)
    }
    return StreamingServerResponse(
      accepted: opened.accepted.map { contents in
        StreamingServerResponse.Contents(metadata: contents.metadata) { writer in
          let watched = contents.message
          let watch = watched.watch
          defer { watch.stop() }
          do {
            // The client hanging up, or the server shutting down, ends the stream.
            try await withRPCCancellationHandler {
              for try await snapshot in watch.updates { try await writer.write(watched.trip(snapshot)) }
            } onCancelRPC: {
              watch.stop()
            }
          } catch let error as FleetError {
            throw error.rpcError
          }
          return [:]
        }
      })
  }
}
