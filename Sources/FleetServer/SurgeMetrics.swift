import FleetCore
import Prometheus
import Synchronization

/// Each surge zone's multiplier, demand and supply at GET /metrics, read from the fleet every few
/// seconds (which also keeps each zone's smoothing moving when nobody asks for quotes).
final class SurgeMetrics: Sendable {
  struct Gauges {
    let multiplier: Gauge
    let waiting: Gauge
    let quotes: Gauge
    let free: Gauge
  }

  let registry: PrometheusCollectorRegistry
  let gauges = Mutex<[String: Gauges]>([:])

  init(registry: PrometheusCollectorRegistry) { self.registry = registry }

  func record(_ readings: [SurgeReading]) {
    for reading in readings {
      let key = reading.provider + "/" + reading.zone
      let zone = gauges.withLock { cache in
        if let zone = cache[key] { return zone }
        let labels = [("provider", reading.provider), ("zone", reading.zone)]
        func gauge(_ name: String, _ unit: String, _ help: String) -> Gauge {
          registry.makeGauge(descriptor: .init(metricName: name, unitName: unit, helpText: help), labels: labels)
        }
        let zone = Gauges(
          multiplier: gauge("fleetd_surge_multiplier", "", "The zone's surge multiplier now"),
          waiting: gauge("fleetd_surge_waiting", "rides", "Rides waiting with their pickup in the zone"),
          quotes: gauge("fleetd_surge_quotes", "", "Quotes asked in the zone within the surge window"),
          free: gauge("fleetd_surge_free", "vehicles", "Online vehicles without a trip in or near the zone"))
        cache[key] = zone
        return zone
      }
      zone.multiplier.set(reading.multiplier.doubleValue)
      zone.waiting.set(Double(reading.waitingRides))
      zone.quotes.set(Double(reading.recentQuotes))
      zone.free.set(Double(reading.freeVehicles))
    }
  }
}
