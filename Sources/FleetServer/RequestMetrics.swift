import FleetCore
import Prometheus
import Synchronization

/// Requests, latency and status per RPC, exposed at GET /metrics.
final class RequestMetrics: Sendable {
  let registry: PrometheusCollectorRegistry
  let counters = Mutex<[String: Counter]>([:])
  let histograms = Mutex<[String: DurationHistogram]>([:])
  static let buckets: [Duration] = [
    .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
    .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
  ]

  init(registry: PrometheusCollectorRegistry) { self.registry = registry }

  func record(rpc: String, transport: String, code: String, duration: Duration) {
    let key = "\(rpc)|\(transport)|\(code)"
    let counter = counters.withLock { cache in
      if let c = cache[key] { return c }
      let c = registry.makeCounter(
        descriptor: .init(
          metricName: "fleetd_requests", unitName: "total", helpText: "Requests by RPC, transport and status"),
        labels: [("rpc", rpc), ("transport", transport), ("code", code)])
      cache[key] = c
      return c
    }
    counter.increment()
    let histogram = histograms.withLock { cache in
      if let h = cache[rpc] { return h }
      let h = registry.makeDurationHistogram(
        descriptor: .init(
          metricName: "fleetd_request_duration", unitName: "seconds", helpText: "Request latency by RPC"),
        labels: [("rpc", rpc)], buckets: Self.buckets)
      cache[rpc] = h
      return h
    }
    histogram.record(duration)
  }
}
