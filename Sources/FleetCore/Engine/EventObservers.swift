import Foundation
import Synchronization

/// Who hears of the events of each write this instance commits (metrics, for one), after the
/// commit is durable. Observers run on the committing task: they must be quick.
final class EventObservers: Sendable {
  private let observers = Mutex<[@Sendable ([FleetEvent]) -> Void]>([])

  func add(_ observer: @escaping @Sendable ([FleetEvent]) -> Void) { observers.withLock { $0.append(observer) } }

  func notify(_ changes: [StoredChange]) {
    let current = observers.withLock { $0 }
    guard !current.isEmpty else { return }
    let events = changes.compactMap { change -> FleetEvent? in
      if case .putEvent(let event) = change { return event }
      return nil
    }
    guard !events.isEmpty else { return }
    for observer in current { observer(events) }
  }
}

extension Fleet {
  /// `observer` hears the events of every write this instance commits, once it is durable; with
  /// several instances, each hears its own writes' (so that counters summed over instances count
  /// each event once).
  public func observeEvents(_ observer: @escaping @Sendable ([FleetEvent]) -> Void) {
    eventObservers.add(observer)
  }

  /// Online vehicles, over every provider.
  public func onlineVehicleCount() -> Int {
    state.withLock { $0.onlineVehicles }
  }
}
