import FleetCore
import FleetProto
import GRPCCore
import SwiftProtobuf

/// maps.fleetengine.v1.VehicleService over gRPC.
struct VehicleServiceHandler: Maps_Fleetengine_V1_VehicleService.ServiceProtocol {
  let front: GRPCFront

  func createVehicle(request: ServerRequest<Maps_Fleetengine_V1_CreateVehicleRequest>, context: ServerContext)
    async throws -> ServerResponse<Maps_Fleetengine_V1_Vehicle>
  {
    try await front.respond(.createVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.createVehicle(r, c)
    }
  }

  func getVehicle(request: ServerRequest<Maps_Fleetengine_V1_GetVehicleRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_V1_Vehicle>
  {
    try await front.respond(.getVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.getVehicle(r, c)
    }
  }

  func deleteVehicle(request: ServerRequest<Maps_Fleetengine_V1_DeleteVehicleRequest>, context: ServerContext)
    async throws -> ServerResponse<Google_Protobuf_Empty>
  {
    try await front.respond(.deleteVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.deleteVehicle(r, c)
    }
  }

  func updateVehicle(request: ServerRequest<Maps_Fleetengine_V1_UpdateVehicleRequest>, context: ServerContext)
    async throws -> ServerResponse<Maps_Fleetengine_V1_Vehicle>
  {
    try await front.respond(.updateVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.updateVehicle(r, c)
    }
  }

  func updateVehicleAttributes(
    request: ServerRequest<Maps_Fleetengine_V1_UpdateVehicleAttributesRequest>, context: ServerContext
  ) async throws -> ServerResponse<Maps_Fleetengine_V1_UpdateVehicleAttributesResponse> {
    try await front.respond(.updateVehicleAttributes, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.updateVehicleAttributes(r, c)
    }
  }

  func listVehicles(request: ServerRequest<Maps_Fleetengine_V1_ListVehiclesRequest>, context: ServerContext)
    async throws -> ServerResponse<Maps_Fleetengine_V1_ListVehiclesResponse>
  {
    try await front.respond(.listVehicles, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.listVehicles(r, c)
    }
  }

  func searchVehicles(request: ServerRequest<Maps_Fleetengine_V1_SearchVehiclesRequest>, context: ServerContext)
    async throws -> ServerResponse<Maps_Fleetengine_V1_SearchVehiclesResponse>
  {
    try await front.respond(.searchVehicles, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.searchVehicles(r, c)
    }
  }
}
