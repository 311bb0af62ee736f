import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import SwiftProtobuf

// The Deliveries API's wire types and the domain. DeliveryVehicleLocation, DeliveryVehicleAttribute
// and TaskAttribute have the fields and numbers of maps.fleetengine.v1's VehicleLocation,
// VehicleAttribute and TripAttribute: they are read and written through those conversions, so the
// rules stay in one place.

typealias DeliveryProtoVehicle = Maps_Fleetengine_Delivery_V1_DeliveryVehicle
typealias DeliveryProtoTask = Maps_Fleetengine_Delivery_V1_Task

extension VehicleLocation {
  init(_ p: Maps_Fleetengine_Delivery_V1_DeliveryVehicleLocation, field: String) throws(FleetError) {
    try self.init(p.rewired(as: Maps_Fleetengine_V1_VehicleLocation.self), field: field)
  }

  var deliveryProto: Maps_Fleetengine_Delivery_V1_DeliveryVehicleLocation { proto.rewired() }
}

extension Attribute {
  init(_ p: Maps_Fleetengine_Delivery_V1_DeliveryVehicleAttribute, field: String) throws(FleetError) {
    try self.init(p.rewired(as: Maps_Fleetengine_V1_VehicleAttribute.self), field: field)
  }

  init(_ p: Maps_Fleetengine_Delivery_V1_TaskAttribute, field: String) throws(FleetError) {
    try self.init(p.rewired(as: Maps_Fleetengine_V1_TripAttribute.self), field: field)
  }

  var deliveryVehicleProto: Maps_Fleetengine_Delivery_V1_DeliveryVehicleAttribute { vehicleProto.rewired() }
  var taskProto: Maps_Fleetengine_Delivery_V1_TaskAttribute { tripProto.rewired() }
}

extension TimeWindow {
  init(_ p: Maps_Fleetengine_Delivery_V1_TimeWindow, field: String) throws(FleetError) {
    guard p.hasStartTime, p.hasEndTime else { throw .invalid("\(field) needs both start_time and end_time") }
    self.init(start: Date(p.startTime), end: Date(p.endTime))
  }

  var proto: Maps_Fleetengine_Delivery_V1_TimeWindow {
    var p = Maps_Fleetengine_Delivery_V1_TimeWindow()
    p.startTime = start.proto
    p.endTime = end.proto
    return p
  }
}

/// A Duration's seconds, refusing what no task or drive can take.
func seconds(_ p: Google_Protobuf_Duration, field: String) throws(FleetError) -> Double {
  guard p.seconds >= 0, p.nanos >= 0, p.seconds <= 315_576_000_000 else {
    throw .invalid("\(field) must be a non-negative duration")
  }
  return Double(p.seconds) + Double(p.nanos) / 1e9
}

func durationProto(_ seconds: Double) -> Google_Protobuf_Duration {
  let whole = seconds.rounded(.down)
  return Google_Protobuf_Duration(seconds: Int64(whole), nanos: Int32(((seconds - whole) * 1e9).rounded()))
}

// MARK: - Delivery vehicles

