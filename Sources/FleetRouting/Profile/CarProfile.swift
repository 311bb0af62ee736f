import Foundation

/// What a car may drive on and how fast: the one place to tune routing.
///
/// The defaults follow OSRM's car profile (`profiles/car.lua` and `lib/way_handlers.lua`), so
/// that FleetKit and OSRM agree on the same OpenStreetMap data: speeds by highway type, `maxspeed`
/// at 80%, surface caps, access tags (`motorcar` → `motor_vehicle` → `vehicle` → `access`,
/// with `:forward`/`:backward`), explicit and implied one-ways, barriers, traffic signals, and a
/// turn cost that grows with the turn's sharpness. Every value is a stored property: copy
/// `CarProfile()` and change what you need.
public struct CarProfile: Sendable, Hashable, Codable {
  /// km/h by `highway` value; a way whose highway is not here is not driven on (unless its access
  /// tags allow cars, then at `defaultSpeed`).
  public var highwaySpeeds: [String: Double] = [
    "motorway": 90, "motorway_link": 45, "trunk": 85, "trunk_link": 40, "primary": 65, "primary_link": 30,
    "secondary": 55, "secondary_link": 25, "tertiary": 40, "tertiary_link": 20, "unclassified": 25,
    "residential": 25, "living_street": 10, "service": 15, "winter_road": 20, "ice_road": 15,
  ]
  /// km/h of `route=ferry` / `route=shuttle_train`.
  public var routeSpeeds: [String: Double] = ["ferry": 5, "shuttle_train": 10]
  /// km/h by `bridge` value (movable bridges wait for boats).
  public var bridgeSpeeds: [String: Double] = ["movable": 5]
  public var defaultSpeed: Double = 10
  /// Share of a posted `maxspeed` that traffic actually reaches on average.
  public var maxspeedFactor: Double = 0.8
  /// Symbolic limits (`FR:urban`), lower-cased, where they differ from `maxspeedTableDefault`;
  /// 0 means no limit (the road's own speed stands).
  public var maxspeedTable: [String: Double] = [
    "at:rural": 100, "at:trunk": 100, "ar:urban": 40, "ar:rural": 110, "be:motorway": 120, "be-bru:rural": 70,
    "be-bru:urban": 30, "be-vlg:rural": 70, "bg:motorway": 140, "by:urban": 60, "by:motorway": 110,
    "ca-on:rural": 80, "ch:rural": 80, "ch:trunk": 100, "ch:motorway": 120, "de:living_street": 7, "de:rural": 100,
    "de:motorway": 0, "dk:rural": 80, "es:trunk": 90, "fr:rural": 80, "gb:nsl_single": 60 * 1.609,
    "gb:nsl_dual": 70 * 1.609, "gb:motorway": 70 * 1.609, "lv:living_street": 20, "nl:rural": 80, "nl:trunk": 100,
    "no:rural": 80, "no:motorway": 110, "ph:urban": 40, "ph:rural": 80, "ph:motorway": 100, "pl:rural": 100,
    "pl:expressway": 120, "pl:motorway": 140, "ro:trunk": 100, "ru:living_street": 20, "ru:urban": 60,
    "ru:motorway": 110, "uk:nsl_single": 60 * 1.609, "uk:nsl_dual": 70 * 1.609, "uk:motorway": 70 * 1.609,
    "za:urban": 60, "za:rural": 100, "none": 140,
  ]
  /// Symbolic limits by the kind after the country (`XX:kind`).
  public var maxspeedTableDefault: [String: Double] = ["urban": 50, "rural": 90, "trunk": 110, "motorway": 130]
  /// km/h caps by `surface`, `tracktype` and `smoothness`.
  public var surfaceSpeeds: [String: Double] = [
    "cement": 80, "compacted": 80, "fine_gravel": 80, "paving_stones": 60, "metal": 60, "bricks": 60,
    "grass": 40, "wood": 40, "sett": 40, "grass_paver": 40, "gravel": 40, "unpaved": 40, "ground": 40,
    "dirt": 40, "pebblestone": 40, "tartan": 40, "cobblestone": 30, "clay": 30, "earth": 20, "stone": 20,
    "rocky": 20, "sand": 20, "laterite": 15, "mud": 10, "ice": 20, "snow": 30,
  ]
  public var tracktypeSpeeds: [String: Double] = ["grade1": 60, "grade2": 40, "grade3": 30, "grade4": 25, "grade5": 20]
  public var smoothnessSpeeds: [String: Double] = [
    "intermediate": 80, "bad": 40, "very_bad": 20, "horrible": 10, "very_horrible": 5, "impassable": 0,
  ]

