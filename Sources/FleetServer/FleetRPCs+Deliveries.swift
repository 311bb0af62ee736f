import FleetCore
import FleetGeometry
import FleetProto
import SwiftProtobuf

/// maps.fleetengine.delivery.v1.DeliveryService: decode → one domain call → encode, as the rides
/// RPCs.
extension FleetRPCs {
  // MARK: Delivery vehicles

  func createDeliveryVehicle(_ r: Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest, _ caller: Caller)
    async throws(FleetError) -> DeliveryProtoVehicle
  {
    let parent = try ProviderName(parsing: r.parent)
    // Fleet Engine: with no optional field to set, the vehicle may be left unset.
    let input = try DeliveryVehicleInput(r.deliveryVehicle, provider: parent.provider, id: r.deliveryVehicleID)
    return DeliveryProtoVehicle(
      try await fleet.createDeliveryVehicle(
        caller: caller, provider: parent.provider, id: r.deliveryVehicleID, input: input))
  }

  func getDeliveryVehicle(_ r: Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest, _ caller: Caller)
    throws(FleetError) -> DeliveryProtoVehicle
  {
    let name = try ResourceName(parsing: r.name, kind: .deliveryVehicles)
    return DeliveryProtoVehicle(try fleet.getDeliveryVehicle(caller: caller, name: name))
  }

  func updateDeliveryVehicle(_ r: Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest, _ caller: Caller)
    async throws(FleetError) -> DeliveryProtoVehicle
  {
    guard r.hasDeliveryVehicle else { throw .invalid("delivery_vehicle is required") }
    let name = try ResourceName(
      parsing: r.deliveryVehicle.name, kind: .deliveryVehicles, field: "delivery_vehicle.name")
    let input = try DeliveryVehicleInput(r.deliveryVehicle, provider: name.provider, id: name.id)
    return DeliveryProtoVehicle(
      try await fleet.updateDeliveryVehicle(caller: caller, name: name, input: input, mask: r.updateMask.paths))
  }

