import FleetConsumer
import FleetCore
import FleetGeometry
import Foundation
import Synchronization

/// Records every callback a trip model makes, in order, with the value it carried.
@MainActor
final class RecordingSubscriber: TripModelSubscriber {
  struct Call: Sendable, CustomStringConvertible {
    var name: String
    var value: String
    var description: String { "\(name)(\(value))" }
  }

  var calls: [Call] = []
  var trips: [(TripInfo, TripPropertyFields)] = []
  var errors: [FleetClientError] = []
  var statuses: [TripStatus] = []

  func record(_ name: String, _ value: Any?) {
    calls.append(Call(name: name, value: value.map { "\($0)" } ?? "nil"))
  }

  func tripModel(_ tripModel: TripModel, didUpdateModelState state: TripModelState) { record("modelState", state) }
  func tripModel(_ tripModel: TripModel, didUpdate trip: TripInfo, updatedPropertyFields: TripPropertyFields) {
    trips.append((trip, updatedPropertyFields))
    record("trip", updatedPropertyFields.rawValue)
  }
  func tripModel(_ tripModel: TripModel, didUpdate tripStatus: TripStatus) {
    statuses.append(tripStatus)
    record("status", tripStatus.wireName)
  }
  func tripModel(_ tripModel: TripModel, didUpdate vehicleLocation: VehicleMarkerLocation?) {
    record(
      "vehicleLocation", vehicleLocation.map { [$0.coordinate.latitude, $0.coordinate.longitude, $0.heading ?? -1] })
  }
  func tripModel(_ tripModel: TripModel, didUpdatePickupLocation location: TerminalLocation?) {
    record("pickupLocation", location?.point)
  }
  func tripModel(_ tripModel: TripModel, didUpdateDropoffLocation location: TerminalLocation?) {
    record("dropoffLocation", location?.point)
  }
  func tripModel(_ tripModel: TripModel, didUpdateIntermediateDestinations destinations: [TerminalLocation]) {
    record("intermediateDestinations", destinations.map(\.point))
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemaining waypoints: [RemainingWaypoint]) {
    record("remainingWaypoints", waypoints.map { "\($0.tripID):\($0.type):\($0.location.point)" })
  }
  func tripModel(_ tripModel: TripModel, didUpdateETAToNextWaypoint eta: Date?) {
    record("etaToNextWaypoint", eta?.timeIntervalSince1970)
  }
  func tripModel(_ tripModel: TripModel, didUpdatePickupETA eta: Date?) {
    record("pickupETA", eta?.timeIntervalSince1970)
  }
  func tripModel(_ tripModel: TripModel, didUpdateDropoffETA eta: Date?) {
    record("dropoffETA", eta?.timeIntervalSince1970)
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRoute route: [LatLng]?) {
    record("activeRoute", route.map { Polyline.encode($0) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteRemainingDistance meters: Double?) {
    record("activeRouteRemainingDistance", meters)
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteTraffic traffic: TrafficRoute?) {
    record("activeRouteTraffic", traffic.map(\.traffic))
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRoute route: [LatLng]?) {
    record("remainingRoute", route.map { Polyline.encode($0) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteDistance meters: Double?) {
    record("remainingRouteDistance", meters)
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteTraffic traffic: TrafficRoute?) {
    record("remainingRouteTraffic", traffic.map(\.traffic))
  }
  func tripModel(_ tripModel: TripModel, didFailUpdateTripWithError error: FleetClientError) {
    errors.append(error)
    record("error", error.code)
  }

  /// The field callbacks in `TripPropertyFields` order.
  static let fieldCallbacks = [
    "status", "vehicleLocation", "pickupLocation", "dropoffLocation", "intermediateDestinations",
    "remainingWaypoints", "etaToNextWaypoint", "pickupETA", "dropoffETA", "activeRoute",
    "activeRouteRemainingDistance", "activeRouteTraffic", "remainingRoute", "remainingRouteDistance",
    "remainingRouteTraffic",
  ]
}
