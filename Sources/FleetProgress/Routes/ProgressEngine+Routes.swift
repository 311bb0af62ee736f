import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// The route a vehicle follows through its waypoints: replanned when they change or it leaves
/// the route, followed by projecting positions onto it; what it drives teaches the traffic model.
extension ProgressEngine {
  public func progress(of vehicle: Vehicle, now: Date) -> VehicleRouteProgress? {
    slot(vehicle.name).state.withLock { nav in progress(of: vehicle, nav: &nav, now: now) }
  }

  func progress(of vehicle: Vehicle, nav: inout VehicleNavigation, now: Date) -> VehicleRouteProgress? {
    // After a restart the trace is empty: the stored last location seeds it.
    if nav.trace.fixes.isEmpty, let stored = vehicle.lastLocation, let point = stored.rawLocation ?? stored.location {
      nav.trace.ingest([(point, stored.updateTime ?? now)])
    }
    guard let fix = nav.trace.latestPlausible else { return nil }
    let accuracy = vehicle.lastLocation?.latlngAccuracy
    let tolerance = tolerance(accuracy)
    let waypoints = vehicle.waypoints
    guard !waypoints.isEmpty else {
      nav.plan = nil
      nav.lastFix = fix
      // `locate` already snapped the position: no second search for an idle vehicle.
      return VehicleRouteProgress(
        legs: [], navigationStatus: .noGuidance, isLocationSnappable: vehicle.lastLocation?.isRoadSnapped == true,
        computedAt: now, routeVersion: now,
        trafficVersion: nav.trafficVersion ?? now)
    }

    var status = NavigationStatus.enrouteToDestination
    var snappable = true
    if var plan = nav.plan, plan.waypoints == waypoints {
      if let projection = plan.project(fix.point, tolerance: tolerance) {
        if projection.along > plan.offset {
          learn(plan: plan, from: nav.lastFix, to: fix, at: projection)
          plan.offset = projection.along
        }
        nav.plan = plan
      } else if fix.point == plan.origin {
        // Still where it was planned from, off the road: not a departure from the route.
        snappable = false
      } else {
        status = .offRoute
        nav.plan = nil
      }
    } else {
      nav.plan = nil
    }
    if nav.plan == nil {
      guard
        let route = try? routing.route(
          [fix.point] + waypoints.map(\.location.point), heading: heading(of: vehicle, at: fix))
      else {
        nav.lastFix = fix
        return VehicleRouteProgress(
          legs: [], navigationStatus: status, isLocationSnappable: false, computedAt: now, routeVersion: now,
          trafficVersion: nav.trafficVersion ?? now)
      }
      snappable = (route.waypoints.first?.distance ?? .infinity) <= tolerance
      nav.plan = PlannedRoute(route: route, from: fix.point, waypoints: waypoints, at: now)
    }
    nav.lastFix = fix
    let plan = nav.plan!
    let legs = legs(of: plan, now: now)
    if let first = legs.first,
      first.distanceMeters <= configuration.arrivalDistance
        || fix.point.distance(to: first.waypoint.location.point) <= configuration.arrivalDistance
    {
      status = .arrivedAtDestination
    }
    let traffic = legs.map(\.traffic)
    if traffic != nav.traffic || nav.trafficVersion == nil {
      nav.traffic = traffic
      nav.trafficVersion = now
    }
    return VehicleRouteProgress(
      legs: legs, navigationStatus: status, isLocationSnappable: snappable, computedAt: now,
      routeVersion: plan.plannedAt,
      trafficVersion: nav.trafficVersion!)
  }

  /// The heading the vehicle reported with the location the fix is: a plan leaves that way
  /// (after a restart, a plan from a junction onto the roundabout beside it went round a
  /// kilometre more than the car drove).
  func heading(of vehicle: Vehicle, at fix: VehicleTrace.Fix) -> Double? {
    guard let location = vehicle.lastLocation, let heading = location.heading,
      (location.rawLocation ?? location.location) == fix.point
    else { return nil }
    return Double(heading)
  }

  /// Teaches the traffic model the speed driven from the last fix to this one along the plan.
  func learn(
    plan: PlannedRoute, from previous: VehicleTrace.Fix?, to fix: VehicleTrace.Fix,
    at projection: MeasuredPath.Projection
  ) {
    guard configuration.learnsTraffic, let previous, let leg = plan.legs.first else { return }
    let seconds = fix.time.timeIntervalSince(previous.time)
    guard seconds > 0, seconds <= configuration.longestObservation else { return }
    // Waiting at a stop is not congestion.
    guard leg.distance - projection.along > configuration.waypointQuietZone else { return }
    // A car that kept to another road where its plan turns off is near the plan, but nearer to
    // its own road: what it drove there says nothing about the plan's roads.
    if projection.distance > Self.onPlanDistance,
      let nearest = try? routing.nearest(fix.point).first,
      nearest.distance + Self.onPlanDistance < projection.distance
    {
      return
    }
    traffic.observe(plan.spansDriven(from: plan.offset, to: projection.along), seconds: seconds, at: fix.time)
  }

  /// A fix this near its plan is on it without asking which road is nearest.
  static let onPlanDistance = 5.0
}
