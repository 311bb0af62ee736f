import FleetCore
import FleetGeometry
import Foundation

/// The trip as the rider's app sees it (Fleet Engine's `GMTSTrip` in the JOURNEY_SHARING_V1S
/// view): its status and stops, and the assigned vehicle's position, route and ETAs.
public struct TripInfo: Sendable, Hashable {
  /// `providers/{provider}/trips/{trip}`.
  public var tripName: String
  public var status: TripStatus
  /// Empty until a vehicle is assigned.
  public var vehicleID: String
  public var vehicleLocation: VehicleMarkerLocation?
  public var pickupLocation: TerminalLocation?
  public var dropoffLocation: TerminalLocation?
  public var intermediateDestinations: [TerminalLocation]
  /// The intermediate destination the vehicle is going to or is at.
  public var intermediateDestinationIndex: Int
  /// The vehicle's stops still ahead, in driving order, with their ETAs.
  public var remainingWaypoints: [RemainingWaypoint]
  /// The route from the vehicle to its next waypoint, with traffic.
  public var activeRoute: TrafficRoute?
  /// The route after the next waypoint, through the remaining ones, with traffic.
  public var remainingRoute: TrafficRoute?
  /// Metres from the vehicle to its next waypoint along the active route.
  public var activeRouteRemainingDistance: Double?
  /// Metres of the remaining route (after the next waypoint).
  public var remainingRouteDistance: Double?
  /// When the vehicle reaches this trip's pickup; nil once it is no longer ahead.
  public var pickupETA: Date?
  /// When the vehicle reaches this trip's drop-off.
  public var dropoffETA: Date?
  /// When the vehicle reaches its next waypoint (maybe another trip's, on a shared ride).
  public var etaToNextWaypoint: Date?

  public init(tripName: String, status: TripStatus = .unknown) {
    self.tripName = tripName
    self.status = status
    vehicleID = ""
    intermediateDestinations = []
    intermediateDestinationIndex = 0
    remainingWaypoints = []
  }

  /// The trip ID: the last component of the name.
  public var tripID: String { String(tripName.split(separator: "/").last ?? "") }

  /// COMPLETE or CANCELED: nothing will change any more.
  public var hasEnded: Bool { status.isTerminal }
}

/// Where the vehicle was when it last reported.
public struct VehicleMarkerLocation: Sendable, Hashable {
  public var coordinate: LatLng
  /// Degrees clockwise from north; nil when the vehicle did not report it.
  public var heading: Double?
  /// When the vehicle was there.
  public var time: Date?

  public init(coordinate: LatLng, heading: Double? = nil, time: Date? = nil) {
    self.coordinate = coordinate
    self.heading = heading
    self.time = time
  }
}

/// A stop still ahead of the vehicle.
public struct RemainingWaypoint: Sendable, Hashable {
  public var location: TerminalLocation
  /// The trip it belongs to (another trip's, on a shared ride).
  public var tripID: String
  public var type: WaypointType
  /// Metres from the previous waypoint (the vehicle, for the first).
  public var distanceMeters: Double?
  /// Time from the previous waypoint.
  public var duration: Duration?
  public var eta: Date?
  /// The road from the previous waypoint, with traffic.
  public var path: TrafficRoute?

  public init(location: TerminalLocation, tripID: String, type: WaypointType) {
    self.location = location
    self.tripID = tripID
    self.type = type
  }
}

/// A route's shape and its traffic: speed intervals over the points' indices (Fleet Engine's
/// `ConsumableTrafficPolyline`). Stretches no interval covers have no traffic data.
public struct TrafficRoute: Sendable, Hashable {
  public var points: [LatLng]
  public var traffic: [SpeedInterval]

  public init(points: [LatLng], traffic: [SpeedInterval] = []) {
    self.points = points
    self.traffic = traffic
  }

  /// Metres along the shape.
  public var length: Double {
    zip(points, points.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
  }

  /// `self` followed by `other`, the shared joining point once, with `other`'s traffic
  /// re-indexed.
  public func appending(_ other: TrafficRoute) -> TrafficRoute {
    guard let last = points.last else { return other }
    let joins = other.points.first == last
    let offset = points.count - (joins ? 1 : 0)
    var result = self
    result.points += joins ? Array(other.points.dropFirst()) : other.points
    result.traffic += other.traffic.map {
      SpeedInterval(start: $0.start + offset, end: $0.end + offset, speed: $0.speed)
    }
    return result
  }
}
