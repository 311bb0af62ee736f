import Foundation

extension Fleet {
  /// Deletes the trips that ended (COMPLETE or CANCELED) and have not changed for
  /// `FleetConfiguration.tripRetention`, each with its ride: Fleet Engine deletes trips after 7
  /// days, and so memory and the store hold a bounded history instead of every ride ever booked.
  /// At most `limit` trips a write, so that a long backlog (a first start after an upgrade) never
  /// holds the fleet's lock for long. Returns how many trips went; 0 when none is due or there is
  /// no retention.
  @discardableResult
  public func deleteExpiredTrips(limit: Int = 500) async throws(FleetError) -> Int {
    guard let retention = configuration.tripRetention else { return 0 }
    let due = state.withLock { s in s.endedTrips.first.map { $0.time <= now().addingTimeInterval(-retention) } }
    guard due == true else { return 0 }
    return try await write { s, now in
      let cutoff = now.addingTimeInterval(-retention)
      var changes: [StoredChange] = []
      var deleted = 0
      while deleted < limit, let next = s.endedTrips.first, next.time <= cutoff {
        s.endedTrips.removeFirst()
        guard let trip = s.trips[next.provider]?[next.id], trip.status.isTerminal, trip.updateTime <= cutoff else {
          continue
        }
        changes.append(s.removeTrip(provider: trip.provider, id: trip.id))
        if let ride = s.rides[trip.provider]?[trip.id], !ride.isDispatcherWatching {
          changes.append(s.removeRide(provider: ride.provider, id: ride.id))
        }
        deleted += 1
      }
      return (deleted, changes)
    }
  }
}
