import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import Synchronization

/// Puts the fleet's traffic into every road choice: every `interval`, the speeds trip progress
/// has learned re-customize the routing hierarchy (on a thread of its own, taking at most `share`
/// of a core: queries go on reading the previous metric and never wait), and what was learned
/// about the usual traffic of each time of the week goes to the store. At start it reads that
/// back, so that departures at other times are timed with it; at shutdown it saves what is left.
struct TrafficService: Service {
  let routing: RoutingEngine
  let traffic: TrafficModel
  let store: any TrafficProfileStore
  let interval: Duration
  let metrics: TrafficMetricsRecorder
  let logger: Logger

  func run() async throws {
    let graph = routing.network.fingerprint
    if let weekly = traffic.weekly {
      do {
        let entries = try await store.trafficProfile(graph: graph)
        weekly.load(entries)
        logger.notice("usual traffic loaded", metadata: ["traffic.entries": "\(entries.count)", "graph": "\(graph)"])
      } catch {
        logger.warning("reading the usual traffic failed; starting without it", metadata: ["error": "\(error)"])
      }
      routing.useTrafficProfiles(weekly)
    }
    await cancelWhenGracefulShutdown {
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        guard !Task.isCancelled else { break }
        await customize()
        await save(graph: graph)
      }
    }
    await save(graph: graph)
  }

  /// One customization with what is learned now; skipped while there is no traffic and none
  /// was customized before.
  func customize() async {
    let roads = routing.network.edges.count * 2
    let slowdowns = traffic.slowdowns(at: Date(), roads: roads)
    guard !(slowdowns.isFreeFlow && routing.currentSlowdowns.isFreeFlow) else { return }
    // fleetd waits for a customization under way when it stops: that one no longer rests.
    let stopping = Flag()
    let pace = CustomizationPace(share: Self.share) { stopping.raised.load(ordering: .relaxed) }
    let run = await withTaskCancellationHandler {
      await onDedicatedThread(named: "traffic customization") { routing.customize(slowdowns, pace: pace) }
    } onCancel: {
      stopping.raised.store(true, ordering: .relaxed)
    }
    metrics.record(customization: run.worked, slowedRoads: slowdowns.slowedRoads)
    logger.debug(
      "traffic customized",
      metadata: [
        "traffic.roads": "\(slowdowns.slowedRoads)", "traffic.work": "\(run.worked)",
        "traffic.rested": "\(run.rested)",
      ])
  }

  /// A customization takes at most a quarter of one core: on a metro its half second to a second
  /// of work then spans two to four seconds of the interval, and the event loops keep the rest of
  /// the machine (docs/benchmarks.md, "Customizations paced").
  static let share = 0.25

  /// Raised once, from the task that waits for the customization; read on its thread.
  final class Flag: Sendable {
    let raised = Atomic<Bool>(false)
  }

  func save(graph: String) async {
    guard let weekly = traffic.weekly else { return }
    let changes = weekly.takeChanges()
    guard !changes.isEmpty else { return }
    do {
      try await store.saveTrafficProfile(graph: graph, changes)
    } catch {
      weekly.keepChanges(changes)
      logger.warning("saving the usual traffic failed; trying again later", metadata: ["error": "\(error)"])
    }
  }
}

/// `fleetd_traffic_customization_seconds` (histogram) and `fleetd_traffic_slowed_roads` (gauge).
struct TrafficMetricsRecorder: Sendable {
  let customization: DurationHistogram
  let slowedRoads: Gauge

  init(registry: PrometheusCollectorRegistry) {
    customization = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_traffic_customization", unitName: "seconds",
        helpText: "Re-customizing the routing hierarchy with learned traffic: its work, without the rests of its pace"),
      buckets: [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2),
        .seconds(5),
      ])
    slowedRoads = registry.makeGauge(
      descriptor: .init(
        metricName: "fleetd_traffic_slowed", unitName: "roads",
        helpText: "Directed roads slower than free flow at the last customization"))
  }

  func record(customization elapsed: Duration, slowedRoads count: Int) {
    customization.record(elapsed)
    slowedRoads.set(Int64(count))
  }
}
