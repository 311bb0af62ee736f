import FleetClient
import FleetCore
import Foundation
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// Delivers webhooks: moves the outbox's events into deliveries, sends each due delivery (the
/// oldest pending one of its endpoint and subject, so that a ride's events arrive in order),
/// records what became of it, and tries failures again with backoff until the retry window
/// closes. At least once: a delivery is recorded only after its answer, so one cut short by a
/// crash is sent again, with the same `webhook-id`. On a shared store one instance at a time
/// does this, under the webhook lease.
struct WebhookWorker: Sendable {
  let store: any WebhookStore
  let configuration: WebhookConfiguration
  let metrics: WebhookMetrics
  let logger: Logger

  /// Runs until cancelled.
  func run() async {
    var lastCount = ContinuousClock.now - .seconds(60)
    var lastPrune = ContinuousClock.now - .seconds(3600)
    while !Task.isCancelled {
      var busy = false
      do {
        busy = try await store.fanOutWebhookEvents(limit: 500) > 0
        let due = try await store.dueWebhookDeliveries(now: Date(), limit: configuration.concurrency)
        busy = busy || !due.isEmpty
        await deliver(due)
        if ContinuousClock.now - lastCount > .seconds(2) {
          lastCount = .now
          metrics.pending.set(Double(try await store.pendingWebhookDeliveries()))
        }
        if ContinuousClock.now - lastPrune > .seconds(3600) {
          lastPrune = .now
          try await store.pruneWebhookDeliveries(
            finishedBefore: Date().addingTimeInterval(-configuration.keepFinished.seconds))
        }
      } catch {
        // Cancelled: stopping (the loop ends), not a stall.
        guard !Task.isCancelled else { continue }
        logger.warning("webhook delivery stalled: \(error)")
        try? await Task.sleep(for: .seconds(1))
      }
      if !busy { try? await Task.sleep(for: configuration.poll) }
    }
  }

  /// Sends the deliveries concurrently and records each outcome.
  func deliver(_ due: [WebhookDelivery]) async {
    await withTaskGroup(of: Void.self) { group in
      for delivery in due {
        group.addTask {
          let outcome = await send(delivery)
          do {
            try await store.recordWebhookDelivery(delivery, outcome: outcome)
          } catch {
            // Sent again later: at least once.
            logger.warning("webhook outcome not recorded: \(error)", metadata: ["webhook.id": "\(delivery.event.id)"])
            return
          }
          metrics.record(outcome, delivery)
          if case .gone = outcome {
            logger.notice(
              "webhook endpoint disabled: it answered 410 Gone",
              metadata: ["webhook.endpoint": "\(delivery.endpoint.id)"])
          }
        }
      }
    }
  }

  /// One attempt.
  func send(_ delivery: WebhookDelivery) async -> WebhookOutcome {
    let attempts = delivery.attempts + 1
    do {
      let status = try await WebhookSender(configuration: configuration).post(
        WebhookMessage(delivery.event), to: delivery.endpoint)
      let at = Date()
      switch status {
      case 200..<300: return .delivered(status: status, at: at)
      case 410: return .gone(at: at)
      default:
        return configuration.retry.afterFailure(
          attempts: attempts, eventTime: delivery.event.time, now: at, status: status, error: "answered \(status)")
      }
    } catch {
      return configuration.retry.afterFailure(
        attempts: attempts, eventTime: delivery.event.time, now: Date(), status: nil, error: "\(error)")
    }
  }
}

/// Posts one signed message to an endpoint and returns the answer's status.
struct WebhookSender: Sendable {
  let configuration: WebhookConfiguration

  func post(_ message: WebhookMessage, to endpoint: WebhookEndpoint) async throws -> Int {
    guard let headers = message.headers(secret: endpoint.secret, now: Date()) else {
      throw FleetError(.failedPrecondition, "webhook endpoint \(endpoint.id) has a secret that is not a whsec_ secret")
    }
    var client = HTTPClient()
    client.maximumBodyBytes = 64 << 10
    if !configuration.allowPrivateTargets {
      client.addressCheck = { address in
        guard !WebhookTargets.isPrivate(address) else {
          throw FleetClientError(
            .failedPrecondition,
            "\(address) is a private, loopback or link-local address; fleetd serve --allow-private-webhooks allows it")
        }
      }
    }
    let request = HTTPClient.Request(
      method: "POST", url: endpoint.url, headers: headers, body: message.body, timeout: configuration.timeout)
    return try await client.send(request).status
  }
}

/// The webhook worker as a swift-service-lifecycle service; on a shared store it works only
/// while this instance holds the webhook lease.
struct WebhookService: Service {
  let worker: WebhookWorker
  let lease: (any Lease)?

  func run() async throws {
    await cancelWhenGracefulShutdown {
      guard let lease else { return await worker.run() }
      await lease.whileLeading(probe: .seconds(1)) { await worker.run() }
    }
  }
}

/// Webhook metrics: deliveries pending, delivered and failed, and how long events took to arrive.
final class WebhookMetrics: Sendable {
  let pending: Gauge
  let delivered: Counter
  let retried: Counter
  let failed: Counter
  let latency: DurationHistogram

  init(registry: PrometheusCollectorRegistry) {
    pending = registry.makeGauge(
      descriptor: .init(
        metricName: "fleetd_webhook_deliveries_pending", unitName: "deliveries",
        helpText: "Webhook deliveries (and outbox events) not yet delivered or given up"))
    delivered = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_webhook_deliveries_delivered", unitName: "total",
        helpText: "Webhook deliveries answered 2xx"))
    retried = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_webhook_attempts_failed", unitName: "total",
        helpText: "Webhook attempts that failed and will be tried again"))
    failed = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_webhook_deliveries_failed", unitName: "total",
        helpText: "Webhook deliveries given up (retry window passed, or the endpoint answered 410)"))
    latency = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_webhook_delivery_latency", unitName: "seconds",
        helpText: "From the change that caused an event to its delivery"),
      buckets: [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        .seconds(30), .seconds(300), .seconds(3600), .seconds(86_400),
      ])
  }

  func record(_ outcome: WebhookOutcome, _ delivery: WebhookDelivery) {
    switch outcome {
    case .delivered(_, let at):
      delivered.increment()
      latency.record(.milliseconds(Int64(max(0, at.timeIntervalSince(delivery.event.time)) * 1000)))
    case .retry: retried.increment()
    case .failed, .gone: failed.increment()
    }
  }
}
