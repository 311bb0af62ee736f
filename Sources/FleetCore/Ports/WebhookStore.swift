import Foundation

/// The store port of webhooks: endpoints, and the outbox the fleet's commits write events into
/// (`StoredChange.putEvent`). Events become deliveries, one per endpoint that receives them;
/// deliveries go out oldest first per endpoint and subject, so that a ride's events arrive in
/// order, and at least once.
public protocol WebhookStore: Sendable {
  func webhookEndpoints() async throws -> [WebhookEndpoint]
  func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws
  /// False when there was none with that ID.
  func removeWebhookEndpoint(id: String) async throws -> Bool
  /// Moves up to `limit` outbox events into deliveries: one for each endpoint of its provider
  /// that receives its type, is enabled and existed when it happened. Returns the events taken.
  func fanOutWebhookEvents(limit: Int) async throws -> Int
  /// Pending deliveries due at `now`, at most `limit`, each the oldest pending one of its
  /// endpoint and subject.
  func dueWebhookDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery]
  func recordWebhookDelivery(_ delivery: WebhookDelivery, outcome: WebhookOutcome) async throws
  /// Deliveries in each state (a full count: for `fleetd webhooks list`).
  func webhookDeliveryCounts() async throws -> WebhookCounts
  /// Pending deliveries and outbox events (an indexed count: for metrics).
  func pendingWebhookDeliveries() async throws -> Int
  /// Forgets delivered and failed deliveries finished before `date`.
  func pruneWebhookDeliveries(finishedBefore date: Date) async throws
}
