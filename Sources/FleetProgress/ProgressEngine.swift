import FleetCore
import FleetGeometry
import FleetRouting
import Foundation
import Synchronization

/// The one entry point to trip progress: turns each vehicle's reported positions into its road
/// position, its route through its remaining waypoints, ETAs with learned traffic, and its
/// navigation status. `Fleet` calls it through the `TripProgressEngine` port.
///
/// Each vehicle has its own state behind its own lock, so vehicles are computed in parallel;
/// only the traffic model is shared.
public final class ProgressEngine: TripProgressEngine {
  public struct Configuration: Sendable, Hashable {
    /// Farther than this from its route (beyond the fix's own accuracy), a vehicle is off route.
    public var offRouteDistance = 40.0
    /// Within this of a waypoint, a vehicle has arrived there (Fleet Engine: about 50 m).
    public var arrivalDistance = 50.0
    /// Observations closer than this to a waypoint are not learned: stopping there is not traffic.
    public var waypointQuietZone = 80.0
    /// Gaps longer than this between two positions teach nothing about traffic.
    public var longestObservation: TimeInterval = 120
    /// Whether driven speeds are learned and used (off: free-flow ETAs).
    public var learnsTraffic = true

    public init() {}
  }

  public let routing: RoutingEngine
  public let traffic: TrafficModel
  public let configuration: Configuration
  let vehicles = Mutex<[ResourceName: VehicleSlot]>([:])

  public init(
    routing: RoutingEngine, traffic: TrafficModel = TrafficModel(), configuration: Configuration = Configuration()
  ) {
    self.routing = routing
    self.traffic = traffic
    self.configuration = configuration
  }

  final class VehicleSlot: Sendable {
    let state = Mutex(VehicleNavigation())
  }

  /// What is kept per vehicle between its updates.
  struct VehicleNavigation: Sendable {
    var trace = VehicleTrace()
    var plan: PlannedRoute?
    /// The position the plan's offset was last advanced to.
    var lastFix: VehicleTrace.Fix?
    var traffic: [[SpeedInterval]] = []
    var trafficVersion: Date?
  }

  func slot(_ vehicle: ResourceName) -> VehicleSlot {
    vehicles.withLock { all in
      if let slot = all[vehicle] { return slot }
      let slot = VehicleSlot()
      all[vehicle] = slot
      return slot
    }
  }

  public func forget(_ vehicle: ResourceName) {
    _ = vehicles.withLock { $0.removeValue(forKey: vehicle) }
  }

  /// How far from the road a fix may be and still be read as on it.
  func tolerance(_ accuracy: Double?) -> Double {
    min(100, max(configuration.offRouteDistance, 2 * (accuracy ?? 0)))
  }

  // MARK: - Road snapping

  public func locate(_ vehicle: ResourceName, fixes: [VehicleLocation]) -> [VehicleLocation] {
    slot(vehicle).state.withLock { nav in
      nav.trace.ingest(fixes.compactMap { fix in fix.location.flatMap { p in fix.updateTime.map { (p, $0) } } })
      return fixes.map { snap($0, nav: nav) }
    }
  }

  /// One fix as the vehicle is believed to have been: on its planned route when it is near it,
  /// else map-matched with the fixes before it, else on the nearest road within reach. A fix no
  /// car could have reached is left raw and unsnapped.
  func snap(_ fix: VehicleLocation, nav: VehicleNavigation) -> VehicleLocation {
    guard let point = fix.location, let time = fix.updateTime, fix.isRoadSnapped != true else { return fix }
    guard let index = nav.trace.fixes.lastIndex(where: { $0.time == time && $0.point == point }),
      nav.trace.fixes[index].isPlausible
    else {
      var unsnapped = fix
      unsnapped.isRoadSnapped = false
      return unsnapped
    }
    let tolerance = tolerance(fix.latlngAccuracy)
    var snapped: LatLng?
    if let projection = nav.plan?.project(point, tolerance: tolerance) {
      snapped = projection.location
    } else {
      let recent = nav.trace.fixes[...index].filter(\.isPlausible).suffix(5)
      if recent.count >= 2, let matched = try? routing.match(recent.map(\.point)), let last = matched.tracepoints.last,
        let match = last, match.snapped.distance <= tolerance
      {
        snapped = match.snapped.location
      } else if let nearest = try? routing.nearest(point, radius: tolerance).first {
        snapped = nearest.location
      }
    }
    var result = fix
    guard let snapped else {
      result.isRoadSnapped = false
      return result
    }
    if result.rawLocation == nil {
      result.rawLocation = point
      result.rawLocationTime = time
      result.rawLocationAccuracy = fix.latlngAccuracy
      result.rawLocationSensor = fix.locationSensor
    }
    result.location = snapped
    result.isRoadSnapped = true
    return result
  }

  // MARK: - Progress

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
          learn(plan: plan, from: nav.lastFix, to: fix, offset: projection.along)
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
      guard let route = try? routing.route([fix.point] + waypoints.map(\.location.point)) else {
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

  /// Teaches the traffic model the speed driven from the last fix to this one along the plan.
  func learn(plan: PlannedRoute, from previous: VehicleTrace.Fix?, to fix: VehicleTrace.Fix, offset: Double) {
    guard configuration.learnsTraffic, let previous, let leg = plan.legs.first else { return }
    let seconds = fix.time.timeIntervalSince(previous.time)
    guard seconds > 0, seconds <= configuration.longestObservation else { return }
    // Waiting at a stop is not congestion.
    guard leg.distance - offset > configuration.waypointQuietZone else { return }
    traffic.observe(plan.spansDriven(from: plan.offset, to: offset), seconds: seconds, at: fix.time)
  }

  /// The legs to every remaining waypoint from where the vehicle is on its plan, with durations
  /// from learned traffic and ETAs counted from `now`.
  func legs(of plan: PlannedRoute, now: Date) -> [WaypointProgress] {
    var result: [WaypointProgress] = []
    var elapsed: TimeInterval = 0
    for (i, leg) in plan.legs.enumerated() {
      let points: [LatLng]
      let encoded: String
      let spans: [(span: RouteSpan, metres: Double, firstPoint: Int, lastPoint: Int)]
      if i == 0 {
        (points, spans) = plan.remainderOfFirstLeg()
        encoded = Polyline.encode(points)
      } else {
        points = leg.path.points
        encoded = leg.encodedPoints
        spans = leg.spans.map { ($0, $0.distance, $0.firstPoint, $0.lastPoint) }
      }
      var seconds = 0.0
      var intervals: [SpeedInterval] = []
      let estimates =
        configuration.learnsTraffic
        ? traffic.estimate(spans.map { ($0.span, $0.metres) }, at: now)
        : spans.map {
          ($0.span.distance > 0 ? $0.span.duration * $0.metres / $0.span.distance : 0, TrafficSpeed.normal)
        }
      for ((_, _, first, last), (spanSeconds, speed)) in zip(spans, estimates) {
        seconds += spanSeconds
        if let previous = intervals.last, previous.speed == speed, previous.end >= first {
          intervals[intervals.count - 1].end = max(previous.end, last)
        } else if last > first {
          intervals.append(SpeedInterval(start: first, end: last, speed: speed))
        }
      }
      elapsed += seconds
      let distance = i == 0 ? max(0, leg.distance - plan.offset) : leg.distance
      result.append(
        WaypointProgress(
          waypoint: leg.waypoint, path: points, encodedPath: encoded, traffic: intervals, distanceMeters: distance,
          duration: seconds,
          eta: now.addingTimeInterval(elapsed)))
    }
    return result
  }
}
