import FleetCore
import Logging
import ServiceLifecycle

/// Deletes ended trips past their retention (`Fleet.deleteExpiredTrips`) every `interval` until
/// shutdown, a batch at a time until none is due, then the tombstones past theirs
/// (`Tombstones.retention`). Every instance sharing a store sweeps: when two delete the same trip,
/// one commit is refused and the other's deletion reaches it through the change log.
struct RetentionService: Service {
  let fleet: Fleet
  let store: any FleetStore
  let logger: Logger
  var interval: Duration = .seconds(60)
  /// Tombstones purged in one transaction, so that a long backlog never holds commits back.
  static let tombstonesPerPurge = 5000

  func run() async throws {
    await cancelWhenGracefulShutdown {
      while !Task.isCancelled {
        do {
          while !Task.isCancelled, try await fleet.deleteExpiredTrips() > 0 {}
          while !Task.isCancelled,
            try await store.purgeTombstones(olderThan: Tombstones.retention, limit: Self.tombstonesPerPurge)
              == Self.tombstonesPerPurge
          {}
        } catch {
          // Cancelled: stopping (the loop ends), not a failure.
          guard !Task.isCancelled else { continue }
          logger.warning(
            "deleting expired trips or tombstones failed; trying again later", metadata: ["error": "\(error)"])
        }
        try? await Task.sleep(for: interval)
      }
    }
  }
}
