import FleetCore
import FleetRouting
import Foundation

/// One remaining stop of a vehicle and the way to it from the stop before (the first from the
/// vehicle itself): what Fleet Engine reports per `TripWaypoint` (path, distance, duration, ETA).
public struct WaypointLeg: Sendable, Hashable {
  public var waypoint: TripWaypoint
  /// Road geometry from the previous stop (or the vehicle's road position) to this one.
  public var path: [LatLng]
  public var distanceMeters: Double
  public var duration: TimeInterval
  /// When the vehicle is expected there, counting every leg before it.
  public var eta: Date
}

/// Where a vehicle stands on its way through its remaining waypoints, at one moment.
public struct VehicleProgress: Sendable, Hashable {
  /// The vehicle's position on the road network, and how far the reported position was from it.
  public var roadPosition: SnappedPoint
  /// One leg per remaining waypoint, in the vehicle's order.
  public var legs: [WaypointLeg]
  public var computedAt: Date

  /// The route to the first remaining waypoint (Fleet Engine's `route` and
  /// `current_route_segment`); empty without waypoints.
  public var currentRouteSegment: [LatLng] { legs.first?.path ?? [] }
  public var remainingDistanceToFirstWaypoint: Double? { legs.first?.distanceMeters }
  public var etaToFirstWaypoint: Date? { legs.first?.eta }
  public var remainingTimeToFirstWaypoint: TimeInterval? { legs.first?.duration }

  /// A trip's share of the vehicle's legs: everything up to and including its last waypoint
  /// (other trips' stops before it delay it too), as `Trip.remaining_waypoints` lists them.
  public func legs(forTrip tripID: String) -> ArraySlice<WaypointLeg> {
    guard let last = legs.lastIndex(where: { $0.waypoint.tripID == tripID }) else { return [] }
    return legs[...last]
  }

  /// The expected arrival at a trip's waypoint of a kind (its pickup or drop-off time estimate).
  public func eta(trip tripID: String, at type: WaypointType) -> Date? {
    legs.first { $0.waypoint.tripID == tripID && $0.waypoint.waypointType == type }?.eta
  }
}

/// Computes a vehicle's progress from its position and remaining waypoints with the routing
/// engine: one route through all waypoints, split into legs, ETAs from `now`.
public struct ProgressCalculator: Sendable {
  public let engine: RoutingEngine

  public init(engine: RoutingEngine) { self.engine = engine }

  public func progress(
    of vehicle: LatLng, through waypoints: [TripWaypoint], at now: Date
  ) throws(RoutingError) -> VehicleProgress {
    guard !waypoints.isEmpty else {
      let snapped = try engine.nearest(vehicle)
      return VehicleProgress(roadPosition: snapped[0], legs: [], computedAt: now)
    }
    let route = try engine.route([vehicle] + waypoints.map(\.location.point))
    var elapsed: TimeInterval = 0
    var legs: [WaypointLeg] = []
    for (waypoint, leg) in zip(waypoints, route.legs) {
      elapsed += leg.duration
      legs.append(
        WaypointLeg(
          waypoint: waypoint, path: leg.geometry, distanceMeters: leg.distance, duration: leg.duration,
          eta: now.addingTimeInterval(elapsed)))
    }
    return VehicleProgress(roadPosition: route.waypoints[0], legs: legs, computedAt: now)
  }
}
