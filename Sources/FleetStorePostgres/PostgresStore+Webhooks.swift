import FleetCore
import FleetStoreCore
import Foundation
import NIOCore
import PostgresNIO

extension PostgresStore {
  public func webhookEndpoints() async throws -> [WebhookEndpoint] {
    try await Self.endpoints(client.query(Self.endpointsQuery, logger: logger))
  }

  static let endpointsQuery: PostgresQuery = """
    SELECT id, provider, url, secret, event_types, create_time, disabled_time, disabled_reason
    FROM webhook_endpoints ORDER BY create_time, id
    """

  static func endpoints(_ rows: PostgresRowSequence) async throws -> [WebhookEndpoint] {
    var endpoints: [WebhookEndpoint] = []
    for try await (id, provider, url, secret, types, created, disabled, reason) in rows.decode(
      (String, String, String, String, String, Double, Double?, String?).self)
    {
      guard let url = URL(string: url) else { continue }
      endpoints.append(
        WebhookEndpoint(
          id: id, provider: provider, url: url, secret: secret, eventTypes: WebhookTables.types(types),
          createTime: Date(timeIntervalSince1970: created),
          disabledTime: disabled.map { Date(timeIntervalSince1970: $0) }, disabledReason: reason))
    }
    return endpoints
  }

  public func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws {
    try await client.query(
      """
      INSERT INTO webhook_endpoints (id, provider, url, secret, event_types, create_time, disabled_time, disabled_reason)
      VALUES (\(endpoint.id), \(endpoint.provider), \(endpoint.url.absoluteString), \(endpoint.secret),
        \(WebhookTables.typesColumn(endpoint.eventTypes)), \(endpoint.createTime.timeIntervalSince1970),
        \(endpoint.disabledTime?.timeIntervalSince1970), \(endpoint.disabledReason))
      ON CONFLICT (id) DO UPDATE SET url = excluded.url, event_types = excluded.event_types,
        disabled_time = excluded.disabled_time, disabled_reason = excluded.disabled_reason
      """, logger: logger)
  }

  public func removeWebhookEndpoint(id: String) async throws -> Bool {
    try await Self.transaction(client, logger: logger) { connection in
      try await connection.query("DELETE FROM webhook_deliveries WHERE endpoint_id = \(id)", logger: logger)
      let rows = try await connection.query(
        "DELETE FROM webhook_endpoints WHERE id = \(id) RETURNING id", logger: logger)
      var removed = false
      for try await _ in rows.decode(String.self) { removed = true }
      return removed
    }
  }

  public func fanOutWebhookEvents(limit: Int) async throws -> Int {
    try await bounded("the webhook outbox") { [self] in
      // Looked for first outside a transaction: an idle worker's every poll need not lock.
      for try await any in try await client.query("SELECT EXISTS (SELECT 1 FROM webhook_events)", logger: logger)
        .decode(Bool.self)
      {
        guard any else { return 0 }
      }
      return try await Self.bookkeeping(client, logger: logger) { connection in
        let endpoints = try await Self.endpoints(connection.query(Self.endpointsQuery, logger: logger))
        // Locked rows are another instance's fan-out (between two leases): skipped, not waited for.
        let rows = try await connection.query(
          """
          SELECT id, provider, type, subject, revision, position, time, body FROM webhook_events
          ORDER BY revision, position LIMIT \(limit) FOR UPDATE SKIP LOCKED
          """, logger: logger)
        var events: [EncodedEvent] = []
        for try await (id, provider, type, subject, revision, position, time, body) in rows.decode(
          (String, String, String, String, Int64, Int64, Double, ByteBuffer).self)
        {
          events.append(
            EncodedEvent(
              id: id, provider: provider, type: type, subject: subject, revision: UInt64(revision),
              position: Int(position), time: time, body: Data(buffer: body)))
        }
        guard !events.isEmpty else { return 0 }
        var columns = DeliveryColumns()
        for event in events {
          for endpoint in WebhookTables.recipients(of: event, among: endpoints) { columns.append(endpoint.id, event) }
        }
        if !columns.endpoints.isEmpty {
          try await connection.query(
            """
            INSERT INTO webhook_deliveries
              (endpoint_id, event_id, subject, revision, position, event_time, body, state, next_attempt)
            SELECT e, i, s, r, p, t, b, 'pending', t FROM unnest(\(columns.endpoints)::text[], \(columns.events)::text[],
              \(columns.subjects)::text[], \(columns.revisions)::int8[], \(columns.positions)::int8[],
              \(columns.times)::float8[], \(columns.bodies)::bytea[]) AS d(e, i, s, r, p, t, b)
            ON CONFLICT DO NOTHING
            """, logger: logger)
        }
        let ids = events.map(\.id)
        try await connection.query("DELETE FROM webhook_events WHERE id = ANY(\(ids)::text[])", logger: logger)
        return events.count
      }
    }
  }

  struct DeliveryColumns {
    var endpoints: [String] = []
    var events: [String] = []
    var subjects: [String] = []
    var revisions: [Int64] = []
    var positions: [Int64] = []
    var times: [Double] = []
    var bodies: [ByteBuffer] = []

    mutating func append(_ endpoint: String, _ event: EncodedEvent) {
      endpoints.append(endpoint)
      events.append(event.id)
      subjects.append(event.subject)
      revisions.append(Int64(event.revision))
      positions.append(Int64(event.position))
      times.append(event.time)
      bodies.append(ByteBuffer(bytes: event.body))
    }
  }

