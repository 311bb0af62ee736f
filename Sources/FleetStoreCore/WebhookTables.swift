import FleetCore
import Foundation

/// The webhook tables, the same in SQLite and PostgreSQL (types both accept).
public enum WebhookTables {
  public static let statements = [
    """
    CREATE TABLE webhook_endpoints (
      id TEXT PRIMARY KEY, provider TEXT NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL,
      event_types TEXT NOT NULL, create_time DOUBLE PRECISION NOT NULL, disabled_time DOUBLE PRECISION,
      disabled_reason TEXT)
    """,
    // The outbox: each event is written in the transaction of the change that caused it, and
    // leaves it when fan-out turns it into deliveries.
    """
    CREATE TABLE webhook_events (
      id TEXT PRIMARY KEY, provider TEXT NOT NULL, type TEXT NOT NULL, subject TEXT NOT NULL,
      revision BIGINT NOT NULL, position BIGINT NOT NULL, time DOUBLE PRECISION NOT NULL, body BYTEA NOT NULL)
    """,
    // One row per event and endpoint: pending until delivered or given up.
    """
    CREATE TABLE webhook_deliveries (
      endpoint_id TEXT NOT NULL, event_id TEXT NOT NULL, subject TEXT NOT NULL, revision BIGINT NOT NULL,
      position BIGINT NOT NULL, event_time DOUBLE PRECISION NOT NULL, body BYTEA NOT NULL, state TEXT NOT NULL,
      attempts BIGINT NOT NULL DEFAULT 0, next_attempt DOUBLE PRECISION NOT NULL, last_status BIGINT,
      last_error TEXT, finished_time DOUBLE PRECISION, PRIMARY KEY (endpoint_id, event_id))
    """,
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE state = 'pending'",
    """
    CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, subject, revision, position)
      WHERE state = 'pending'
    """,
    "CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_time) WHERE state <> 'pending'",
  ]

  /// Pending deliveries due at $1 with no older pending delivery of their endpoint and subject,
  /// at most $2, the longest due first (placeholders `?` or `$n` as the store needs).
  public static func dueQuery(placeholders: (String, String)) -> String {
    """
    SELECT d.endpoint_id, d.body, d.attempts FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.next_attempt <= \(placeholders.0)
      AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries e
        WHERE e.state = 'pending' AND e.endpoint_id = d.endpoint_id AND e.subject = d.subject
          AND (e.revision < d.revision OR (e.revision = d.revision AND e.position < d.position)))
    ORDER BY d.next_attempt LIMIT \(placeholders.1)
    """
  }

  /// How a list of event types is kept: " a b " (spaces around each, for matching), "" for all.
  public static func typesColumn(_ types: [FleetEventType]) -> String {
    types.isEmpty ? "" : " " + types.map(\.rawValue).joined(separator: " ") + " "
  }

  public static func types(_ column: String) -> [FleetEventType] {
    column.split(separator: " ").compactMap { FleetEventType(rawValue: String($0)) }
  }

  /// The endpoints an outbox event goes to.
  public static func recipients(of event: EncodedEvent, among endpoints: [WebhookEndpoint]) -> [WebhookEndpoint] {
    endpoints.filter { endpoint in
      endpoint.provider == event.provider && endpoint.disabledTime == nil
        && endpoint.createTime.timeIntervalSince1970 <= event.time
        && (endpoint.eventTypes.isEmpty || endpoint.eventTypes.contains { $0.rawValue == event.type })
    }
  }
}
