import Foundation

extension Fleet {
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
      of: TripUpdate.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
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
}
