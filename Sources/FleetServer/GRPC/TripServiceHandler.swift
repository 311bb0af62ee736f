import FleetCore
import FleetProto
import GRPCCore
import SwiftProtobuf

/// maps.fleetengine.v1.TripService over gRPC.
struct TripServiceHandler: Maps_Fleetengine_V1_TripService.ServiceProtocol {
  let front: GRPCFront

  func createTrip(request: ServerRequest<Maps_Fleetengine_V1_CreateTripRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_V1_Trip>
  {
    try await front.respond(.createTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.createTrip(r, c)
    }
  }

  func getTrip(request: ServerRequest<Maps_Fleetengine_V1_GetTripRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_V1_Trip>
  {
    try await front.respond(.getTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in try rpcs.getTrip(r, c) }
  }

  func deleteTrip(request: ServerRequest<Maps_Fleetengine_V1_DeleteTripRequest>, context: ServerContext) async throws
    -> ServerResponse<Google_Protobuf_Empty>
  {
    try await front.respond(.deleteTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.deleteTrip(r, c)
    }
  }

  func reportBillableTrip(
    request: ServerRequest<Maps_Fleetengine_V1_ReportBillableTripRequest>, context: ServerContext
  ) async throws -> ServerResponse<Google_Protobuf_Empty> {
    try await front.respond(.reportBillableTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.reportBillableTrip(r, c)
    }
  }

  func searchTrips(request: ServerRequest<Maps_Fleetengine_V1_SearchTripsRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_V1_SearchTripsResponse>
  {
    try await front.respond(.searchTrips, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.searchTrips(r, c)
    }
  }

  func updateTrip(request: ServerRequest<Maps_Fleetengine_V1_UpdateTripRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_V1_Trip>
  {
    try await front.respond(.updateTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.updateTrip(r, c)
    }
  }
}
