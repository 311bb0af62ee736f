import FleetCore
import Synchronization

/// Hands out the trip models of one provider (Fleet Engine's `GMTCTripService`). One model per
/// trip name: asking twice gives the same model.
public final class TripService: Sendable {
  public let providerID: String
  let configuration: ConsumerConfiguration
  let tokenProvider: any AuthorizationTokenProvider
  let models = Mutex<[String: TripModel]>([:])
  /// The running `ConsumerServices.run()` listens here for models to start tracking.
  let demand = Mutex<AsyncStream<Void>.Continuation?>(nil)

  init(providerID: String, configuration: ConsumerConfiguration, tokenProvider: any AuthorizationTokenProvider) {
    self.providerID = providerID
    self.configuration = configuration
    self.tokenProvider = tokenProvider
  }

  /// The model of `providers/{provider}/trips/{trip}`. A malformed name, or another
  /// provider's, fails at once with INVALID_ARGUMENT, as fleetd would answer it.
  public func tripModel(forTripName tripName: String) throws(FleetClientError) -> TripModel {
    let name: ResourceName
    do {
      name = try ResourceName(parsing: tripName, kind: .trips, field: "tripName")
    } catch {
      throw FleetClientError(.invalidArgument, error.message)
    }
    guard name.provider == providerID else {
      throw FleetClientError(
        .invalidArgument, "tripName must be under providers/\(providerID), got '\(tripName)'")
    }
    return models.withLock { models in
      if let model = models[tripName] { return model }
      let model = TripModel(
        tripName: tripName, tripID: name.id, configuration: configuration, tokenProvider: tokenProvider
      ) { [weak self] in self?.signalDemand() }
      models[tripName] = model
      return model
    }
  }

  func signalDemand() {
    _ = demand.withLock { $0 }?.yield()
  }

  /// The models that want tracking and have no tracking task yet; each is claimed.
  func modelsToTrack() -> [TripModel] {
    models.withLock { Array($0.values) }.filter { $0.claimTracking() }
  }
}