  /// Access tags, most specific first.
  public var accessHierarchy = ["motorcar", "motor_vehicle", "vehicle", "access"]
  public var accessAllowed: Set<String> = [
    "yes", "motorcar", "motor_vehicle", "vehicle", "permissive", "designated", "hov",
  ]
  public var accessDenied: Set<String> = [
    "no", "agricultural", "forestry", "emergency", "psv", "taxi", "share_taxi", "minibus", "bus", "foot",
    "emergency_vehicle", "restricted", "military", "official", "customers", "private", "delivery", "destination",
    "permit", "residents",
  ]
  /// Access values that still allow starting or ending a trip there, but not driving through.
  public var accessRestricted: Set<String> = [
    "private", "delivery", "destination", "customers", "permit", "residents", "unknown",
  ]
  /// Highway types on which `accessRestricted` values mean "restricted" rather than "denied".
  public var restrictableHighways: Set<String> = [
    "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary", "secondary_link",
    "tertiary", "tertiary_link", "residential", "living_street", "unclassified", "service", "winter_road", "ice_road",
  ]
  /// Never driven on.
  public var avoidedHighways: Set<String> = [
    "steps", "construction", "proposed", "area", "reversible", "impassable", "hov_lanes",
  ]
  public var forbiddenServices: Set<String> = ["emergency_access"]
  public var constructionAllowed: Set<String> = ["no", "widening", "minor"]

  /// Barriers a car passes; any other `barrier` blocks the node.
  public var passableBarriers: Set<String> = [
    "cattle_grid", "border_control", "toll_booth", "sally_port", "no", "entrance", "height_restrictor", "arch",
  ]
  /// Barriers that cost time instead of blocking (seconds).
  public var barrierPenalties: [String: Double] = ["gate": 60, "lift_gate": 60]

  /// Routing prefers, by these factors of speed, to avoid service roads of these kinds, narrow and
  /// single-lane two-way roads and side roads. Durations stay real; only the choice of path changes.
  public var servicePenalties: [String: Double] = [
    "alley": 0.5, "parking": 0.5, "parking_aisle": 0.5, "driveway": 0.5, "drive-through": 0.5, "drive-thru": 0.5,
  ]
  public var sideRoadFactor: Double = 0.8
  public var noLaneMarkingsFactor: Double = 0.75
  public var priorityFactor: Double = 0.7

  /// Vehicle size: ways posted lower, narrower, shorter or lighter are not driven on (metres, kg).
  public var vehicleHeight: Double = 2.0
  public var vehicleWidth: Double = 1.9
  public var vehicleLength: Double = 4.8
  public var vehicleWeight: Double = 2000

  /// The side traffic keeps to where a way's `driving_side` tag does not say: nil looks it up by
  /// where the way is (`DrivingSideMap`); set it to force one side everywhere.
  public var drivingSide: DrivingSide? = nil

  /// Turn cost in seconds: `turnPenalty / (1 + e^-(13/bias·a/180 − 6.5·bias))` for a right turn of
  /// a degrees (left turns mirror it), at junctions of more than two roads, plus these.
  public var turnPenalty: Double = 7.5
  public var turnBias: Double = 1.075
  public var uTurnPenalty: Double = 20
  /// Extra cost of a turn across oncoming traffic (left, for right-hand traffic).
  public var oncomingTurnPenalty: Double = 2
  public var trafficSignalPenalty: Double = 2
  public var stopPenalty: Double = 2
  public var giveWayPenalty: Double = 1

  public init() {}
}