extension DeliveryVehicleInput {
  init(_ p: DeliveryProtoVehicle, provider: String, id: String) throws(FleetError) {
    var v = DeliveryVehicle(provider: provider, id: id)
    var fields = Set<String>()
    if !p.name.isEmpty { fields.insert("name") }
    if p.hasLastLocation {
      fields.insert("last_location")
      v.lastLocation = try VehicleLocation(p.lastLocation, field: "delivery_vehicle.last_location")
    }
    var past: [VehicleLocation] = []
    for (i, location) in p.pastLocations.enumerated() {
      past.append(try VehicleLocation(location, field: "delivery_vehicle.past_locations[\(i)]"))
    }
    if !past.isEmpty { fields.insert("past_locations") }
    if p.navigationStatus != .unknownNavigationStatus { fields.insert("navigation_status") }
    v.navigationStatus = try domainEnum(p.navigationStatus, "delivery_vehicle.navigation_status")
    if !p.currentRouteSegment.isEmpty { fields.insert("current_route_segment") }
    v.currentRouteSegment = [UInt8](p.currentRouteSegment)
    if p.hasCurrentRouteSegmentEndPoint {
      fields.insert("current_route_segment_end_point")
      v.currentRouteSegmentEndPoint = LatLng(p.currentRouteSegmentEndPoint)
    }
    if p.hasRemainingDistanceMeters {
      fields.insert("remaining_distance_meters")
      v.remainingDistanceMeters = p.remainingDistanceMeters.value
    }
    if p.hasRemainingDuration {
      fields.insert("remaining_duration")
      v.remainingDuration = try seconds(p.remainingDuration, field: "delivery_vehicle.remaining_duration")
    }
    if !p.remainingVehicleJourneySegments.isEmpty { fields.insert("remaining_vehicle_journey_segments") }
    v.journey = try p.remainingVehicleJourneySegments.enumerated().map { i, segment throws(FleetError) in
      try JourneySegment(segment, field: "delivery_vehicle.remaining_vehicle_journey_segments[\(i)]")
    }
    if !p.attributes.isEmpty { fields.insert("attributes") }
    v.attributes = try p.attributes.enumerated().map { i, a throws(FleetError) in
      try Attribute(a, field: "delivery_vehicle.attributes[\(i)]")
    }
    if p.type != .unspecified { fields.insert("type") }
    v.type = try domainEnum(p.type, "delivery_vehicle.type")
    self.init(vehicle: v, pastLocations: past, fieldsSet: fields)
  }
}

extension JourneySegment {
  /// What a client sends of a segment: its stop (the drive is the server's).
  init(_ p: Maps_Fleetengine_Delivery_V1_VehicleJourneySegment, field: String) throws(FleetError) {
    guard p.hasStop else { throw .invalid("\(field).stop is required") }
    guard p.stop.hasPlannedLocation, p.stop.plannedLocation.hasPoint else {
      throw .invalid("\(field).stop.planned_location is required")
    }
    let state: VehicleStop.State = try domainEnum(p.stop.state, "\(field).stop.state")
    self.init(
      stop: VehicleStop(
        plannedLocation: LatLng(p.stop.plannedLocation.point),
        tasks: p.stop.tasks.map { VehicleStop.TaskInfo(taskID: $0.taskID) }, state: state))
  }

  /// `stopDetails`: false for journey sharing, which shows the drives but not the stops' places,
  /// tasks or states (Fleet Engine leaves them out of GetTask).
  func proto(stopDetails: Bool = true) -> Maps_Fleetengine_Delivery_V1_VehicleJourneySegment {
    var p = Maps_Fleetengine_Delivery_V1_VehicleJourneySegment()
    if stopDetails {
      p.stop.plannedLocation.point = stop.plannedLocation.proto
      p.stop.state = wireEnum(stop.state)
      p.stop.tasks = stop.tasks.map { info in
        var t = Maps_Fleetengine_Delivery_V1_VehicleStop.TaskInfo()
        t.taskID = info.taskID
        if let duration = info.duration { t.taskDuration = durationProto(duration) }
        if let window = info.targetTimeWindow { t.targetTimeWindow = window.proto }
        return t
      }
    }
    if let metres = drivingDistanceMeters { p.drivingDistanceMeters = .init(metres) }
    if let duration = drivingDuration { p.drivingDuration = durationProto(duration) }
    p.path = path.map(\.proto)
    return p
  }
}

extension DeliveryProtoVehicle {
  init(_ v: DeliveryVehicle) {
    self.init()
    name = v.name.description
    if let location = v.lastLocation { lastLocation = location.deliveryProto }
    navigationStatus = wireEnum(v.navigationStatus)
    currentRouteSegment = Data(v.currentRouteSegment)
    if let end = v.currentRouteSegmentEndPoint { currentRouteSegmentEndPoint = end.proto }
    if let metres = v.remainingDistanceMeters { remainingDistanceMeters = .init(metres) }
    if let duration = v.remainingDuration { remainingDuration = durationProto(duration) }
    remainingVehicleJourneySegments = v.journey.map { $0.proto() }
    attributes = v.attributes.map(\.deliveryVehicleProto)
    type = wireEnum(v.type)
  }
}

// MARK: - Tasks

