import FleetCore
import FleetTestSupport
import Foundation
import Testing

@Suite("Webhook outbox and deliveries")
struct WebhookStoreTests {
  let t0 = Date(timeIntervalSince1970: 1_800_000_000)

  func event(_ type: FleetEventType, ride: String, revision: UInt64, provider: String = "p") -> FleetEvent {
    var r = Ride(provider: provider, id: ride, request: RideRequest())
    r.revision = revision
    return FleetEvent(
      id: "msg_\(ride)_\(revision)", type: type, provider: provider,
      subject: EntityKey(.ride, provider: provider, id: ride), revision: revision, position: 0,
      time: t0.addingTimeInterval(Double(revision)), payload: .ride(RideView(ride: r, state: .waiting, vehicleID: "")))
  }

  func endpoint(_ id: String, provider: String = "p", types: [FleetEventType] = [], created: Date) -> WebhookEndpoint {
    WebhookEndpoint(
      id: id, provider: provider, url: URL(string: "https://example.com/\(id)")!, secret: "whsec_c2VjcmV0",
      eventTypes: types, createTime: created)
  }

  @Test(arguments: StoreKind.allCases)
  func eventsFanOutToTheirEndpointsAndGoOutInOrderPerSubject(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      try await store.saveWebhookEndpoint(endpoint("all", created: t0))
      try await store.saveWebhookEndpoint(endpoint("completed", types: [.rideCompleted], created: t0))
      try await store.saveWebhookEndpoint(endpoint("other", provider: "q", created: t0))
      try await store.saveWebhookEndpoint(endpoint("late", created: t0.addingTimeInterval(1000)))
      try await store.commit([
        .putEvent(event(.rideCreated, ride: "a", revision: 1)), .putEvent(event(.rideCreated, ride: "b", revision: 2)),
      ])
      try await store.commit([
        .putEvent(event(.rideAssigned, ride: "a", revision: 3)),
        .putEvent(event(.rideCompleted, ride: "a", revision: 4)),
      ])
      #expect(try await store.pendingWebhookDeliveries() == 4, "in the outbox")
      #expect(try await store.fanOutWebhookEvents(limit: 3) == 3)
      #expect(try await store.fanOutWebhookEvents(limit: 3) == 1)
      #expect(try await store.fanOutWebhookEvents(limit: 3) == 0)
      #expect(try await store.pendingWebhookDeliveries() == 5, "4 to 'all', 1 to 'completed'")

      let now = t0.addingTimeInterval(100)
      var due = try await store.dueWebhookDeliveries(now: now, limit: 10)
      #expect(
        Set(due.map { "\($0.endpoint.id) \($0.event.id)" }) == [
          "all msg_a_1", "all msg_b_2", "completed msg_a_4",
        ], "each the oldest pending of its endpoint and subject")
      let a1 = try #require(due.first { $0.endpoint.id == "all" && $0.event.id == "msg_a_1" })
      #expect(a1.event.type == .rideCreated && a1.attempts == 0)
      try await store.recordWebhookDelivery(
        a1, outcome: .retry(next: now.addingTimeInterval(60), status: 503, error: "answered 503"))
      for delivery in due where delivery != a1 {
        try await store.recordWebhookDelivery(delivery, outcome: .delivered(status: 204, at: now))
      }
      due = try await store.dueWebhookDeliveries(now: now, limit: 10)
      #expect(due.isEmpty, "a's next events wait behind its first, which waits for its retry")
      due = try await store.dueWebhookDeliveries(now: now.addingTimeInterval(61), limit: 10)
      #expect(due.map(\.event.id) == ["msg_a_1"])
      #expect(due.first?.attempts == 1)
      try await store.recordWebhookDelivery(due[0], outcome: .delivered(status: 200, at: now.addingTimeInterval(61)))
      due = try await store.dueWebhookDeliveries(now: now.addingTimeInterval(61), limit: 10)
      #expect(due.map(\.event.id) == ["msg_a_3"])
      let counts = try await store.webhookDeliveryCounts()
      #expect(counts == WebhookCounts(pending: 2, delivered: 3, failed: 0))
    }
  }

  @Test(arguments: StoreKind.allCases)
  func goneDisablesTheEndpointAndGivesUpItsDeliveries(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      try await store.saveWebhookEndpoint(endpoint("ep", created: t0))
      try await store.commit([
        .putEvent(event(.rideCreated, ride: "a", revision: 1)), .putEvent(event(.rideCreated, ride: "b", revision: 2)),
      ])
      _ = try await store.fanOutWebhookEvents(limit: 10)
      let due = try await store.dueWebhookDeliveries(now: t0.addingTimeInterval(10), limit: 10)
      try await store.recordWebhookDelivery(due[0], outcome: .gone(at: t0.addingTimeInterval(10)))
      let endpoints = try await store.webhookEndpoints()
      #expect(endpoints.first?.disabledReason == "410 Gone")
      #expect(try await store.dueWebhookDeliveries(now: t0.addingTimeInterval(20), limit: 10).isEmpty)
      #expect(try await store.webhookDeliveryCounts() == WebhookCounts(pending: 0, delivered: 0, failed: 2))
      // A disabled endpoint gets no new deliveries; pruning forgets finished ones.
      try await store.commit([.putEvent(event(.rideCreated, ride: "c", revision: 3))])
      _ = try await store.fanOutWebhookEvents(limit: 10)
      #expect(try await store.webhookDeliveryCounts() == WebhookCounts(pending: 0, delivered: 0, failed: 2))
      try await store.pruneWebhookDeliveries(finishedBefore: t0.addingTimeInterval(11))
      #expect(try await store.webhookDeliveryCounts() == WebhookCounts())
      #expect(try await store.removeWebhookEndpoint(id: "ep"))
      #expect(try await store.removeWebhookEndpoint(id: "ep") == false)
      #expect(try await store.webhookEndpoints().isEmpty)
    }
  }

  /// The receiver was down: deliveries that got no answer back off; the first answer makes them
  /// due at once. One the endpoint answered with an error keeps its backoff.
  @Test(arguments: StoreKind.allCases)
  func anEndpointThatAnswersAgainGetsItsUnansweredBacklogAtOnce(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      try await store.saveWebhookEndpoint(endpoint("ep", created: t0))
      try await store.commit([
        .putEvent(event(.rideCreated, ride: "down", revision: 1)),
        .putEvent(event(.rideCreated, ride: "refused", revision: 2)),
      ])
      _ = try await store.fanOutWebhookEvents(limit: 10)
      let now = t0.addingTimeInterval(10)
      for delivery in try await store.dueWebhookDeliveries(now: now, limit: 10) {
        let answered = delivery.event.id == "msg_refused_2"
        try await store.recordWebhookDelivery(
          delivery,
          outcome: .retry(
            next: now.addingTimeInterval(600), status: answered ? 500 : nil,
            error: answered ? "answered 500" : "connection refused"))
      }
      #expect(try await store.dueWebhookDeliveries(now: now.addingTimeInterval(1), limit: 10).isEmpty)
      try await store.commit([.putEvent(event(.rideCreated, ride: "new", revision: 3))])
      _ = try await store.fanOutWebhookEvents(limit: 10)
      let fresh = try await store.dueWebhookDeliveries(now: now.addingTimeInterval(2), limit: 10)
      #expect(fresh.map(\.event.id) == ["msg_new_3"])
      try await store.recordWebhookDelivery(fresh[0], outcome: .delivered(status: 204, at: now.addingTimeInterval(2)))
      let due = try await store.dueWebhookDeliveries(now: now.addingTimeInterval(3), limit: 10)
      #expect(due.map(\.event.id) == ["msg_down_1"], "the unanswered one at once; the one answered 500 waits")
      #expect(due.first?.attempts == 1)
    }
  }

  @Test(arguments: StoreKind.allCases)
  func aSecretIsMadeOnceAndKept(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    let first = try await place.with { store in try await store.secret(named: "k") { [1, 2, 3] } }
    let again = try await place.with { store in try await store.secret(named: "k") { [9, 9, 9] } }
    #expect(first == [1, 2, 3] && again == [1, 2, 3])
  }
}
