import ArgumentParser
import FleetCore
import FleetServer
import Foundation

struct WebhooksCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "webhooks",
    abstract: "Manage the endpoints a provider's events are posted to (Standard Webhooks).",
    discussion: """
      fleetd posts each event (ride.created, ride.assigned, …, vehicle.entered_zone) to every endpoint of
      its provider, signed with the endpoint's secret; a running fleetd picks up changes within a second.
      Event types: \(FleetEventType.allCases.map(\.rawValue).joined(separator: ", ")).
      """,
    subcommands: [Add.self, List.self, Remove.self, Test.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Register an endpoint; prints its ID and its whsec_ signing secret.")
    @OptionGroup var store: StoreOptions
    @Option(help: "The provider whose events it receives.")
    var provider: String
    @Option(help: "Where to POST them (http or https).")
    var url: String
    @Option(help: "Event types to send, comma-separated or repeated (default: all).")
    var events: [String] = []

    func run() async throws {
      let endpoint = try await store.withStore { store in
        try await WebhookEndpoints(store: store).add(provider: provider, url: url, events: events)
      }
      print("id:     \(endpoint.id)")
      print("secret: \(endpoint.secret)")
      let types = endpoint.eventTypes.isEmpty ? "all" : endpoint.eventTypes.map(\.rawValue).joined(separator: ",")
      FileHandle.standardError.write(
        Data("posting \(types) events of \(endpoint.provider) to \(endpoint.url.absoluteString)\n".utf8))
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List endpoints and the deliveries' states.")
    @OptionGroup var store: StoreOptions

    func run() async throws {
      let (endpoints, counts) = try await store.withStore { store in
        let endpoints = WebhookEndpoints(store: store)
        return (try await endpoints.list(), try await endpoints.counts())
      }
      print("ENDPOINT ID       PROVIDER        STATE      EVENTS  URL")
      for endpoint in endpoints {
        let state = endpoint.disabledTime == nil ? "active" : "disabled"
        let types = endpoint.eventTypes.isEmpty ? "all" : "\(endpoint.eventTypes.count)"
        print(
          endpoint.id.padding(toLength: 17, withPad: " ", startingAt: 0)
            + endpoint.provider.padding(toLength: 16, withPad: " ", startingAt: 0)
            + state.padding(toLength: 11, withPad: " ", startingAt: 0)
            + types.padding(toLength: 8, withPad: " ", startingAt: 0) + endpoint.url.absoluteString
            + (endpoint.disabledReason.map { " (\($0))" } ?? ""))
      }
      print("deliveries: \(counts.pending) pending, \(counts.delivered) delivered, \(counts.failed) failed")
    }
  }

  struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Remove an endpoint and its pending deliveries.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The endpoint ID (from 'fleetd webhooks list').")
    var id: String

    func run() async throws {
      try await store.withStore { try await WebhookEndpoints(store: $0).remove(id: id) }
      print("removed webhook endpoint \(id)")
    }
  }

  struct Test: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Post a signed webhook.test message to an endpoint now and print its answer.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The endpoint ID (from 'fleetd webhooks list').")
    var id: String
    @Flag(help: "Allow loopback, private and link-local targets, as `fleetd serve --allow-private-webhooks` does.")
    var allowPrivateWebhooks = false

    func run() async throws {
      let started = ContinuousClock.now
      let status = try await store.withStore {
        try await WebhookEndpoints(store: $0).test(id: id, allowPrivateTargets: allowPrivateWebhooks)
      }
      let elapsed = ContinuousClock.now - started
      print("\(id) answered \(status) in \(elapsed.formatted(.units(allowed: [.milliseconds])))")
      if !(200..<300).contains(status) { throw ExitCode(1) }
    }
  }
}
