import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import SwiftProtobuf

// The Deliveries API's wire types as the delivery driver needs them. A DeliveryVehicleLocation has
// the fields and numbers of v1's VehicleLocation, so a fix is written once, as the rides reporter
// writes it, and read as its twin.

extension Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest {
  /// The request for a position update; its mask names exactly the fields it sets.
  init(_ update: VehicleUpdate) {
    self.init()
    deliveryVehicle.name = update.vehicleName
    if let location = update.location {
      deliveryVehicle.lastLocation = Maps_Fleetengine_V1_VehicleLocation(location).rewired()
    }
    deliveryVehicle.pastLocations = update.pastLocations.map {
      Maps_Fleetengine_V1_VehicleLocation($0).rewired()
    }
    if let route = update.route {
      deliveryVehicle.currentRouteSegment = Data(Polyline.encode(route.path).utf8)
      deliveryVehicle.currentRouteSegmentEndPoint = .init(route.destination)
      if route.remainingDistanceMeters.isFinite {
        deliveryVehicle.remainingDistanceMeters = .init(
          Int32(clamping: Int(max(0, route.remainingDistanceMeters).rounded())))
      }
      deliveryVehicle.remainingDuration = .init(seconds: route.remainingTime.components.seconds)
    }
    updateMask.paths = update.updateMask
  }

  /// The request that replaces the vehicle's remaining stops (one journey segment each).
  init(vehicleName: String, stops: [VehicleStop]) {
    self.init()
    deliveryVehicle.name = vehicleName
    deliveryVehicle.remainingVehicleJourneySegments = stops.map { stop in
      Maps_Fleetengine_Delivery_V1_VehicleJourneySegment.with { $0.stop = .init(stop) }
    }
    updateMask.paths = ["remaining_vehicle_journey_segments"]
  }
}

extension Maps_Fleetengine_Delivery_V1_VehicleStop {
  init(_ stop: VehicleStop) {
    self.init()
    plannedLocation.point = .init(stop.plannedLocation)
    tasks = stop.tasks.map { info in Maps_Fleetengine_Delivery_V1_VehicleStop.TaskInfo.with { $0.taskID = info.taskID }
    }
    state = Maps_Fleetengine_Delivery_V1_VehicleStop.State(rawValue: stop.state.rawValue) ?? .unspecified
  }
}

extension VehicleStop {
  init(_ p: Maps_Fleetengine_Delivery_V1_VehicleStop) {
    self.init(
      plannedLocation: LatLng(latitude: p.plannedLocation.point.latitude, longitude: p.plannedLocation.point.longitude),
      tasks: p.tasks.map { info in
        var task = TaskInfo(taskID: info.taskID)
        if info.hasTaskDuration {
          task.duration = Double(info.taskDuration.seconds) + Double(info.taskDuration.nanos) / 1e9
        }
        return task
      },
      state: State(rawValue: p.state.rawValue) ?? .unspecified)
  }
}

extension ReportedVehicle {
  init(_ vehicle: Maps_Fleetengine_Delivery_V1_DeliveryVehicle) {
    state = .unknown
    waypoints = []
    currentTrips = []
    currentRouteSegment = String(decoding: vehicle.currentRouteSegment, as: UTF8.self)
    remainingDistanceMeters = vehicle.hasRemainingDistanceMeters ? Int(vehicle.remainingDistanceMeters.value) : nil
    etaToFirstWaypoint = nil
    lastLocation =
      vehicle.hasLastLocation
      ? LatLng(latitude: vehicle.lastLocation.location.latitude, longitude: vehicle.lastLocation.location.longitude)
      : nil
    stops = vehicle.remainingVehicleJourneySegments.map { VehicleStop($0.stop) }
  }
}

extension Maps_Fleetengine_Delivery_V1_UpdateTaskRequest {
  /// The request that sets a task's outcome, its time and (when given) where it happened.
  init(taskName: String, outcome: TaskOutcome, time: Date, location: LatLng?) {
    self.init()
    task.name = taskName
    task.taskOutcome = Maps_Fleetengine_Delivery_V1_Task.TaskOutcome(rawValue: outcome.rawValue) ?? .unspecified
    task.taskOutcomeTime = .init(date: time)
    updateMask.paths = ["task_outcome", "task_outcome_time"]
    if let location {
      task.taskOutcomeLocation.point = .init(location)
      updateMask.paths.append("task_outcome_location")
    }
  }
}
