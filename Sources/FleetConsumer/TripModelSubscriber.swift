import FleetCore
import FleetGeometry
import Foundation

/// Whether a trip model is being kept up to date (Fleet Engine's `GMTCTripModelState`).
public enum TripModelState: String, Sendable, Hashable {
  /// Subscribers are registered and the trip is being followed.
  case active
  /// Nobody listens, tracking was stopped, or the trip has ended.
  case inactive
}

/// Told about a trip's changes (Fleet Engine's `GMTCTripModelSubscriber`). Every method has an
/// empty default: implement the ones you need.
///
/// **Executor:** all calls are made on the main actor.
///
/// **Order:** for each reading of the trip that changed anything, first
/// `didUpdate(_:trip:updatedPropertyFields:)`, then one call per changed field in the order of
/// `TripPropertyFields` (status, vehicle location, pickup, drop-off, intermediate destinations,
/// remaining waypoints, ETA to the next waypoint, pickup ETA, drop-off ETA, active route, its
/// remaining distance, its traffic, remaining route, its distance, its traffic). A method is
/// called only when its value changed. Errors and model-state changes come as they happen.
/// Subscribers are called in the order they registered.
@MainActor
public protocol TripModelSubscriber: AnyObject, Sendable {
  func tripModel(_ tripModel: TripModel, didUpdateModelState state: TripModelState)
  func tripModel(_ tripModel: TripModel, didUpdate trip: TripInfo, updatedPropertyFields: TripPropertyFields)
  func tripModel(_ tripModel: TripModel, didUpdate tripStatus: TripStatus)
  func tripModel(_ tripModel: TripModel, didUpdate vehicleLocation: VehicleMarkerLocation?)
  func tripModel(_ tripModel: TripModel, didUpdatePickupLocation location: TerminalLocation?)
  func tripModel(_ tripModel: TripModel, didUpdateDropoffLocation location: TerminalLocation?)
  func tripModel(_ tripModel: TripModel, didUpdateIntermediateDestinations destinations: [TerminalLocation])
  func tripModel(_ tripModel: TripModel, didUpdateRemaining waypoints: [RemainingWaypoint])
  func tripModel(_ tripModel: TripModel, didUpdateETAToNextWaypoint eta: Date?)
  func tripModel(_ tripModel: TripModel, didUpdatePickupETA eta: Date?)
  func tripModel(_ tripModel: TripModel, didUpdateDropoffETA eta: Date?)
  func tripModel(_ tripModel: TripModel, didUpdateActiveRoute route: [LatLng]?)
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteRemainingDistance meters: Double?)
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteTraffic traffic: TrafficRoute?)
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRoute route: [LatLng]?)
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteDistance meters: Double?)
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteTraffic traffic: TrafficRoute?)
  /// The trip could not be read; `error.code` is the gRPC status. The model keeps trying.
  func tripModel(_ tripModel: TripModel, didFailUpdateTripWithError error: FleetClientError)
}

extension TripModelSubscriber {
  public func tripModel(_ tripModel: TripModel, didUpdateModelState state: TripModelState) {}
  public func tripModel(_ tripModel: TripModel, didUpdate trip: TripInfo, updatedPropertyFields: TripPropertyFields) {}
  public func tripModel(_ tripModel: TripModel, didUpdate tripStatus: TripStatus) {}
  public func tripModel(_ tripModel: TripModel, didUpdate vehicleLocation: VehicleMarkerLocation?) {}
  public func tripModel(_ tripModel: TripModel, didUpdatePickupLocation location: TerminalLocation?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateDropoffLocation location: TerminalLocation?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateIntermediateDestinations destinations: [TerminalLocation]) {}
  public func tripModel(_ tripModel: TripModel, didUpdateRemaining waypoints: [RemainingWaypoint]) {}
  public func tripModel(_ tripModel: TripModel, didUpdateETAToNextWaypoint eta: Date?) {}
  public func tripModel(_ tripModel: TripModel, didUpdatePickupETA eta: Date?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateDropoffETA eta: Date?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateActiveRoute route: [LatLng]?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateActiveRouteRemainingDistance meters: Double?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateActiveRouteTraffic traffic: TrafficRoute?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateRemainingRoute route: [LatLng]?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteDistance meters: Double?) {}
  public func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteTraffic traffic: TrafficRoute?) {}
  public func tripModel(_ tripModel: TripModel, didFailUpdateTripWithError error: FleetClientError) {}
}

/// What a trip model tells its subscribers, as one value (the `AsyncSequence` form).
public enum TripModelEvent: Sendable, Hashable {
  case modelState(TripModelState)
  /// A new reading of the trip and the fields it changed.
  case trip(TripInfo, TripPropertyFields)
  case failure(FleetClientError)
}

extension TripModelSubscriber {
  /// Makes the calls one event stands for, in the documented order.
  func deliver(_ event: TripModelEvent, from model: TripModel) {
    switch event {
    case .modelState(let state): tripModel(model, didUpdateModelState: state)
    case .failure(let error): tripModel(model, didFailUpdateTripWithError: error)
    case .trip(let trip, let fields):
      tripModel(model, didUpdate: trip, updatedPropertyFields: fields)
      for field in TripPropertyFields.ordered where fields.contains(field) {
        switch field {
        case .status: tripModel(model, didUpdate: trip.status)
        case .vehicleLocation: tripModel(model, didUpdate: trip.vehicleLocation)
        case .pickupLocation: tripModel(model, didUpdatePickupLocation: trip.pickupLocation)
        case .dropoffLocation: tripModel(model, didUpdateDropoffLocation: trip.dropoffLocation)
        case .intermediateDestinations:
          tripModel(model, didUpdateIntermediateDestinations: trip.intermediateDestinations)
        case .remainingWaypoints: tripModel(model, didUpdateRemaining: trip.remainingWaypoints)
        case .etaToNextWaypoint: tripModel(model, didUpdateETAToNextWaypoint: trip.etaToNextWaypoint)
        case .pickupETA: tripModel(model, didUpdatePickupETA: trip.pickupETA)
        case .dropoffETA: tripModel(model, didUpdateDropoffETA: trip.dropoffETA)
        case .activeRoute: tripModel(model, didUpdateActiveRoute: trip.activeRoute?.points)
        case .activeRouteRemainingDistance:
          tripModel(model, didUpdateActiveRouteRemainingDistance: trip.activeRouteRemainingDistance)
        case .activeRouteTraffic: tripModel(model, didUpdateActiveRouteTraffic: trip.activeRoute)
        case .remainingRoute: tripModel(model, didUpdateRemainingRoute: trip.remainingRoute?.points)
        case .remainingRouteDistance: tripModel(model, didUpdateRemainingRouteDistance: trip.remainingRouteDistance)
        case .remainingRouteTraffic: tripModel(model, didUpdateRemainingRouteTraffic: trip.remainingRoute)
        default: break
        }
      }
    }
  }
}
