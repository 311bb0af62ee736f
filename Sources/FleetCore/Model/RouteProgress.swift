import FleetGeometry
import Foundation

/// How fast traffic moves on a stretch of road, against its free-flow speed (Fleet Engine's
/// `SpeedReadingInterval.Speed`).
public enum TrafficSpeed: Int, Sendable, Hashable, Codable {
  case normal = 1
  case slow = 2
  case trafficJam = 3
}

/// One stretch of a path with one traffic speed: points `start`…`end` of the path.
public struct SpeedInterval: Sendable, Hashable {
  public var start: Int
  public var end: Int
  public var speed: TrafficSpeed

  public init(start: Int, end: Int, speed: TrafficSpeed) {
    self.start = start
    self.end = end
    self.speed = speed
  }
}

/// The way to one of a vehicle's remaining waypoints, from the waypoint before it (the first
/// one from the vehicle's position): what Fleet Engine reports on each `TripWaypoint`.
public struct WaypointProgress: Sendable, Hashable {
  public var waypoint: TripWaypoint
  public var path: [LatLng]
  /// `path` in Google's encoded polyline format, encoded once where the path is computed.
  public var encodedPath: String
  public var traffic: [SpeedInterval]
  public var distanceMeters: Double
  public var duration: TimeInterval
  /// When the vehicle is expected there, counting every waypoint before it.
  public var eta: Date

  public init(
    waypoint: TripWaypoint, path: [LatLng], encodedPath: String? = nil, traffic: [SpeedInterval],
    distanceMeters: Double,
    duration: TimeInterval, eta: Date
  ) {
    self.waypoint = waypoint
    self.path = path
    self.encodedPath = encodedPath ?? Polyline.encode(path)
    self.traffic = traffic
    self.distanceMeters = distanceMeters
    self.duration = duration
    self.eta = eta
  }
}

/// Where a vehicle stands on its way through its remaining waypoints, computed by the server
/// from its reported positions.
public struct VehicleRouteProgress: Sendable, Hashable {
  /// One entry per remaining waypoint, in the vehicle's order.
  public var legs: [WaypointProgress]
  public var navigationStatus: NavigationStatus
  /// The position the progress was computed from lies on the route (Fleet Engine's
  /// `last_location_snappable`).
  public var isLocationSnappable: Bool
  public var computedAt: Date
  /// When the route's shape last changed (a new route, not the vehicle moving along it).
  public var routeVersion: Date
  /// When the traffic along the route last changed.
  public var trafficVersion: Date

  public init(
    legs: [WaypointProgress], navigationStatus: NavigationStatus, isLocationSnappable: Bool, computedAt: Date,
    routeVersion: Date, trafficVersion: Date
  ) {
    self.legs = legs
    self.navigationStatus = navigationStatus
    self.isLocationSnappable = isLocationSnappable
    self.computedAt = computedAt
    self.routeVersion = routeVersion
    self.trafficVersion = trafficVersion
  }

  /// A trip's share: every leg up to and including its last waypoint (other trips' stops before
  /// it delay it too), as `Trip.remaining_waypoints` lists them.
  public func legs(forTrip tripID: String) -> ArraySlice<WaypointProgress> {
    guard let last = legs.lastIndex(where: { $0.waypoint.tripID == tripID }) else { return [] }
    return legs[...last]
  }

  /// The expected arrival at a trip's waypoint of one kind.
  public func eta(trip tripID: String, at type: WaypointType) -> Date? {
    legs.first { $0.waypoint.tripID == tripID && $0.waypoint.waypointType == type }?.eta
  }
}

/// A trip's part of its vehicle's progress, as a response shows it.
public struct TripRouteProgress: Sendable, Hashable {
  /// The legs to the trip's remaining waypoints (`remaining_waypoints`, one each).
  public var legs: [WaypointProgress]
  public var isLocationSnappable: Bool
  public var routeVersion: Date
  public var trafficVersion: Date
  /// When the trip was read: `remaining_time_to_first_waypoint` counts from here.
  public var readAt: Date
  /// False when the caller's `current_route_segment_version` shows it has this route already.
  public var includesRoute = true
  /// False when the caller's `current_route_segment_traffic_version` is current.
  public var includesTraffic = true
  /// False when the caller's `remaining_waypoints_route_version` is current: the waypoints'
  /// paths and traffic are left out.
  public var includesWaypointPaths = true

  public init(
    legs: [WaypointProgress], isLocationSnappable: Bool, routeVersion: Date, trafficVersion: Date, readAt: Date
  ) {
    self.legs = legs
    self.readAt = readAt
    self.isLocationSnappable = isLocationSnappable
    self.routeVersion = routeVersion
    self.trafficVersion = trafficVersion
  }
}

/// The versions a GetTrip caller already has: parts unchanged since are left out.
public struct TripVersions: Sendable, Hashable {
  public var currentRouteSegment: Date?
  public var currentRouteSegmentTraffic: Date?
  public var remainingWaypointsRoute: Date?

  public init(
    currentRouteSegment: Date? = nil, currentRouteSegmentTraffic: Date? = nil, remainingWaypointsRoute: Date? = nil
  ) {
    self.currentRouteSegment = currentRouteSegment
    self.currentRouteSegmentTraffic = currentRouteSegmentTraffic
    self.remainingWaypointsRoute = remainingWaypointsRoute
  }
}
