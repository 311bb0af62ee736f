import FleetClient
import GRPCCore

/// The Consumer SDK's entry point (Fleet Engine's `GMTCServices`): which provider, which fleetd,
/// and who signs the rider's tokens. `run()` connects to fleetd and keeps every trip model
/// that has subscribers up to date, until the task running it is cancelled:
///
/// ```swift
/// let services = ConsumerServices(providerID: "acme", endpoint: endpoint, tokenProvider: tokens)
/// let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/t1")
/// model.register(mySubscriber)            // starts following the trip
/// try await services.run()                // in a task the app owns
/// ```
public final class ConsumerServices: Sendable {
  public let providerID: String
  public let endpoint: FleetEndpoint
  public let tokenProvider: any AuthorizationTokenProvider
  public let configuration: ConsumerConfiguration
  public let tripService: TripService

  public init(
    providerID: String, endpoint: FleetEndpoint, tokenProvider: any AuthorizationTokenProvider,
    configuration: ConsumerConfiguration = ConsumerConfiguration()
  ) {
    self.providerID = providerID
    self.endpoint = endpoint
    self.tokenProvider = tokenProvider
    self.configuration = configuration
    tripService = TripService(providerID: providerID, configuration: configuration, tokenProvider: tokenProvider)
  }

  /// Connects to fleetd and follows the trip models that want it, until cancelled. Run it once
  /// at a time (one task for the app's lifetime, or for the screens that show trips).
  public func run() async throws {
    let configuration = configuration
    try await endpoint.withClient { client in
      await follow(TripTransport(client: client, configuration: configuration))
    }
  }

  /// Starts a tracking task for each model that wants one, whenever demand changes.
  func follow(_ transport: TripTransport) async {
    let (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    tripService.demand.withLock { $0 = continuation }
    continuation.yield()  // Models registered before `run()` started.
    await withDiscardingTaskGroup { group in
      for await _ in signals {
        for model in tripService.modelsToTrack() {
          group.addTask { await model.track(transport) }
        }
      }
      group.cancelAll()
    }
    tripService.demand.withLock { $0 = nil }
  }
}
