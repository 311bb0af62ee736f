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
      case .putBillableTrip, .putRide:
        break
      }
    }
    publish(trips)
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

  // MARK: - Watching a trip

  /// WatchTrip streams open now.
  public var openTripStreams: Int { watchers.count }

  /// The trip now and after every change, with GetTrip's views and authorization. A slow reader
  /// holds only the newest state; the stream ends after the trip completes or is canceled, and
  /// fails when the trip is deleted or the caller may no longer see it.
  public func watchTrip(caller: Caller, name: ResourceName, view: TripView = .unspecified) throws(FleetError)
    -> TripWatch
  {
    try caller.mayCall(.watchTrip)
    try caller.checkProvider(name.provider)
    if caller.role == .consumer { try caller.checkTripAccess(tripID: name.id, assignedVehicle: nil) }
    let effectiveView: TripView = caller.role == .consumer ? .journeySharingV1S : (view == .unspecified ? .sdk : view)
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: TripSnapshot.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
    let watcher = TripWatcher(caller: caller, view: effectiveView, continuation: continuation)
    // Registered before the first read, so that no change between the two is missed.
    watchers.add(watcher, for: name)
    continuation.onTermination = { [watchers] _ in watchers.remove(watcher, for: name) }
    let watch = TripWatch(updates: stream) { [watchers] in
      watchers.remove(watcher, for: name)
      continuation.finish()
    }
    do {
      let (snapshot, sequence) = try read { s throws(FleetError) in
        try (Self.watchedSnapshot(name, for: watcher, in: s), s.sequence)
      }
      watcher.send(snapshot, sequence: sequence)
    } catch {
      watchers.remove(watcher, for: name)
      continuation.finish()
      throw error
    }
    return watch
  }

  /// What one watcher is sent for a trip, checked against its rights now.
  static func watchedSnapshot(_ name: ResourceName, for watcher: TripWatcher, in s: State) throws(FleetError)
    -> TripSnapshot
  {
    let trip = try existingTrip(name, in: s)
    try watcher.caller.checkTripAccess(tripID: trip.id, assignedVehicle: trip.vehicleID)
    return snapshot(trip, view: watcher.view, includeVehicleWaypoints: false, state: s)
  }

  /// Sends each watched trip's new state to its watchers (one read for all of them).
  func publish(_ trips: Set<ResourceName>) {
    for name in trips {
      let watching = watchers.watchers(of: name)
      guard !watching.isEmpty else { continue }
      let (outcomes, sequence) = state.withLock { s in
        var byView: [TripView: TripSnapshot] = [:]
        let outcomes = watching.map { watcher -> Result<TripSnapshot, FleetError> in
          do throws(FleetError) {
            let trip = try Self.existingTrip(name, in: s)
            try watcher.caller.checkTripAccess(tripID: trip.id, assignedVehicle: trip.vehicleID)
            if let shared = byView[watcher.view] { return .success(shared) }
            let snapshot = Self.snapshot(trip, view: watcher.view, includeVehicleWaypoints: false, state: s)
            byView[watcher.view] = snapshot
            return .success(snapshot)
          } catch {
            return .failure(error)
          }
        }
        return (outcomes, s.sequence)
      }
      let now = now()
      for (watcher, outcome) in zip(watching, outcomes) {
        switch outcome {
        case .success(var snapshot):
          snapshot.progress?.readAt = now
          watcher.send(snapshot, sequence: sequence)
        case .failure(let error): watcher.fail(error)
        }
      }
    }
  }
}

/// An open WatchTrip stream: the trip's states, newest first when the reader falls behind, and
/// `stop()` for the transport to call when its client hangs up or the server shuts down.
public struct TripWatch: Sendable {
  public let updates: AsyncThrowingStream<TripSnapshot, any Error>
  let stopping: @Sendable () -> Void

  init(updates: AsyncThrowingStream<TripSnapshot, any Error>, stop: @escaping @Sendable () -> Void) {
    self.updates = updates
    self.stopping = stop
  }

  /// Ends the stream and forgets the watcher; idempotent.
  public func stop() { stopping() }
}

/// One open WatchTrip stream.
final class TripWatcher: Sendable {
  let caller: Caller
  let view: TripView
  let continuation: AsyncThrowingStream<TripSnapshot, any Error>.Continuation
  /// The sequence of the state last sent: publishers racing each other never send an older one
  /// after a newer one.
  let lastSequence = Mutex<UInt64?>(nil)

  init(caller: Caller, view: TripView, continuation: AsyncThrowingStream<TripSnapshot, any Error>.Continuation) {
    self.caller = caller
    self.view = view
    self.continuation = continuation
  }

  func send(_ snapshot: TripSnapshot, sequence: UInt64) {
    lastSequence.withLock { last in
      if let last, sequence <= last { return }
      last = sequence
      continuation.yield(snapshot)
      // A finished trip changes no more (beyond feedback): its last state ends the stream.
      if snapshot.trip.status.isTerminal { continuation.finish() }
    }
  }

  func fail(_ error: FleetError) {
    lastSequence.withLock { _ in continuation.finish(throwing: error) }
  }
}

/// The open streams per trip.
final class TripWatchers: Sendable {
  let byTrip = Mutex<[ResourceName: [ObjectIdentifier: TripWatcher]]>([:])

  func add(_ watcher: TripWatcher, for trip: ResourceName) {
    byTrip.withLock { $0[trip, default: [:]][ObjectIdentifier(watcher)] = watcher }
  }

  func remove(_ watcher: TripWatcher, for trip: ResourceName) {
    byTrip.withLock { all in
      all[trip]?.removeValue(forKey: ObjectIdentifier(watcher))
      if all[trip]?.isEmpty == true { all[trip] = nil }
    }
  }

  func watchers(of trip: ResourceName) -> [TripWatcher] {
    byTrip.withLock { all in all[trip].map { Array($0.values) } ?? [] }
  }

  /// Open streams, for metrics and tests.
  var count: Int { byTrip.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
