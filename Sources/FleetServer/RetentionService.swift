import FleetCore
import Logging
import ServiceLifecycle

/// Deletes ended trips past their retention (`Fleet.deleteExpiredTrips`) every `interval` until
/// shutdown, a batch at a time until none is due. Every instance sharing a store sweeps: when two
/// delete the same trip, one commit is refused and the other's deletion reaches it through the
/// change log.
struct RetentionService: Service {
  let fleet: Fleet
  let logger: Logger
  var interval: Duration = .seconds(60)

  func run() async throws {
    await cancelWhenGracefulShutdown {
      while !Task.isCancelled {
        do {
          while !Task.isCancelled, try await fleet.deleteExpiredTrips() > 0 {}
        } catch {
          logger.warning("deleting expired trips failed; trying again later", metadata: ["error": "\(error)"])
        }
        try? await Task.sleep(for: interval)
      }
    }
  }
}
