import FleetCore
import FleetProto
import GRPCCore
import SwiftProtobuf

/// maps.fleetengine.delivery.v1.DeliveryService over gRPC.
struct DeliveryServiceHandler: Maps_Fleetengine_Delivery_V1_DeliveryService.ServiceProtocol {
  let front: GRPCFront

  func createDeliveryVehicle(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_DeliveryVehicle>
  {
    try await front.respond(.createDeliveryVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.createDeliveryVehicle(r, c)
    }
  }

  func getDeliveryVehicle(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_DeliveryVehicle>
  {
    try await front.respond(.getDeliveryVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.getDeliveryVehicle(r, c)
    }
  }

  func deleteDeliveryVehicle(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Google_Protobuf_Empty>
  {
    try await front.respond(.deleteDeliveryVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.deleteDeliveryVehicle(r, c)
    }
  }

  func updateDeliveryVehicle(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_DeliveryVehicle>
  {
    try await front.respond(.updateDeliveryVehicle, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.updateDeliveryVehicle(r, c)
    }
  }

  func batchCreateTasks(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse>
  {
    try await front.respond(.batchCreateTasks, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.batchCreateTasks(r, c)
    }
  }

  func createTask(request: ServerRequest<Maps_Fleetengine_Delivery_V1_CreateTaskRequest>, context: ServerContext)
    async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_Task>
  {
    try await front.respond(.createTask, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.createTask(r, c)
    }
  }

  func getTask(request: ServerRequest<Maps_Fleetengine_Delivery_V1_GetTaskRequest>, context: ServerContext) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_Task>
  {
    try await front.respond(.getTask, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.getTask(r, c)
    }
  }

  func deleteTask(request: ServerRequest<Maps_Fleetengine_Delivery_V1_DeleteTaskRequest>, context: ServerContext)
    async throws
    -> ServerResponse<Google_Protobuf_Empty>
  {
    try await front.respond(.deleteTask, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.deleteTask(r, c)
    }
  }

  func updateTask(request: ServerRequest<Maps_Fleetengine_Delivery_V1_UpdateTaskRequest>, context: ServerContext)
    async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_Task>
  {
    try await front.respond(.updateTask, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try await rpcs.updateTask(r, c)
    }
  }

  func listTasks(request: ServerRequest<Maps_Fleetengine_Delivery_V1_ListTasksRequest>, context: ServerContext)
    async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_ListTasksResponse>
  {
    try await front.respond(.listTasks, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.listTasks(r, c)
    }
  }

  func getTaskTrackingInfo(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_TaskTrackingInfo>
  {
    try await front.respond(.getTaskTrackingInfo, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.getTaskTrackingInfo(r, c)
    }
  }

  func listDeliveryVehicles(
    request: ServerRequest<Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest>, context: ServerContext
  ) async throws
    -> ServerResponse<Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse>
  {
    try await front.respond(.listDeliveryVehicles, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.listDeliveryVehicles(r, c)
    }
  }
}
