import FleetCore
import FleetDispatch
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

  /// `count` requests answered together (a message of location reports) count one each.
  func record(rpc: String, transport: String, code: String, duration: Duration, count: Int = 1) {
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
    counter.increment(by: Int64(count))
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

/// The dispatcher's rounds at GET /metrics: rides assigned, re-dispatched and given up, and
/// how long rounds take.
final class DispatchMetrics: Sendable {
  let assigned: Counter
  let released: Counter
  let expired: Counter
  let conflicts: Counter
  let reassigned: Counter
  let widened: Counter
  let waiting: Gauge
  let roundDuration: DurationHistogram

  init(registry: PrometheusCollectorRegistry) {
    assigned = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_assignments", unitName: "total", helpText: "Rides assigned to a vehicle"))
    released = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_redispatches", unitName: "total",
        helpText: "Rides taken from a vehicle that went offline or stale before the pickup"))
    expired = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_no_vehicle_found", unitName: "total", helpText: "Rides nobody could serve in time")
    )
    conflicts = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_conflicts", unitName: "total",
        helpText: "Assignments refused because the ride or vehicle changed during the round"))
    reassigned = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_reassignments", unitName: "total",
        helpText: "Rides moved before the pickup to a free car that reaches it sooner"))
    widened = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_dispatch_widened_assignments", unitName: "total",
        helpText: "Rides assigned a vehicle beyond the dispatch radius, offered as their wait widened it"))
    waiting = registry.makeGauge(
      descriptor: .init(
        metricName: "fleetd_dispatch_waiting", unitName: "rides", helpText: "Rides waiting at the last round"))
    roundDuration = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_dispatch_round_duration", unitName: "seconds", helpText: "Dispatch round time"),
      buckets: RequestMetrics.buckets + [.seconds(2), .seconds(5)])
  }

  func record(_ round: DispatchRound) {
    assigned.increment(by: Int64(round.assigned.count))
    released.increment(by: Int64(round.released.count))
    expired.increment(by: Int64(round.expired.count))
    conflicts.increment(by: Int64(round.conflicts))
    reassigned.increment(by: Int64(round.reassigned.count))
    widened.increment(by: Int64(round.assigned.count { $0.widened }))
    waiting.set(Int64(round.waiting))
    roundDuration.record(round.duration)
  }
}
