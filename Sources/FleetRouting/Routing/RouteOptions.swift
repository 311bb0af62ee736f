/// What a route query may ask for beyond its waypoints, as OSRM's route service takes it.
public struct RouteOptions: Sendable, Hashable {
  /// Metres each waypoint may be from its road (nil: any distance), one per waypoint.
  public var radiuses: [Double?]?
  /// The direction each waypoint is passed in (nil: any), one per waypoint.
  public var bearings: [WaypointBearing?]?
  /// Which side of the road each waypoint must be on, one per waypoint.
  public var approaches: [Approach]?
  /// Road classes not to drive on: one of `RoadClasses.excludable` (the combinations OSRM's car
  /// profile offers are the single classes).
  public var excluding: RoadClasses
  /// No turning back at the waypoints between the first and the last.
  public var continueStraight: Bool
  /// How many other routes to look for besides the fastest (between two waypoints only).
  public var alternatives: Int
  /// Which speeds the roads are timed with: current traffic, free flow, or a departure time's.
  public var traffic: TrafficTiming

  public init(
    radiuses: [Double?]? = nil, bearings: [WaypointBearing?]? = nil, approaches: [Approach]? = nil,
    excluding: RoadClasses = [], continueStraight: Bool = false, alternatives: Int = 0,
    traffic: TrafficTiming = .current
  ) {
    self.traffic = traffic
    self.radiuses = radiuses
    self.bearings = bearings
    self.approaches = approaches
    self.excluding = excluding
    self.continueStraight = continueStraight
    self.alternatives = alternatives
  }

  /// Whether snapping is plain nearest-road snapping.
  var constrainsSnapping: Bool { bearings != nil || approaches != nil || !excluding.isEmpty }
}

/// The direction of travel at a waypoint: degrees clockwise from north, give or take `range`.
public struct WaypointBearing: Sendable, Hashable {
  public var degrees: Double
  public var range: Double

  public init(degrees: Double, range: Double) {
    self.degrees = degrees
    self.range = range
  }
}

/// Which side of the road a waypoint is reached or left on.
public enum Approach: String, Sendable, Hashable {
  /// Either side.
  case unrestricted
  /// The side traffic keeps to, so that a passenger gets in or out on the kerb.
  case curb
}
