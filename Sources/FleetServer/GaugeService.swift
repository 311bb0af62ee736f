import FleetCore
import ServiceLifecycle

/// Reads the fleet's gauges (each surge zone, the vehicles online) every `interval` until
/// shutdown.
struct GaugeService: Service {
  let fleet: Fleet
  let surge: SurgeMetrics
  let rides: RideMetrics
  var interval: Duration = .seconds(5)

  func run() async throws {
    await cancelWhenGracefulShutdown {
      while !Task.isCancelled {
        surge.record(fleet.surgeReadings())
        rides.vehiclesOnline.set(Int64(fleet.onlineVehicleCount()))
        try? await Task.sleep(for: interval)
      }
    }
  }
}
