import FleetCore
import FleetStoreCore
import Foundation
import GRDB

extension SQLiteStore {
  public func webhookEndpoints() async throws -> [WebhookEndpoint] {
    try await pool.read { db in try Self.endpoints(db) }
  }

  static func endpoints(_ db: Database) throws -> [WebhookEndpoint] {
    try Row.fetchAll(db, sql: "SELECT * FROM webhook_endpoints ORDER BY create_time, id").compactMap { row in
      guard let url = URL(string: row["url"]) else { return nil }
      return WebhookEndpoint(
        id: row["id"], provider: row["provider"], url: url, secret: row["secret"],
        eventTypes: WebhookTables.types(row["event_types"]),
        createTime: Date(timeIntervalSince1970: row["create_time"]),
        disabledTime: (row["disabled_time"] as Double?).map { Date(timeIntervalSince1970: $0) },
        disabledReason: row["disabled_reason"])
    }
  }

  public func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws {
    try await pool.write { db in
      try db.execute(
        sql: """
          INSERT INTO webhook_endpoints (id, provider, url, secret, event_types, create_time, disabled_time, disabled_reason)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET url = excluded.url, event_types = excluded.event_types,
            disabled_time = excluded.disabled_time, disabled_reason = excluded.disabled_reason
          """,
        arguments: [
          endpoint.id, endpoint.provider, endpoint.url.absoluteString, endpoint.secret,
          WebhookTables.typesColumn(endpoint.eventTypes), endpoint.createTime.timeIntervalSince1970,
          endpoint.disabledTime?.timeIntervalSince1970, endpoint.disabledReason,
        ])
    }
  }

  public func removeWebhookEndpoint(id: String) async throws -> Bool {
    try await pool.write { db in
      try db.execute(sql: "DELETE FROM webhook_deliveries WHERE endpoint_id = ?", arguments: [id])
      try db.execute(sql: "DELETE FROM webhook_endpoints WHERE id = ?", arguments: [id])
      return db.changesCount > 0
    }
  }

  public func fanOutWebhookEvents(limit: Int) async throws -> Int {
    // Looked for first in a read: an idle worker's every poll need not be a write transaction.
    guard
      try await pool.read({ db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM webhook_events)") })
        == true
    else { return 0 }
    return try await pool.write { db in
      let endpoints = try Self.endpoints(db)
      let rows = try Row.fetchAll(
        db, sql: "SELECT * FROM webhook_events ORDER BY revision, position LIMIT ?", arguments: [limit])
      for row in rows {
        let event = EncodedEvent(
          id: row["id"], provider: row["provider"], type: row["type"], subject: row["subject"],
          revision: UInt64(row["revision"] as Int64), position: row["position"], time: row["time"], body: row["body"])
        for endpoint in WebhookTables.recipients(of: event, among: endpoints) {
          try db.cachedStatement(
            sql: """
              INSERT INTO webhook_deliveries
                (endpoint_id, event_id, subject, revision, position, event_time, body, state, next_attempt)
              VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING
              """
          ).execute(arguments: [
            endpoint.id, event.id, event.subject, Int64(event.revision), event.position, event.time, event.body,
            event.time,
          ])
        }
        try db.cachedStatement(sql: "DELETE FROM webhook_events WHERE id = ?").execute(arguments: [event.id])
      }
      return rows.count
    }
  }

  public func dueWebhookDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery] {
    try await pool.read { db in
      let endpoints = Dictionary(try Self.endpoints(db).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
      return try Row.fetchAll(
        db, sql: WebhookTables.dueQuery(placeholders: ("?", "?")),
        arguments: [now.timeIntervalSince1970, limit]
      ).compactMap { row in
        guard let endpoint = endpoints[row["endpoint_id"]] else { return nil }
        return WebhookDelivery(
          endpoint: endpoint, event: try StoredRows.event(from: row["body"]), attempts: Int(row["attempts"] as Int64))
      }
    }
  }

  public func recordWebhookDelivery(_ delivery: WebhookDelivery, outcome: WebhookOutcome) async throws {
    let (endpointID, eventID) = (delivery.endpoint.id, delivery.event.id)
    try await pool.write { db in
      let key: [(any DatabaseValueConvertible)?] = [endpointID, eventID]
      switch outcome {
      case .delivered(let status, let at):
        try db.execute(
          sql: """
            UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, last_status = ?,
              last_error = NULL, finished_time = ? WHERE endpoint_id = ? AND event_id = ?
            """, arguments: StatementArguments([status, at.timeIntervalSince1970] + key))
        try Self.endpointAnswered(db, endpointID, at: at)
      case .retry(let next, let status, let error):
        try db.execute(
          sql: """
            UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt = ?, last_status = ?, last_error = ?
            WHERE endpoint_id = ? AND event_id = ?
            """, arguments: StatementArguments([next.timeIntervalSince1970, status, error] + key))
      case .failed(let status, let error, let at):
        try db.execute(
          sql: """
            UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, last_status = ?, last_error = ?,
              finished_time = ? WHERE endpoint_id = ? AND event_id = ?
            """, arguments: StatementArguments([status, error, at.timeIntervalSince1970] + key))
      case .gone(let at):
        try db.execute(
          sql: """
            UPDATE webhook_endpoints SET disabled_time = ?, disabled_reason = '410 Gone' WHERE id = ?
            """, arguments: [at.timeIntervalSince1970, endpointID])
        try db.execute(
          sql: """
            UPDATE webhook_deliveries SET state = 'failed', last_status = 410,
              last_error = 'the endpoint answered 410 Gone and was disabled', finished_time = ?,
              attempts = attempts + CASE WHEN event_id = ? THEN 1 ELSE 0 END
            WHERE endpoint_id = ? AND state = 'pending'
            """, arguments: [at.timeIntervalSince1970, eventID, endpointID])
      }
    }
  }

  /// An endpoint that answered is reachable again: its deliveries that failed for want of
  /// an answer (refused, unreachable, timed out) are due now, so that a recovered endpoint gets its
  /// backlog at once rather than over the next hour. One it answered with an error keeps its backoff.
  static func endpointAnswered(_ db: Database, _ endpointID: String, at: Date) throws {
    try db.execute(
      sql: """
        UPDATE webhook_deliveries SET next_attempt = ?
        WHERE endpoint_id = ? AND state = 'pending' AND attempts > 0 AND last_status IS NULL AND next_attempt > ?
        """, arguments: [at.timeIntervalSince1970, endpointID, at.timeIntervalSince1970])
  }

  public func webhookDeliveryCounts() async throws -> WebhookCounts {
    try await pool.read { db in
      var counts = WebhookCounts()
      for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS n FROM webhook_deliveries GROUP BY state") {
        let n = Int(row["n"] as Int64)
        switch row["state"] as String {
        case "pending": counts.pending = n
        case "delivered": counts.delivered = n
        default: counts.failed += n
        }
      }
      counts.pending += try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM webhook_events") ?? 0
      return counts
    }
  }

  public func pendingWebhookDeliveries() async throws -> Int {
    try await pool.read { db in
      try Int.fetchOne(
        db,
        sql: """
          SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending')
            + (SELECT COUNT(*) FROM webhook_events)
          """) ?? 0
    }
  }

  public func pruneWebhookDeliveries(finishedBefore date: Date) async throws {
    try await pool.write { db in
      try db.execute(
        sql: "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_time < ?",
        arguments: [date.timeIntervalSince1970])
    }
  }
}
