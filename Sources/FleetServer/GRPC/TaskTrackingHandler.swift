import FleetCore
import FleetProto
import GRPCCore

/// fleetkit.v1.TaskTracking over gRPC: a shipment's tracking pushed on every change.
struct TaskTrackingHandler: Fleetkit_V1_TaskTracking.ServiceProtocol {
  let front: GRPCFront

  func watchTaskTrackingInfo(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest>, context: ServerContext
  ) async throws -> StreamingServerResponse<Maps_Fleetengine_Delivery_V1_TaskTrackingInfo> {
    // Authentication, quota and authorization happen once, when the stream opens.
    let opened = try await front.respond(.watchTaskTrackingInfo, request) {
      [rpcs = front.rpcs] r, c throws(FleetError) in try rpcs.watchTaskTrackingInfo(r, c)
    }
    return StreamingServerResponse(
      accepted: opened.accepted.map { contents in
        StreamingServerResponse.Contents(metadata: contents.metadata) { writer in
          let watch = contents.message
          defer { watch.stop() }
          do {
            // The client hanging up, or the server shutting down, ends the stream.
            try await withRPCCancellationHandler {
              for try await info in watch.updates {
                try await writer.write(Maps_Fleetengine_Delivery_V1_TaskTrackingInfo(info))
              }
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
