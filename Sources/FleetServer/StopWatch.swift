import FleetCore
import Logging
import ServiceLifecycle

/// One of fleetd's services, with its stop watched: once a graceful shutdown has begun, it says
/// every few seconds that the service has not stopped yet, and for how long — so that a
/// shutdown that hangs names the part that holds it.
struct StopWatch: Service {
  let service: any Service
  let name: String
  let logger: Logger
  var every: Duration = .seconds(3)

  func run() async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        try await service.run()
        return true
      }
      group.addTask {
        // Never throws: a watch that ends (cancelled with its service) is no failure of the service.
        guard (try? await gracefulShutdown()) != nil else { return false }
        let began = ContinuousClock.now
        while true {
          try? await Task.sleep(for: every)
          guard !Task.isCancelled else { return false }
          logger.warning(
            "\(name) has not stopped yet",
            metadata: ["service": "\(name)", "stopping.seconds": "\((ContinuousClock.now - began).seconds)"])
        }
      }
      while let finished = try await group.next() {
        if finished {
          group.cancelAll()
          return
        }
      }
    }
  }
}
