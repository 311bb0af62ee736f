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
  public var defaultSpeed: Double = 10
  /// Share of a posted `maxspeed` that traffic actually reaches on average.
  public var maxspeedFactor: Double = 0.8
  /// Symbolic limits (`FR:urban`) by value, then by the part after the country.
  public var maxspeedTable: [String: Double] = [
    "at:rural": 100, "at:trunk": 100, "be:motorway": 120, "ch:rural": 80, "ch:trunk": 100, "ch:motorway": 120,
    "de:living_street": 7, "de:rural": 100, "dk:rural": 80, "es:trunk": 90, "fr:rural": 80, "it:rural": 90,
    "nl:rural": 80, "nl:trunk": 100, "ru:living_street": 20, "ru:urban": 60, "ru:motorway": 110,
    "gb:nsl_single": 96.54, "gb:nsl_dual": 112.63, "gb:motorway": 112.63, "uk:nsl_single": 96.54,
    "uk:nsl_dual": 112.63, "uk:motorway": 112.63, "none": 140,
  ]
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
  public var avoidedHighways: Set<String> = ["steps", "construction", "proposed"]
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

  /// Vehicle size: ways posted lower or narrower are not driven on.
  public var vehicleHeight: Double = 2.0
  public var vehicleWidth: Double = 1.9

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

// MARK: - Ways

/// How a car may use a way in one direction.
public struct WayDirection: Sendable, Hashable {
  /// km/h, for durations.
  public var speed: Double
  /// km/h scaled by the routing penalties, for choosing paths.
  public var rate: Double
  /// Only for starting or ending there (private, destination…).
  public var restricted: Bool
}

/// A drivable way as the profile sees it.
public struct WayAttributes: Sendable, Hashable {
  public var forward: WayDirection?
  public var backward: WayDirection?
  public var name: String
  public var ref: String
  public var highway: String
  public var isRoundabout: Bool
  /// `lanes`, or `lanes:forward` + `lanes:backward`; 0 when not tagged.
  public var lanes: Int = 0
}

