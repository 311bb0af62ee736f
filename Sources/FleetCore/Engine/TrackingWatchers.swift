import Foundation
import Synchronization

/// An open WatchTaskTrackingInfo stream: the shipment's tracking info now and after each change
/// to it (newest first when the reader falls behind), and `stop()` for the transport.
public struct TrackingWatch: Sendable {
  public let updates: AsyncThrowingStream<TaskTrackingInfo, any Error>
  let stopping: @Sendable () -> Void

  init(updates: AsyncThrowingStream<TaskTrackingInfo, any Error>, stop: @escaping @Sendable () -> Void) {
    self.updates = updates
    self.stopping = stop
  }

  /// Ends the stream and forgets the watcher; idempotent.
  public func stop() { stopping() }
}

/// One open tracking stream.
final class TrackingWatcher: Sendable {
  let caller: Caller
  let continuation: AsyncThrowingStream<TaskTrackingInfo, any Error>.Continuation
  /// What was sent last, with the fleet's change sequence it was read at: an unchanged info is
  /// not sent again, and publishers racing each other never send an older one after a newer one.
  let last = Mutex<(info: TaskTrackingInfo, sequence: UInt64)?>(nil)

  init(caller: Caller, continuation: AsyncThrowingStream<TaskTrackingInfo, any Error>.Continuation) {
    self.caller = caller
    self.continuation = continuation
  }

  func send(_ info: TaskTrackingInfo, sequence: UInt64) {
    last.withLock { last in
      if let last, sequence <= last.sequence || last.info == info { return }
      last = (info, sequence)
      continuation.yield(info)
      // A closed shipment changes no more: its last state ends the stream.
      if info.state == .closed { continuation.finish() }
    }
  }

  func fail(_ error: FleetError) {
    last.withLock { _ in continuation.finish(throwing: error) }
  }
}

extension Fleet {
  /// The tracking IDs whose info a committed change may have moved: its tasks', and those of
  /// the tasks on the stops of the delivery vehicles it put.
  func trackingNames(touchedBy changes: [StoredChange]) -> Set<ResourceName> {
    guard !trackingWatchers.isEmpty else { return [] }
    return state.withLock { s in
      var names = Set<ResourceName>()
      func add(_ task: DeliveryTask?) {
        guard let task, !task.trackingID.isEmpty else { return }
        names.insert(ResourceName(provider: task.provider, kind: .taskTrackingInfo, id: task.trackingID))
      }
      for change in changes {
        switch change {
        case .putTask(let task): add(task)
        case .putDeliveryVehicle(let vehicle):
          for id in vehicle.taskIDs { add(s.tasks[vehicle.provider]?[id]) }
        default: break
        }
      }
      return names
    }
  }

  /// Sends each watched shipment's tracking info to its watchers.
  func publishTracking(_ names: Set<ResourceName>) {
    let now = now()
    for name in names {
      let watching = trackingWatchers.watchers(of: name)
      guard !watching.isEmpty else { continue }
      let (outcome, sequence) = state.withLock { s in
        (
          Result { () throws(FleetError) in
            try Self.trackingInfo(provider: name.provider, trackingID: name.id, in: s, now: now)
          },
          s.sequence
        )
      }
      for watcher in watching {
        switch outcome {
        case .success(let info): watcher.send(info, sequence: sequence)
        case .failure(let error): watcher.fail(error)
        }
      }
    }
  }
}