extension TaskInput {
  init(_ p: DeliveryProtoTask, provider: String, id: String, field: String = "task") throws(FleetError) {
    var t = DeliveryTask(provider: provider, id: id)
    var fields = Set<String>()
    if !p.name.isEmpty { fields.insert("name") }
    if p.type != .unspecified { fields.insert("type") }
    t.type = try domainEnum(p.type, "\(field).type")
    if p.state != .unspecified { fields.insert("state") }
    t.state = try domainEnum(p.state, "\(field).state")
    if p.taskOutcome != .unspecified { fields.insert("task_outcome") }
    t.outcome = try domainEnum(p.taskOutcome, "\(field).task_outcome")
    if p.hasTaskOutcomeTime {
      fields.insert("task_outcome_time")
      t.outcomeTime = Date(p.taskOutcomeTime)
    }
    if p.hasTaskOutcomeLocation {
      fields.insert("task_outcome_location")
      guard p.taskOutcomeLocation.hasPoint else { throw .invalid("\(field).task_outcome_location.point is required") }
      t.outcomeLocation = LatLng(p.taskOutcomeLocation.point)
    }
    if p.taskOutcomeLocationSource != .unspecified { fields.insert("task_outcome_location_source") }
    if !p.trackingID.isEmpty { fields.insert("tracking_id") }
    t.trackingID = p.trackingID
    if !p.deliveryVehicleID.isEmpty { fields.insert("delivery_vehicle_id") }
    if p.hasPlannedLocation {
      fields.insert("planned_location")
      guard p.plannedLocation.hasPoint else { throw .invalid("\(field).planned_location.point is required") }
      t.plannedLocation = LatLng(p.plannedLocation.point)
    }
    if p.hasTaskDuration {
      fields.insert("task_duration")
      t.duration = try seconds(p.taskDuration, field: "\(field).task_duration")
    }
    if p.hasTargetTimeWindow {
      fields.insert("target_time_window")
      t.targetTimeWindow = try TimeWindow(p.targetTimeWindow, field: "\(field).target_time_window")
    }
    if p.hasJourneySharingInfo { fields.insert("journey_sharing_info") }
    if p.hasTaskTrackingViewConfig {
      fields.insert("task_tracking_view_config")
      t.trackingViewConfig = try TaskTrackingViewConfig(
        p.taskTrackingViewConfig, field: "\(field).task_tracking_view_config")
    }
    if !p.attributes.isEmpty { fields.insert("attributes") }
    t.attributes = try p.attributes.enumerated().map { i, a throws(FleetError) in
      try Attribute(a, field: "\(field).attributes[\(i)]")
    }
    self.init(task: t, fieldsSet: fields)
  }
}

extension TaskTrackingViewConfig {
  init(_ p: Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig, field: String) throws(FleetError) {
    self.init()
    typealias Option = Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig.VisibilityOption
    func visibility(_ has: Bool, _ o: Option, _ name: String) throws(FleetError) -> Visibility? {
      guard has else { return nil }
      let path = "\(field).\(name)"
      switch o.visibilityOption {
      case .remainingStopCountThreshold(let n)?: return .remainingStopCountAtMost(n)
      case .durationUntilEstimatedArrivalTimeThreshold(let d)?:
        return .durationUntilArrivalAtMost(
          try seconds(d, field: "\(path).duration_until_estimated_arrival_time_threshold"))
      case .remainingDrivingDistanceMetersThreshold(let n)?: return .remainingDrivingDistanceAtMost(n)
      case .always(let on)?:
        guard on else { throw .invalid("\(path).always cannot be false") }
        return .always
      case .never(let on)?:
        guard on else { throw .invalid("\(path).never cannot be false") }
        return .never
      case nil: throw .invalid("\(path) must set one visibility option")
      }
    }
    routePolylinePoints = try visibility(
      p.hasRoutePolylinePointsVisibility, p.routePolylinePointsVisibility, "route_polyline_points_visibility")
    estimatedArrivalTime = try visibility(
      p.hasEstimatedArrivalTimeVisibility, p.estimatedArrivalTimeVisibility, "estimated_arrival_time_visibility")
    estimatedTaskCompletionTime = try visibility(
      p.hasEstimatedTaskCompletionTimeVisibility, p.estimatedTaskCompletionTimeVisibility,
      "estimated_task_completion_time_visibility")
    remainingDrivingDistance = try visibility(
      p.hasRemainingDrivingDistanceVisibility, p.remainingDrivingDistanceVisibility,
      "remaining_driving_distance_visibility")
    remainingStopCount = try visibility(
      p.hasRemainingStopCountVisibility, p.remainingStopCountVisibility, "remaining_stop_count_visibility")
    vehicleLocation = try visibility(
      p.hasVehicleLocationVisibility, p.vehicleLocationVisibility, "vehicle_location_visibility")
  }