  public func dueWebhookDeliveries(now: Date, limit: Int) async throws -> [WebhookDelivery] {
    try await bounded("the due webhook deliveries") { [self] in
      let endpoints = Dictionary(try await webhookEndpoints().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
      var bindings = PostgresBindings(capacity: 2)
      bindings.append(now.timeIntervalSince1970)
      bindings.append(Int64(limit))
      let rows = try await client.query(
        PostgresQuery(unsafeSQL: WebhookTables.dueQuery(placeholders: ("$1", "$2")), binds: bindings), logger: logger)
      var due: [WebhookDelivery] = []
      for try await (endpointID, body, attempts) in rows.decode((String, ByteBuffer, Int64).self) {
        guard let endpoint = endpoints[endpointID] else { continue }
        due.append(
          WebhookDelivery(
            endpoint: endpoint, event: try StoredRows.event(from: Data(buffer: body)), attempts: Int(attempts)))
      }
      return due
    }
  }

  public func recordWebhookDelivery(_ delivery: WebhookDelivery, outcome: WebhookOutcome) async throws {
    try await bounded("a webhook outcome") { [self] in
      let (endpointID, eventID) = (delivery.endpoint.id, delivery.event.id)
      try await Self.bookkeeping(client, logger: logger) { connection in
        switch outcome {
        case .delivered(let status, let at):
          // An endpoint that answered is reachable again: its deliveries that failed for want of an
          // answer (refused, unreachable, timed out) are due now, so that a recovered endpoint gets
          // its backlog at once rather than over the next hour. One it answered with an error keeps
          // its backoff.
          try await connection.query(
            """
            WITH delivered AS (
              UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1,
                last_status = \(Int64(status)), last_error = NULL, finished_time = \(at.timeIntervalSince1970)
              WHERE endpoint_id = \(endpointID) AND event_id = \(eventID))
            UPDATE webhook_deliveries SET next_attempt = \(at.timeIntervalSince1970)
            WHERE endpoint_id = \(endpointID) AND event_id <> \(eventID) AND state = 'pending' AND attempts > 0 AND last_status IS NULL
              AND next_attempt > \(at.timeIntervalSince1970)
            """, logger: logger)
        case .retry(let next, let status, let error):
          try await connection.query(
            """
            UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt = \(next.timeIntervalSince1970),
              last_status = \(status.map(Int64.init)), last_error = \(error)
            WHERE endpoint_id = \(endpointID) AND event_id = \(eventID)
            """, logger: logger)
        case .failed(let status, let error, let at):
          try await connection.query(
            """
            UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, last_status = \(status.map(Int64.init)),
              last_error = \(error), finished_time = \(at.timeIntervalSince1970)
            WHERE endpoint_id = \(endpointID) AND event_id = \(eventID)
            """, logger: logger)
        case .gone(let at):
          try await connection.query(
            """
            UPDATE webhook_endpoints SET disabled_time = \(at.timeIntervalSince1970), disabled_reason = '410 Gone'
            WHERE id = \(endpointID)
            """, logger: logger)
          try await connection.query(
            """
            UPDATE webhook_deliveries SET state = 'failed', last_status = 410,
              last_error = 'the endpoint answered 410 Gone and was disabled', finished_time = \(at.timeIntervalSince1970),
              attempts = attempts + CASE WHEN event_id = \(eventID) THEN 1 ELSE 0 END
            WHERE endpoint_id = \(endpointID) AND state = 'pending'
            """, logger: logger)
        }
      }
    }
  }

  public func webhookDeliveryCounts() async throws -> WebhookCounts {
    var counts = WebhookCounts()
    let rows = try await client.query(
      """
      SELECT state, COUNT(*) FROM webhook_deliveries GROUP BY state
      UNION ALL SELECT 'pending', COUNT(*) FROM webhook_events
      """, logger: logger)
    for try await (state, n) in rows.decode((String, Int64).self) {
      switch state {
      case "pending": counts.pending += Int(n)
      case "delivered": counts.delivered += Int(n)
      default: counts.failed += Int(n)
      }
    }
    return counts
  }

  public func pendingWebhookDeliveries() async throws -> Int {
    try await bounded("the pending webhook count") { [self] in
      let rows = try await client.query(
        """
        SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending') + (SELECT COUNT(*) FROM webhook_events)
        """, logger: logger)
      for try await n in rows.decode(Int64.self) { return Int(n) }
      return 0
    }
  }

  public func pruneWebhookDeliveries(finishedBefore date: Date) async throws {
    try await bounded("the webhook pruning") { [self] in
      try await client.query(
        "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_time < \(date.timeIntervalSince1970)",
        logger: logger)
    }
  }
}

extension PostgresStore {
  /// A transaction of the webhook worker's own bookkeeping (an event fanned out to deliveries, a
  /// delivery's outcome), committed without waiting for the WAL to reach the disk: a crash of the
  /// server can lose only the last few, and then an event is fanned out again (ON CONFLICT DO
  /// NOTHING) or a delivery is sent again under its webhook-id, which at-least-once allows; the
  /// events themselves were committed with the changes that made them. So a busy disk's flushes
  /// do not hold up the worker, and the deliveries queued behind it.
  static func bookkeeping<T>(
    _ client: PostgresClient, logger: Logger, _ body: (PostgresConnection) async throws -> T
  ) async throws -> T {
    try await transaction(client, logger: logger) { connection in
      try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
      return try await body(connection)
    }
  }

  /// The webhook worker's calls are bounded: the pool waits for a server that is down rather than
  /// fail, and a worker stuck in such a wait would hold its lease and its instance's shutdown.
  @discardableResult func bounded<T: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> T)
    async throws -> T
  {
    try await TimeLimit.run(
      .seconds(10), PostgresStoreError.failed("\(what) did not answer within 10 s (was the connection lost?)"), body)
  }
}
