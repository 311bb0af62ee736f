import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import Synchronization

/// How late work starts where fleetd's requests run: on each event loop (reports, streams), in
/// the thread pool (searches, bookings, OSRM queries) and among the concurrency's threads (the
/// rest). A probe on each asks to run every `interval` and records how much later it ran. A
/// stall, something holding a loop or every thread of a pool, shows here as a spike, and a
/// warning names its time and place; request latencies alone cannot say where the time went.
struct LagService: Service {
  let metrics: LagMetrics
  let logger: Logger
  var interval: Duration = .milliseconds(100)
  /// Lateness worth a warning in the log.
  var warnAbove: Duration = .milliseconds(200)

  func run() async throws {
    let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
    let probes = loops.enumerated().map { index, loop in
      probe(loop, named: "event loop \(index)")
    }
    defer { for task in probes { task.cancel() } }
    await cancelWhenGracefulShutdown {
      await withDiscardingTaskGroup { group in
        group.addTask { await probeThreadPool() }
        group.addTask { await probeTasks() }
      }
    }
  }

  /// A repeated timer on the loop: its lateness is the loop's.
  func probe(_ loop: any EventLoop, named place: String) -> RepeatedTask {
    let delay = TimeAmount(interval)
    let expected = Mutex(NIODeadline.now() + delay)
    return loop.scheduleRepeatedTask(initialDelay: delay, delay: delay) { [metrics, logger, warnAbove] _ in
      let now = NIODeadline.now()
      let late = expected.withLock { due in
        defer { due = now + delay }
        return Duration.nanoseconds(max(0, (now - due).nanoseconds))
      }
      metrics.eventLoop.record(late)
      if late > warnAbove { Self.warn(logger, place, late) }
    }
  }

  /// A no-op handed to the thread pool: the time until it starts is its queue's wait.
  func probeThreadPool() async {
    while !Task.isCancelled {
      let asked = ContinuousClock.now
      guard let late = try? await NIOThreadPool.singleton.runIfActive({ ContinuousClock.now - asked }) else { return }
      metrics.threadPool.record(late)
      if late > warnAbove { Self.warn(logger, "the thread pool", late) }
      try? await Task.sleep(for: interval)
    }
  }

  /// A task sleeping `interval`: what it wakes past that is the wait for a thread.
  func probeTasks() async {
    while !Task.isCancelled {
      let asked = ContinuousClock.now
      try? await Task.sleep(for: interval)
      guard !Task.isCancelled else { return }
      let late = max(.zero, ContinuousClock.now - asked - interval)
      metrics.tasks.record(late)
      if late > warnAbove { Self.warn(logger, "the concurrency's threads", late) }
    }
  }

  static func warn(_ logger: Logger, _ place: String, _ late: Duration) {
    let milliseconds = late.components.seconds * 1000 + late.components.attoseconds / 1_000_000_000_000_000
    logger.warning("work on \(place) started \(milliseconds) ms late: something held it")
  }
}

/// The probes' lateness at GET /metrics.
final class LagMetrics: Sendable {
  let eventLoop: DurationHistogram
  let threadPool: DurationHistogram
  let tasks: DurationHistogram

  init(registry: PrometheusCollectorRegistry) {
    let buckets = RequestMetrics.buckets + [.seconds(2), .seconds(5)]
    eventLoop = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_event_loop_lag", unitName: "seconds",
        helpText: "How late a timer ran on an event loop (reports, streams)"),
      buckets: buckets)
    threadPool = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_thread_pool_lag", unitName: "seconds",
        helpText: "How long work waited for the thread pool (searches, bookings, OSRM queries)"),
      buckets: buckets)
    tasks = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_task_lag", unitName: "seconds",
        helpText: "How late a sleeping task woke (the concurrency's threads)"),
      buckets: buckets)
  }
}