  func listDeliveryVehicles(_ r: Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest, _ caller: Caller)
    throws(FleetError) -> Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var query = Fleet.DeliveryVehicleQuery()
    query.pageSize = r.pageSize
    query.pageToken = r.pageToken
    query.filter = r.filter
    if r.hasViewport { query.viewport = Viewport(low: LatLng(r.viewport.low), high: LatLng(r.viewport.high)) }
    let (vehicles, next, total) = try fleet.listDeliveryVehicles(
      caller: caller, provider: parent.provider, query: query)
    var response = Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesResponse()
    response.deliveryVehicles = vehicles.map(DeliveryProtoVehicle.init)
    response.nextPageToken = next
    response.totalSize = Int64(total)
    return response
  }

  func deleteDeliveryVehicle(_ r: Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest, _ caller: Caller)
    async throws(FleetError) -> Google_Protobuf_Empty
  {
    try await fleet.deleteDeliveryVehicle(
      caller: caller, name: try ResourceName(parsing: r.name, kind: .deliveryVehicles))
    return Google_Protobuf_Empty()
  }

  // MARK: Tasks

  func createTask(_ r: Maps_Fleetengine_Delivery_V1_CreateTaskRequest, _ caller: Caller) async throws(FleetError)
    -> DeliveryProtoTask
  {
    let parent = try ProviderName(parsing: r.parent)
    guard r.hasTask else { throw .invalid("task is required") }
    let input = try TaskInput(r.task, provider: parent.provider, id: r.taskID)
    let task = try await fleet.createTask(caller: caller, provider: parent.provider, id: r.taskID, input: input)
    return DeliveryProtoTask(TaskView(task: task, journey: nil))
  }

  /// Fleet Engine: each request's parent and header are empty or the batch's.
  func batchCreateTasks(_ r: Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest, _ caller: Caller)
    async throws(FleetError) -> Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var requests: [(id: String, input: TaskInput)] = []
    for (i, request) in r.requests.enumerated() {
      guard request.parent.isEmpty || request.parent == r.parent else {
        throw .invalid("requests[\(i)].parent must be empty or '\(r.parent)', got '\(request.parent)'")
      }
      guard !request.hasHeader || !r.hasHeader || request.header == r.header else {
        throw .invalid("requests[\(i)].header must be empty or the batch's header")
      }
      guard request.hasTask else { throw .invalid("requests[\(i)].task is required") }
      requests.append(
        (
          request.taskID,
          try TaskInput(request.task, provider: parent.provider, id: request.taskID, field: "requests[\(i)].task")
        ))
    }
    let tasks = try await fleet.batchCreateTasks(caller: caller, provider: parent.provider, tasks: requests)
    var response = Maps_Fleetengine_Delivery_V1_BatchCreateTasksResponse()
    response.tasks = tasks.map { DeliveryProtoTask(TaskView(task: $0, journey: nil)) }
    return response
  }

  func getTask(_ r: Maps_Fleetengine_Delivery_V1_GetTaskRequest, _ caller: Caller) throws(FleetError)
    -> DeliveryProtoTask
  {
    DeliveryProtoTask(try fleet.getTask(caller: caller, name: try ResourceName(parsing: r.name, kind: .tasks)))
  }

  func updateTask(_ r: Maps_Fleetengine_Delivery_V1_UpdateTaskRequest, _ caller: Caller) async throws(FleetError)
    -> DeliveryProtoTask
  {
    guard r.hasTask else { throw .invalid("task is required") }
    let name = try ResourceName(parsing: r.task.name, kind: .tasks, field: "task.name")
    let input = try TaskInput(r.task, provider: name.provider, id: name.id)
    return DeliveryProtoTask(
      try await fleet.updateTask(caller: caller, name: name, input: input, mask: r.updateMask.paths))
  }

  func listTasks(_ r: Maps_Fleetengine_Delivery_V1_ListTasksRequest, _ caller: Caller) throws(FleetError)
    -> Maps_Fleetengine_Delivery_V1_ListTasksResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var query = Fleet.TaskQuery()
    query.pageSize = r.pageSize
    query.pageToken = r.pageToken
    query.filter = r.filter
    let (tasks, next, total) = try fleet.listTasks(caller: caller, provider: parent.provider, query: query)
    var response = Maps_Fleetengine_Delivery_V1_ListTasksResponse()
    response.tasks = tasks.map(DeliveryProtoTask.init)
    response.nextPageToken = next
    response.totalSize = Int64(total)
    return response
  }

  func deleteTask(_ r: Maps_Fleetengine_Delivery_V1_DeleteTaskRequest, _ caller: Caller) async throws(FleetError)
    -> Google_Protobuf_Empty
  {
    try await fleet.deleteTask(caller: caller, name: try ResourceName(parsing: r.name, kind: .tasks))
    return Google_Protobuf_Empty()
  }

  /// fleetkit.v1.StopOrdering/OptimizeStops: computed off the event loops (a matrix and a
  /// search that grow with the stops).
  func optimizeStops(_ r: Fleetkit_V1_OptimizeStopsRequest, _ caller: Caller) async throws(FleetError)
    -> Fleetkit_V1_OptimizeStopsResponse
  {
    let name = try ResourceName(parsing: r.name, kind: .deliveryVehicles)
    let fleet = self.fleet
    var outcome = try await OffLoop.run { () throws(FleetError) in try fleet.orderStops(caller: caller, name: name) }
    if r.apply { outcome = try await fleet.applyStopOrder(outcome, caller: caller, name: name) }
    func measures(_ m: StopOrdering.Measures) -> Fleetkit_V1_StopOrderMeasures {
      var p = Fleetkit_V1_StopOrderMeasures()
      p.driveDuration = durationProto(m.driveSeconds.isFinite ? m.driveSeconds : 0)
      p.driveDistanceMeters = m.driveMetres.isFinite ? Int64(m.driveMetres.rounded()) : 0
      p.timeWindowViolations = Int32(m.violations)
      p.lateness = durationProto(m.lateSeconds.isFinite ? m.lateSeconds : 0)
      p.finishTime = outcome.start.addingTimeInterval(m.finishSeconds.isFinite ? m.finishSeconds : 0).proto
      return p
    }
    var response = Fleetkit_V1_OptimizeStopsResponse()
    response.remainingVehicleJourneySegments = outcome.journey.map { $0.proto() }
    response.current = measures(outcome.current)
    response.optimized = measures(outcome.optimized)
    response.driveDurationLowerBound = durationProto(outcome.driveLowerBound.isFinite ? outcome.driveLowerBound : 0)
    response.applied = outcome.applied
    return response
  }

  /// fleetkit.v1.TaskTracking/WatchTaskTrackingInfo (and its server-sent events).
  func watchTaskTrackingInfo(_ r: Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest, _ caller: Caller)
    throws(FleetError) -> TrackingWatch
  {
    let name = try ResourceName(parsing: r.name, kind: .taskTrackingInfo)
    return try fleet.watchTaskTrackingInfo(caller: caller, provider: name.provider, trackingID: name.id)
  }

  func getTaskTrackingInfo(_ r: Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest, _ caller: Caller)
    throws(FleetError) -> Maps_Fleetengine_Delivery_V1_TaskTrackingInfo
  {
    let name = try ResourceName(parsing: r.name, kind: .taskTrackingInfo)
    return Maps_Fleetengine_Delivery_V1_TaskTrackingInfo(
      try fleet.getTaskTrackingInfo(caller: caller, provider: name.provider, trackingID: name.id))
  }
}