  var proto: Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig {
    typealias Option = Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig.VisibilityOption
    func option(_ v: Visibility) -> Option {
      var o = Option()
      switch v {
      case .remainingStopCountAtMost(let n): o.remainingStopCountThreshold = n
      case .durationUntilArrivalAtMost(let s): o.durationUntilEstimatedArrivalTimeThreshold = durationProto(s)
      case .remainingDrivingDistanceAtMost(let n): o.remainingDrivingDistanceMetersThreshold = n
      case .always: o.always = true
      case .never: o.never = true
      }
      return o
    }
    var p = Maps_Fleetengine_Delivery_V1_TaskTrackingViewConfig()
    if let v = routePolylinePoints { p.routePolylinePointsVisibility = option(v) }
    if let v = estimatedArrivalTime { p.estimatedArrivalTimeVisibility = option(v) }
    if let v = estimatedTaskCompletionTime { p.estimatedTaskCompletionTimeVisibility = option(v) }
    if let v = remainingDrivingDistance { p.remainingDrivingDistanceVisibility = option(v) }
    if let v = remainingStopCount { p.remainingStopCountVisibility = option(v) }
    if let v = vehicleLocation { p.vehicleLocationVisibility = option(v) }
    return p
  }
}

extension DeliveryProtoTask {
  init(_ view: TaskView) {
    self.init()
    let t = view.task
    name = t.name.description
    type = wireEnum(t.type)
    state = wireEnum(t.state)
    taskOutcome = wireEnum(t.outcome)
    if let time = t.outcomeTime { taskOutcomeTime = time.proto }
    if let location = t.outcomeLocation { taskOutcomeLocation.point = location.proto }
    taskOutcomeLocationSource = wireEnum(t.outcomeLocationSource)
    trackingID = t.trackingID
    deliveryVehicleID = t.deliveryVehicleID
    if let planned = t.plannedLocation { plannedLocation.point = planned.proto }
    taskDuration = durationProto(t.duration)
    if let window = t.targetTimeWindow { targetTimeWindow = window.proto }
    if let config = t.trackingViewConfig { taskTrackingViewConfig = config.proto }
    attributes = t.attributes.map(\.taskProto)
    if let journey = view.journey {
      var info = Maps_Fleetengine_Delivery_V1_Task.JourneySharingInfo()
      info.remainingVehicleJourneySegments = journey.segments.map { $0.proto(stopDetails: false) }
      if let location = journey.vehicleLocation {
        info.lastLocation = location.deliveryProto
        info.lastLocationSnappable = location.isRoadSnapped ?? false
      }
      journeySharingInfo = info
    }
  }
}

extension Maps_Fleetengine_Delivery_V1_TaskTrackingInfo {
  init(_ info: TaskTrackingInfo) {
    self.init()
    name = ResourceName(provider: info.provider, kind: .taskTrackingInfo, id: info.trackingID).description
    trackingID = info.trackingID
    if let location = info.vehicleLocation { vehicleLocation = location.deliveryProto }
    routePolylinePoints = (info.routePolylinePoints ?? []).map(\.proto)
    if let count = info.remainingStopCount { remainingStopCount = .init(count) }
    if let metres = info.remainingDrivingDistanceMeters { remainingDrivingDistanceMeters = .init(metres) }
    if let time = info.estimatedArrivalTime { estimatedArrivalTime = time.proto }
    if let time = info.estimatedTaskCompletionTime { estimatedTaskCompletionTime = time.proto }
    state = wireEnum(info.state)
    taskOutcome = wireEnum(info.outcome)
    if let time = info.outcomeTime { taskOutcomeTime = time.proto }
    if let planned = info.plannedLocation { plannedLocation.point = planned.proto }
    if let window = info.targetTimeWindow { targetTimeWindow = window.proto }
    attributes = info.attributes.map(\.taskProto)
  }
}
