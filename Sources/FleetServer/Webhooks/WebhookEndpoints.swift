import FleetCore
import Foundation

/// Managing webhook endpoints (`fleetd webhooks add|list|remove|test`): the rules of an endpoint,
/// kept in the store, which a running fleetd reads as it delivers.
public struct WebhookEndpoints: Sendable {
  let store: any WebhookStore

  public init(store: any WebhookStore) { self.store = store }

  /// Registers an endpoint for the provider's events (`events`: type names, none for all).
  public func add(provider: String, url text: String, events: [String], now: Date = Date()) async throws
    -> WebhookEndpoint
  {
    try ResourceID.validateProvider(provider, field: "--provider")
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host, !host.isEmpty, url.user == nil, url.password == nil, url.fragment == nil
    else {
      throw FleetError(.invalidArgument, "--url '\(text)' must be an http or https URL with a host, and no credentials")
    }
    var types: [FleetEventType] = []
    for name in events.flatMap({ $0.split(separator: ",") }).map({ $0.trimmingCharacters(in: .whitespaces) }) {
      guard let type = FleetEventType(rawValue: name) else {
        throw FleetError(
          .invalidArgument,
          "--events: '\(name)' is not an event type (\(FleetEventType.allCases.map(\.rawValue).joined(separator: ", ")))"
        )
      }
      if !types.contains(type) { types.append(type) }
    }
    let endpoint = WebhookEndpoint.new(provider: provider, url: url, eventTypes: types, now: now)
    try await store.saveWebhookEndpoint(endpoint)
    return endpoint
  }

  public func list() async throws -> [WebhookEndpoint] { try await store.webhookEndpoints() }

  public func counts() async throws -> WebhookCounts { try await store.webhookDeliveryCounts() }

  public func remove(id: String) async throws {
    guard try await store.removeWebhookEndpoint(id: id) else {
      throw FleetError(.notFound, "no webhook endpoint \(id) ('fleetd webhooks list' shows them)")
    }
  }

  /// Sends a signed `webhook.test` message to the endpoint now and returns its answer's status.
  public func test(id: String, allowPrivateTargets: Bool) async throws -> Int {
    guard let endpoint = try await store.webhookEndpoints().first(where: { $0.id == id }) else {
      throw FleetError(.notFound, "no webhook endpoint \(id) ('fleetd webhooks list' shows them)")
    }
    var configuration = WebhookConfiguration()
    configuration.allowPrivateTargets = allowPrivateTargets
    return try await WebhookSender(configuration: configuration).post(.test(endpoint, now: Date()), to: endpoint)
  }
}
