import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import SwiftProtobuf

extension TripInfo {
  /// Reads a GetTrip / WatchTrip answer in the JOURNEY_SHARING_V1S view. The trip-level route
  /// fields are not in that view: the active route is the path to the first remaining
  /// waypoint, as Fleet Engine's Consumer SDK reads it.
  init(_ wire: Maps_Fleetengine_V1_Trip) {
    self.init(tripName: wire.name, status: TripStatus(rawValue: wire.tripStatus.rawValue) ?? .unknown)
    vehicleID = wire.vehicleID
    if wire.hasLastLocation, wire.lastLocation.hasLocation {
      let last = wire.lastLocation
      vehicleLocation = VehicleMarkerLocation(
        coordinate: LatLng(last.location),
        heading: last.hasHeading ? Double(last.heading.value) : nil,
        time: last.hasUpdateTime ? last.updateTime.date : nil)
    }
    pickupLocation = wire.hasPickupPoint ? TerminalLocation(point: LatLng(wire.pickupPoint.point)) : nil
    dropoffLocation = wire.hasDropoffPoint ? TerminalLocation(point: LatLng(wire.dropoffPoint.point)) : nil
    intermediateDestinations = wire.intermediateDestinations.map { TerminalLocation(point: LatLng($0.point)) }
    intermediateDestinationIndex = Int(wire.intermediateDestinationIndex)
    remainingWaypoints = wire.remainingWaypoints.map(RemainingWaypoint.init)

    let tripID = self.tripID
    pickupETA = remainingWaypoints.first { $0.tripID == tripID && $0.type == .pickup }?.eta
    dropoffETA = remainingWaypoints.first { $0.tripID == tripID && $0.type == .dropOff }?.eta
    guard let next = remainingWaypoints.first, !status.isTerminal else { return }
    etaToNextWaypoint = next.eta
    activeRoute = next.path
    activeRouteRemainingDistance = next.distanceMeters
    let later = remainingWaypoints.dropFirst()
    if !later.isEmpty {
      remainingRoute = later.compactMap(\.path).reduce(TrafficRoute(points: [])) { $0.appending($1) }
      if later.allSatisfy({ $0.distanceMeters != nil }) {
        remainingRouteDistance = later.reduce(0) { $0 + $1.distanceMeters! }
      }
    }
  }
}

extension RemainingWaypoint {
  init(_ wire: Maps_Fleetengine_V1_TripWaypoint) {
    self.init(
      location: TerminalLocation(point: LatLng(wire.location.point)), tripID: wire.tripID,
      type: WaypointType(rawValue: wire.waypointType.rawValue) ?? .unknown)
    if wire.hasDistanceMeters { distanceMeters = Double(wire.distanceMeters.value) }
    if wire.hasDuration { duration = .seconds(wire.duration.seconds) + .nanoseconds(Int64(wire.duration.nanos)) }
    if wire.hasEta { eta = wire.eta.date }
    // Fleet Engine sends the encoded path; fleetd sends both.
    let points =
      wire.encodedPathToWaypoint.isEmpty
      ? wire.pathToWaypoint.map(LatLng.init) : (Polyline.decode(wire.encodedPathToWaypoint) ?? [])
    guard !points.isEmpty else { return }
    let traffic = wire.trafficToWaypoint.speedReadingInterval.compactMap { interval -> SpeedInterval? in
      guard let speed = TrafficSpeed(rawValue: interval.speed.rawValue) else { return nil }
      return SpeedInterval(
        start: Int(interval.startPolylinePointIndex), end: Int(interval.endPolylinePointIndex), speed: speed)
    }
    path = TrafficRoute(points: points, traffic: traffic)
  }
}

extension LatLng {
  init(_ wire: Google_Type_LatLng) { self.init(latitude: wire.latitude, longitude: wire.longitude) }
}
