import Foundation
import Synchronization

extension Fleet {
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

/// A watched trip's state as sent, with the fleet's change sequence it was read at. One change
/// reaches every watcher of the trip with the same view as equal updates (the same sequence and
/// read time), so a transport can build each one's wire form once for all of them.
public struct TripUpdate: Sendable {
  public var snapshot: TripSnapshot
  public var sequence: UInt64

  public init(snapshot: TripSnapshot, sequence: UInt64) {
    self.snapshot = snapshot
    self.sequence = sequence
  }
}

/// An open WatchTrip stream: the trip's states, newest first when the reader falls behind, and
/// `stop()` for the transport to call when its client hangs up or the server shuts down.
public struct TripWatch: Sendable {
  public let updates: AsyncThrowingStream<TripUpdate, any Error>
  let stopping: @Sendable () -> Void

  init(updates: AsyncThrowingStream<TripUpdate, any Error>, stop: @escaping @Sendable () -> Void) {
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
  let continuation: AsyncThrowingStream<TripUpdate, any Error>.Continuation
  /// The sequence of the state last sent: publishers racing each other never send an older one
  /// after a newer one.
  let lastSequence = Mutex<UInt64?>(nil)

  init(caller: Caller, view: TripView, continuation: AsyncThrowingStream<TripUpdate, any Error>.Continuation) {
    self.caller = caller
    self.view = view
    self.continuation = continuation
  }

  func send(_ snapshot: TripSnapshot, sequence: UInt64) {
    lastSequence.withLock { last in
      if let last, sequence <= last { return }
      last = sequence
      continuation.yield(TripUpdate(snapshot: snapshot, sequence: sequence))
      // A finished trip changes no more (beyond feedback): its last state ends the stream.
      if snapshot.trip.status.isTerminal { continuation.finish() }
    }
  }

  func fail(_ error: FleetError) {
    lastSequence.withLock { _ in continuation.finish(throwing: error) }
  }
}

/// The open streams per watched resource: trips (WatchTrip), tracking IDs (WatchTaskTrackingInfo).
final class Watchers<Watcher: AnyObject & Sendable>: Sendable {
  let byName = Mutex<[ResourceName: [ObjectIdentifier: Watcher]]>([:])

  func add(_ watcher: Watcher, for name: ResourceName) {
    byName.withLock { $0[name, default: [:]][ObjectIdentifier(watcher)] = watcher }
  }

  func remove(_ watcher: Watcher, for name: ResourceName) {
    byName.withLock { all in
      all[name]?.removeValue(forKey: ObjectIdentifier(watcher))
      if all[name]?.isEmpty == true { all[name] = nil }
    }
  }

  func watchers(of name: ResourceName) -> [Watcher] {
    byName.withLock { all in all[name].map { Array($0.values) } ?? [] }
  }

  /// Open streams, for metrics and tests.
  var count: Int { byName.withLock { $0.values.reduce(0) { $0 + $1.count } } }
  var isEmpty: Bool { byName.withLock { $0.isEmpty } }
}