extension CarProfile {
  /// The way's driving attributes, or nil when cars cannot use it at all.
  public func way(_ tags: OSMTags) -> WayAttributes? {
    let highway = tags["highway"] ?? ""
    let route = tags["route"] ?? ""
    guard !highway.isEmpty || !route.isEmpty else { return nil }
    if tags["area"] == "yes" || avoidedHighways.contains(highway) || tags["oneway"] == "reversible"
      || tags["impassable"] == "yes" || tags["status"] == "impassable" || highway == "proposed"
      || tags["railway"] == "construction"
    {
      return nil
    }
    if let construction = tags["construction"], !constructionAllowed.contains(construction) { return nil }
    if let service = tags["service"], forbiddenServices.contains(service) { return nil }

    var forwardOK = true
    var backwardOK = true
    // Height and width limits.
    let (heightForward, heightBackward) = directional(tags, ["maxheight:physical", "maxheight"])
    if let h = heightForward.flatMap(Self.height), h < vehicleHeight { forwardOK = false }
    if let h = heightBackward.flatMap(Self.height), h < vehicleHeight { backwardOK = false }
    let (widthForward, widthBackward) = directional(tags, ["maxwidth:physical", "maxwidth", "width", "est_width"])
    if let w = widthForward.flatMap(Self.meters), w <= vehicleWidth { forwardOK = false }
    if let w = widthBackward.flatMap(Self.meters), w <= vehicleWidth { backwardOK = false }

    // Access.
    let (rawForward, rawBackward) = directional(tags, accessHierarchy)
    let accessForward = rawForward.map(resolveAccess)
    let accessBackward = rawBackward.map(resolveAccess)
    let restrictable = restrictableHighways.contains(highway)
    let restrictedForward = restrictable && accessForward.map(accessRestricted.contains) == true
    let restrictedBackward = restrictable && accessBackward.map(accessRestricted.contains) == true
    if let a = accessForward, accessDenied.contains(a), !restrictedForward { forwardOK = false }
    if let a = accessBackward, accessDenied.contains(a), !restrictedBackward { backwardOK = false }

    // One-ways: explicit, or implied on motorways and roundabouts.
    let oneway =
      ["motorcar", "motor_vehicle", "vehicle"].lazy.compactMap { tags["oneway:\($0)"] }.first ?? tags["oneway"]
    let junction = tags["junction"]
    if oneway == "-1" {
      forwardOK = false
    } else if oneway == "yes" || oneway == "1" || oneway == "true" {
      backwardOK = false
    } else if (highway == "motorway" || junction == "roundabout" || junction == "circular") && oneway != "no" {
      backwardOK = false
    }

    // Speeds.
    var speedForward: Double?
    var speedBackward: Double?
    if let speed = routeSpeeds[route] {
      speedForward = speed
      speedBackward = speed
    } else if let speed = highwaySpeeds[highway] {
      speedForward = speed
      speedBackward = speed
    } else {
      // An unlisted highway is driven on only where access tags allow it.
      let allowed = { (access: String?) -> Double? in
        guard let access, !self.accessDenied.contains(access) else { return nil }
        return self.defaultSpeed
      }
      speedForward = allowed(accessForward)
      speedBackward = allowed(accessBackward)
    }
    let (maxForward, maxBackward) = directional(
      tags, ["maxspeed:advisory", "maxspeed", "source:maxspeed", "maxspeed:type"])
    if speedForward != nil, let limit = maxForward.flatMap(maxspeed), limit > 0 {
      speedForward = limit * maxspeedFactor
    }
    if speedBackward != nil, let limit = maxBackward.flatMap(maxspeed), limit > 0 {
      speedBackward = limit * maxspeedFactor
    }
    for (key, table) in [("surface", surfaceSpeeds), ("tracktype", tracktypeSpeeds), ("smoothness", smoothnessSpeeds)] {
      if let value = tags[key], let cap = table[value] {
        speedForward = speedForward.map { min($0, cap) }
        speedBackward = speedBackward.map { min($0, cap) }
      }
    }

    // Routing penalties.
    let bidirectional = forwardOK && backwardOK
    var factor = 1.0
    if let service = tags["service"], let penalty = servicePenalties[service] { factor = min(factor, penalty) }
    var widthFactor = 1.0
    if tags["lane_markings"] == "no" && bidirectional { widthFactor = noLaneMarkingsFactor }
    if let width = tags["width"].flatMap(Self.meters), bidirectional {
      widthFactor =
        width <= 3 ? 0.5 : width < 4 ? 0.6 : width < 5 ? 0.75 : width < 6 ? 0.8 : widthFactor
    }
    if let lanes = tags["lanes"].flatMap(Self.leadingInteger), lanes <= 1, bidirectional { widthFactor = 0.5 }
    factor = min(factor, widthFactor)
    if oneway == "alternating" { factor = min(factor, 0.4) }
    if tags["side_road"] == "yes" || tags["side_road"] == "rotary" { factor = min(factor, sideRoadFactor) }
    var factorForward = factor
    var factorBackward = factor
    if tags["priority"] == "forward" { factorBackward = min(factorBackward, priorityFactor) }
    if tags["priority"] == "backward" { factorForward = min(factorForward, priorityFactor) }

    let direction = { (ok: Bool, speed: Double?, factor: Double, restricted: Bool) -> WayDirection? in
      guard ok, let speed, speed > 0 else { return nil }
      return WayDirection(speed: speed, rate: speed * factor, restricted: restricted)
    }
    let forward = direction(forwardOK, speedForward, factorForward, restrictedForward)
    let backward = direction(backwardOK, speedBackward, factorBackward, restrictedBackward)
    guard forward != nil || backward != nil else { return nil }
    return WayAttributes(
      forward: forward, backward: backward, name: tags["name"] ?? "", ref: tags["ref"] ?? "",
      highway: highway.isEmpty ? route : highway, isRoundabout: junction == "roundabout" || junction == "circular",
      lanes: Self.laneCount(tags))
  }

