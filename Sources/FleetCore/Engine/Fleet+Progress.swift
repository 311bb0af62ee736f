import Foundation
import Synchronization

extension Fleet {
  /// The progress of every vehicle a write puts, computed before its commit so that the
  /// commit can store it with the change.
  func computeProgress(of changes: [StoredChange]) -> [VehicleProgressRecord] {
    guard let engine = progressEngine else { return [] }
    let now = now()
    return changes.compactMap { change in
      guard case .putVehicle(let vehicle) = change else { return nil }
      return VehicleProgressRecord(
        provider: vehicle.provider, vehicleID: vehicle.id, revision: vehicle.revision,
        progress: engine.progress(of: vehicle, now: now))
    }
  }

  /// After a durable change: the progress computed for its vehicles is kept, then the change
  /// is announced.
  func propagate(_ changes: [StoredChange], progress: [VehicleProgressRecord]) {
    state.withLock { s in Self.keep(progress, in: &s) }
    announce(changes)
  }

  /// Every trip a change touched (and every trip on the vehicles it put) goes to its watchers;
  /// a deleted vehicle's trace is dropped.
  func announce(_ changes: [StoredChange]) {
    var trips = Set<ResourceName>()
    for change in changes {
      switch change {
      case .putVehicle(let vehicle):
        for id in vehicle.currentTrips { trips.insert(ResourceName(provider: vehicle.provider, kind: .trips, id: id)) }
      case .putTrip(let trip):
        trips.insert(trip.name)
      case .deleteTrip(let provider, let id, _):
        trips.insert(ResourceName(provider: provider, kind: .trips, id: id))
      case .deleteVehicle(let provider, let id, _):
        progressEngine?.forget(ResourceName(provider: provider, kind: .vehicles, id: id))
      case .putBillableTrip, .putRide, .deleteRide, .putEvent, .putDeliveryVehicle, .deleteDeliveryVehicle, .putTask,
        .deleteTask:
        break
      }
    }
    publish(trips)
    publishTracking(trackingNames(touchedBy: changes))
  }

  /// Keeps computed progress, unless its vehicle changed again meanwhile: that newer change
  /// brings its own.
  static func keep(_ records: [VehicleProgressRecord], in s: inout State) {
    for record in records {
      guard s.vehicles[record.provider]?[record.vehicleID]?.revision == record.revision else { continue }
      s.progress[record.provider, default: [:]][record.vehicleID] = record.progress
      s.sequence += 1
    }
  }

  /// Runs the progress engine for each vehicle (outside the lock) and keeps the result.
  func recomputeProgress(of vehicles: [Vehicle]) {
    let records = computeProgress(of: vehicles.map(StoredChange.putVehicle))
    state.withLock { s in Self.keep(records, in: &s) }
  }

  /// A vehicle as responses show it: with the server's progress in the fields Fleet Engine's
  /// Driver SDK would otherwise report (route segment, remaining distance, ETA, navigation).
  static func decorated(_ vehicle: Vehicle, in s: State) -> Vehicle {
    guard let progress = s.progress[vehicle.provider]?[vehicle.id] else { return vehicle }
    var shown = vehicle
    shown.navigationStatus = progress.navigationStatus
    if let first = progress.legs.first {
      shown.currentRouteSegment = first.encodedPath
      shown.currentRouteSegmentVersion = progress.routeVersion
      shown.currentRouteSegmentEndPoint = first.waypoint
      shown.remainingDistanceMeters = Int32(clamping: Int(first.distanceMeters.rounded()))
      shown.etaToFirstWaypoint = first.eta
    } else {
      shown.currentRouteSegment = ""
      shown.currentRouteSegmentEndPoint = nil
      shown.remainingDistanceMeters = nil
      shown.etaToFirstWaypoint = nil
    }
    return shown
  }

  /// A trip's share of its vehicle's progress, when it is current for the trip's remaining
  /// waypoints; pickup and drop-off times become estimates until they happen.
  static func addProgress(to snapshot: inout TripSnapshot, vehicle: Vehicle, in s: State) {
    let trip = snapshot.trip
    guard let progress = s.progress[trip.provider]?[vehicle.id] else { return }
    let legs = Array(progress.legs(forTrip: trip.id))
    guard !legs.isEmpty, legs.map(\.waypoint) == snapshot.remainingWaypoints else { return }
    snapshot.progress = TripRouteProgress(
      legs: legs, isLocationSnappable: progress.isLocationSnappable, routeVersion: progress.routeVersion,
      trafficVersion: progress.trafficVersion, readAt: progress.computedAt)
    if [.new, .enrouteToPickup, .arrivedAtPickup].contains(trip.status) {
      snapshot.trip.pickupTime = progress.eta(trip: trip.id, at: .pickup)
    }
    snapshot.trip.dropoffTime = progress.eta(trip: trip.id, at: .dropOff)
  }
}