  /// Lanes as OSRM's guidance reads them: a positive whole `lanes`, else the directional sum.
  static func laneCount(_ tags: OSMTags) -> Int {
    let positive = { (value: String?) -> Int? in value.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } }
    if let lanes = tags["lanes"] { return positive(lanes) ?? 0 }
    return (positive(tags["lanes:forward"]) ?? 0) + (positive(tags["lanes:backward"]) ?? 0)
  }

  /// The first key of `keys` with a value for each direction (`key:forward`, `key:backward`, `key`).
  func directional(_ tags: OSMTags, _ keys: [String]) -> (forward: String?, backward: String?) {
    var forward: String?
    var backward: String?
    for key in keys {
      forward = forward ?? tags["\(key):forward"]
      backward = backward ?? tags["\(key):backward"]
      if forward == nil || backward == nil, let common = tags[key] {
        forward = forward ?? common
        backward = backward ?? common
      }
      if forward != nil && backward != nil { break }
    }
    return (forward, backward)
  }

  /// `a;b` lists keep their most permissive value.
  func resolveAccess(_ value: String) -> String {
    guard value.contains(";") else { return value }
    let rank = { (v: String) -> Int in
      self.accessAllowed.contains(v) ? 3 : self.accessRestricted.contains(v) ? 2 : self.accessDenied.contains(v) ? 1 : 0
    }
    return value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.max { rank($0) < rank($1) }
      ?? value
  }

  /// km/h of a `maxspeed` value: a number (with `mph`), or a symbolic limit such as `FR:urban`.
  func maxspeed(_ value: String) -> Double? {
    if let n = Self.leadingInteger(value) {
      return value.contains("mph") || value.contains("mp/h") ? Double(n) * 1.609 : Double(n)
    }
    let lowered = value.lowercased()
    if let speed = maxspeedTable[lowered] { return speed }
    if let colon = lowered.firstIndex(of: ":") {
      let kind = lowered[lowered.index(after: colon)...].prefix { $0.isLetter }
      return maxspeedTableDefault[String(kind)]
    }
    return nil
  }

  static func leadingInteger(_ value: String) -> Int? {
    Int(value.prefix { $0.isASCII && $0.isNumber })
  }

  /// Metres of a length tag ("2.5", "2,5 m", "6'6\"").
  static func meters(_ value: String) -> Double? {
    let normalized = value.replacingOccurrences(of: ",", with: ".")
    guard let start = normalized.firstIndex(where: { $0.isASCII && $0.isNumber }) else { return nil }
    var number = ""
    var seenDot = false
    for c in normalized[start...] {
      if c.isASCII && c.isNumber {
        number.append(c)
      } else if c == "." && !seenDot {
        seenDot = true
        number.append(c)
      } else {
        break
      }
    }
    guard var n = Double(number) else { return nil }
    if let feet = normalized.firstIndex(of: "'") {
      n *= 12
      if let inches = Self.leadingInteger(String(normalized[normalized.index(after: feet)...])) { n += Double(inches) }
      n *= 0.0254
    }
    return n
  }

  static func height(_ value: String) -> Double? {
    ["default", "none", "no-sign", "unsigned"].contains(value) ? 4.5 : meters(value)
  }
}

// MARK: - Nodes and turns

/// What a node means for a car.
public struct NodeAttributes: Sendable, Hashable {
  /// Cars cannot pass (bollard, block, …).
  public var blocks = false
  /// Seconds added to every turn through the node (gates, signals, stop and give-way signs).
  public var delay: Double = 0
  public var isTrafficSignal = false

  public init() {}
  public var isPlain: Bool { !blocks && delay == 0 && !isTrafficSignal }
}

extension CarProfile {
  public func node(_ tags: OSMTags) -> NodeAttributes {
    var result = NodeAttributes()
    if tags.isEmpty { return result }
    if let access = accessHierarchy.lazy.compactMap({ tags[$0] }).first.map(resolveAccess) {
      if accessDenied.contains(access) && !accessRestricted.contains(access) { result.blocks = true }
    } else if let barrier = tags["barrier"] {
      let tooLow =
        barrier == "height_restrictor" && (tags["maxheight"].flatMap(Self.height).map { $0 < vehicleHeight } ?? false)
      let risingBollard = tags["bollard"] == "rising"
      let flatKerb = tags["kerb"] == "lowered" || tags["kerb"] == "flush"
      let crossingKerb = barrier == "kerb" && tags["highway"] == "crossing"
      let audibleFence = barrier == "fence" && (tags["sensory"] == "audible" || tags["sensory"] == "audio")
      let penalty = barrierPenalties[barrier]
      if (!passableBarriers.contains(barrier) && !risingBollard && !flatKerb && !crossingKerb && !audibleFence
        && penalty == nil) || tooLow
      {
        result.blocks = true
      }
      if let penalty { result.delay += penalty }
    }
    switch tags["highway"] {
    case "traffic_signals":
      result.isTrafficSignal = true
      result.delay += trafficSignalPenalty
    case "stop": result.delay += stopPenalty
    case "give_way": result.delay += giveWayPenalty
    default: break
    }
    return result
  }

  /// Seconds for a turn of `angle` degrees (positive right, negative left, ±180 a U-turn) at a
  /// junction of `roads` roads, as OSRM's car profile computes it.
  public func turnCost(angle: Double, roads: Int, isUTurn: Bool, involvesRoundabout: Bool = false) -> Double {
    guard roads > 2 || isUTurn else { return 0 }
    var seconds: Double
    if angle >= 0 {
      seconds = turnPenalty / (1 + exp(-((13 / turnBias) * angle / 180 - 6.5 * turnBias)))
    } else {
      seconds = turnPenalty / (1 + exp(-((13 * turnBias) * -angle / 180 - 6.5 / turnBias)))
    }
    // Right-hand traffic: a left turn crosses oncoming lanes.
    if angle < 0 && !isUTurn && roads > 2 && !involvesRoundabout {
      let sharpness = 1 / (1 + exp(-(13 * abs(angle) / 180 - 3.25)))
      seconds += oncomingTurnPenalty * sharpness
    }
    if isUTurn { seconds += uTurnPenalty }
    return seconds
  }
}
