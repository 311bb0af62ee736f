import Foundation

/// How a car may use a way in one direction.
public struct WayDirection: Sendable, Hashable {
  /// km/h, for durations.
  public var speed: Double
  /// km/h scaled by the routing penalties, for choosing paths.
  public var rate: Double
  /// Only for starting or ending there (private, destination…).
  public var restricted: Bool
  public var classes: RoadClasses = []
}

/// A drivable way as the profile sees it.
public struct WayAttributes: Sendable, Hashable {
  public var forward: WayDirection?
  public var backward: WayDirection?
  /// Seconds to drive the whole way when it is timed rather than driven at a speed (a ferry's
  /// or a movable bridge's `duration`); shared out over its segments.
  public var duration: Double?
  public var name: String
  /// `ref`, its list items separated by "; ".
  public var ref: String
  /// What signs at the way announce (`destination`, `destination:ref`), for one-ways.
  public var destinations: String = ""
  /// `junction:ref`: the exit number.
  public var exits: String = ""
  /// `name:pronunciation`: how the name is spoken.
  public var pronunciation: String = ""
  public var highway: String
  public var roadClass: RoadClass
  /// `junction=roundabout`.
  public var isRoundabout: Bool
  /// `junction=circular`.
  public var isCircular: Bool = false
  /// A ferry or shuttle train carries the car.
  public var isFerry: Bool = false
  /// A trip may start or end on the way.
  public var isStartpoint: Bool = true
  /// The way's own `driving_side`, or the profile's; nil leaves it to where the way is.
  public var drivingSide: DrivingSide?
  /// `lanes`, or `lanes:forward` + `lanes:backward`; 0 when not tagged.
  public var lanes: Int = 0
  /// `turn:lanes` as a car meets them in each direction, nil when not tagged (OSRM's
  /// `get_turn_lanes`).
  public var turnLanesForward: String?
  public var turnLanesBackward: String?
}

extension CarProfile {
  /// The way's driving attributes, or nil when cars cannot use it at all. The rules run in the
  /// order of OSRM's car profile (`process_way`), each named after its handler there.
  public func way(_ tags: OSMTags) -> WayAttributes? {
    let highway = tags["highway"] ?? ""
    let route = tags["route"] ?? ""
    guard !highway.isEmpty || !route.isEmpty, !isBlocked(tags, highway: highway) else { return nil }
    if avoidedHighways.contains(highway) { return nil }

    // Size: height, width, length, weight.
    var forwardOK = true
    var backwardOK = true
    func limit(_ keys: [String], _ parse: (String) -> Double?, _ allows: (Double) -> Bool) {
      let (forward, backward) = directional(tags, keys)
      if let value = forward.flatMap(parse), !allows(value) { forwardOK = false }
      if let value = backward.flatMap(parse), !allows(value) { backwardOK = false }
    }
    limit(["maxheight:physical", "maxheight"], TagValues.height) { $0 >= vehicleHeight }
    limit(["maxwidth:physical", "maxwidth", "width", "est_width"], TagValues.meters) { $0 > vehicleWidth }
    limit(["maxlength"], TagValues.meters) { $0 >= vehicleLength }
    limit(["maxweightrating", "maxweight"], TagValues.kilograms) { $0 >= vehicleWeight }

    // Access: the most specific of motorcar → motor_vehicle → vehicle → access, per direction.
    let (rawForward, rawBackward) = directional(tags, accessHierarchy)
    let accessForward = rawForward.map(resolveAccess)
    let accessBackward = rawBackward.map(resolveAccess)
    let restrictable = restrictableHighways.contains(highway)
    var restrictedForward = restrictable && accessForward.map(accessRestricted.contains) == true
    var restrictedBackward = restrictable && accessBackward.map(accessRestricted.contains) == true
    if let a = accessForward, accessDenied.contains(a), !restrictedForward { forwardOK = false }
    if let a = accessBackward, accessDenied.contains(a), !restrictedBackward { backwardOK = false }
    guard forwardOK || backwardOK else { return nil }

    // One-ways: explicit, or implied on motorways and roundabouts.
    let oneway =
      ["motorcar", "motor_vehicle", "vehicle"].lazy.compactMap { tags["oneway:\($0)"] }.first ?? tags["oneway"]
    let junction = tags["junction"]
    var onewayForward = false
    var onewayBackward = false
    if oneway == "-1" {
      onewayBackward = true
      forwardOK = false
    } else if oneway == "yes" || oneway == "1" || oneway == "true" {
      onewayForward = true
      backwardOK = false
    } else if (highway == "motorway" || junction == "roundabout" || junction == "circular") && oneway != "no" {
      onewayForward = true
      backwardOK = false
    }
    let destinations =
      onewayForward || onewayBackward ? Self.destinations(tags, forward: onewayForward) : ""

    // Speeds: a ferry's or a movable bridge's, else the highway's, else by access alone.
    var speedForward: Double?
    var speedBackward: Double?
    var duration: Double?
    var isFerry = false
    if let speed = routeSpeeds[route], speed > 0 {
      isFerry = true
      speedForward = speed
      speedBackward = speed
      duration = tags["duration"].flatMap(TagValues.seconds).map { max($0, 1) }
    } else if let bridge = tags["bridge"], let speed = bridgeSpeeds[bridge], speed > 0 {
      if let timed = tags["duration"].flatMap(TagValues.seconds) {
        duration = max(timed, 1)
      } else {
        speedForward = speed
        speedBackward = speed
      }
    }
    if speedForward == nil && speedBackward == nil {
      if let speed = highwaySpeeds[highway] {
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
    }
    guard speedForward != nil || speedBackward != nil || duration != nil else { return nil }

    // High-occupancy roads: only to start or end there (OSRM avoids `hov_lanes`).
    if tags["hov"] == "designated" {
      restrictedForward = true
      restrictedBackward = true
    }
    let (hovForward, hovBackward) = directionalByKey(tags, "hov:lanes", onewayForward, onewayBackward)
    if Self.allLanesDesignated(hovForward) { restrictedForward = true }
    if Self.allLanesDesignated(hovBackward) { restrictedBackward = true }

    // Posted limits, then surface caps.
    let (maxForward, maxBackward) = directional(
      tags, ["maxspeed:advisory", "maxspeed", "source:maxspeed", "maxspeed:type"])
    if let limit = maxForward.map(maxspeed), limit > 0 { speedForward = limit * maxspeedFactor }
    if let limit = maxBackward.map(maxspeed), limit > 0 { speedBackward = limit * maxspeedFactor }
    for (key, table) in [("surface", surfaceSpeeds), ("tracktype", tracktypeSpeeds), ("smoothness", smoothnessSpeeds)] {
      if let value = tags[key], let cap = table[value] {
        speedForward = speedForward.map { min($0, cap) }
        speedBackward = speedBackward.map { min($0, cap) }
      }
    }

    // Routing penalties: factors of speed that steer the choice of path.
    let (factorForward, factorBackward) = penalties(tags, bidirectional: forwardOK && backwardOK, oneway: oneway)

    // Classes, for `exclude` and guidance.
    var common: RoadClasses = []
    if let tunnel = tags["tunnel"], tunnel != "no" { common.insert(.tunnel) }
    if highway == "motorway" || highway == "motorway_link" { common.insert(.motorway) }
    let (tollForward, tollBackward) = directionalByKey(tags, "toll", onewayForward, onewayBackward)
    let (routeForward, routeBackward) = directionalByKey(tags, "route", onewayForward, onewayBackward)
    func classes(toll: String?, route: String?, restricted: Bool) -> RoadClasses {
      var result = common
      if toll == "yes" { result.insert(.toll) }
      if route == "ferry" { result.insert(.ferry) }
      if restricted { result.insert(.restricted) }
      return result
    }

    let direction = { (ok: Bool, speed: Double?, factor: Double, restricted: Bool, classes: RoadClasses) in
      guard ok else { return WayDirection?.none }
      if let speed, speed > 0 {
        return WayDirection(speed: speed, rate: speed * factor, restricted: restricted, classes: classes)
      }
      // Timed without a speed: the rate only carries the penalty factor.
      guard duration != nil else { return nil }
      return WayDirection(speed: 1, rate: factor, restricted: restricted, classes: classes)
    }
    let forward = direction(
      forwardOK, speedForward, factorForward, restrictedForward,
      classes(toll: tollForward, route: routeForward, restricted: restrictedForward))
    let backward = direction(
      backwardOK, speedBackward, factorBackward, restrictedBackward,
      classes(toll: tollBackward, route: routeBackward, restricted: restrictedBackward))
    guard forward != nil || backward != nil else { return nil }

    // Not a place to start or end: a ferry, or a private service road.
    let isStartpoint = !isFerry && !(highway == "service" && accessForward == "private")
    let side: DrivingSide? =
      switch tags["driving_side"] {
      case "left": .left
      case "right": .right
      default: drivingSide
      }
    let turnLanes = self.turnLanes(tags, onewayForward, onewayBackward)
    return WayAttributes(
      forward: forward, backward: backward, duration: duration, name: tags["name"] ?? "",
      ref: tags["ref"].map { TagValues.canonicalList($0, separator: ";") } ?? "", destinations: destinations,
      exits: tags["junction:ref"].map { TagValues.canonicalList($0, separator: ";") } ?? "",
      pronunciation: tags["name:pronunciation"] ?? "",
      highway: highway.isEmpty ? route : highway, roadClass: RoadClass(highway: highway),
      isRoundabout: junction == "roundabout", isCircular: junction == "circular", isFerry: isFerry,
      isStartpoint: isStartpoint, drivingSide: side, lanes: Self.laneCount(tags),
      turnLanesForward: turnLanes.forward, turnLanesBackward: turnLanes.backward)
  }

  /// OSRM's `get_turn_lanes`: `turn:lanes` per direction, without the lanes cars may not use
  /// (`vehicle:lanes`), or else without bus and taxi lanes at either edge (`lanes:psv` and kin).
  func turnLanes(_ tags: OSMTags, _ onewayForward: Bool, _ onewayBackward: Bool) -> (
    forward: String?, backward: String?
  ) {
    let counts = ["lanes:psv", "lanes:taxi", "lanes:share_taxi", "lanes:minibus", "lanes:bus"].map {
      directionalByKey(tags, $0, onewayForward, onewayBackward)
    }
    // The first key tagged decides, even when its value is not a count.
    let count = { (value: String?) -> Int in
      guard let value, let number = Double(value.trimmingCharacters(in: .whitespaces)), number > 0,
        number == number.rounded(), number < 1e6
      else { return 0 }
      return Int(number)
    }
    let psvForward = count(counts.lazy.compactMap(\.forward).first)
    let psvBackward = count(counts.lazy.compactMap(\.backward).first)
    let (turnForward, turnBackward) = directionalByKey(tags, "turn:lanes", onewayForward, onewayBackward)
    let (vehicleForward, vehicleBackward) = directionalByKey(tags, "vehicle:lanes", onewayForward, onewayBackward)
    // Seen backwards, the road's left edge is its right one.
    return (
      Self.carLanes(turnForward, access: vehicleForward, trimLeft: psvBackward, trimRight: psvForward),
      Self.carLanes(turnBackward, access: vehicleBackward, trimLeft: psvForward, trimRight: psvBackward)
    )
  }

  /// OSRM's `process_lanes`: `applyAccessTokens` when `vehicle:lanes` lists every lane, else
  /// `trimLaneString`, which drops leading or trailing empty lanes that the counts name.
  static func carLanes(_ lanes: String?, access: String?, trimLeft: Int, trimRight: Int) -> String? {
    guard let lanes else { return nil }
    if let access {
      let tokens = lanes.split(separator: "|", omittingEmptySubsequences: false)
      let allowed = access.split(separator: "|", omittingEmptySubsequences: false)
      guard tokens.count == allowed.count else { return lanes }
      return zip(tokens, allowed).filter { $0.1 == "yes" }.map { String($0.0) }.joined(separator: "|")
    }
    var result = Array(lanes.utf8)
    if trimLeft > 0, trimLeft < result.count, result.prefix(trimLeft).allSatisfy({ $0 == UInt8(ascii: "|") }) {
      result.removeFirst(trimLeft)
    }
    if trimRight > 0, trimRight < result.count, result.suffix(trimRight).allSatisfy({ $0 == UInt8(ascii: "|") }) {
      result.removeLast(trimRight)
    }
    return String(decoding: result, as: UTF8.self)
  }

  /// Ways no car uses whatever else they say: areas, construction, proposals, reversible
  /// one-ways (their direction changes with the time of day), impassable ones.
  func isBlocked(_ tags: OSMTags, highway: String) -> Bool {
    if tags["area"] == "yes" || highway == "steps" || highway == "construction" || tags["railway"] == "construction"
      || tags["oneway"] == "reversible" || tags["impassable"] == "yes" || tags["status"] == "impassable"
    {
      return true
    }
    if let construction = tags["construction"], !constructionAllowed.contains(construction) { return true }
    // `proposed=*` on a built road only proposes an upgrade.
    if tags["proposed"] != nil && (highway.isEmpty || highway == "proposed") { return true }
    if let service = tags["service"], forbiddenServices.contains(service) { return true }
    return false
  }

  /// Factors of speed per direction: service kinds, narrow or unmarked two-way roads, alternating
  /// one-ways, side roads, and `priority` for the other direction.
  func penalties(_ tags: OSMTags, bidirectional: Bool, oneway: String?) -> (forward: Double, backward: Double) {
    var factor = 1.0
    if let service = tags["service"], let penalty = servicePenalties[service] { factor = min(factor, penalty) }
    var widthFactor = 1.0
    if tags["lane_markings"] == "no" && bidirectional { widthFactor = noLaneMarkingsFactor }
    if let width = tags["width"].flatMap(TagValues.meters), bidirectional {
      widthFactor = width <= 3 ? 0.5 : width < 4 ? 0.6 : width < 5 ? 0.75 : width < 6 ? 0.8 : widthFactor
    }
    if let lanes = tags["lanes"].flatMap(TagValues.leadingInteger), lanes <= 1, bidirectional { widthFactor = 0.5 }
    factor = min(factor, widthFactor)
    if oneway == "alternating" { factor = min(factor, 0.4) }
    if tags["side_road"] == "yes" || tags["side_road"] == "rotary" { factor = min(factor, sideRoadFactor) }
    var forward = factor
    var backward = factor
    if tags["priority"] == "forward" { backward = min(backward, priorityFactor) }
    if tags["priority"] == "backward" { forward = min(forward, priorityFactor) }
    return (forward, backward)
  }

  /// Lanes as OSRM's guidance reads them: a positive whole `lanes`, else the directional sum.
  static func laneCount(_ tags: OSMTags) -> Int {
    let positive = { (value: String?) -> Int? in value.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } }
    if let lanes = tags["lanes"] { return positive(lanes) ?? 0 }
    return (positive(tags["lanes:forward"]) ?? 0) + (positive(tags["lanes:backward"]) ?? 0)
  }

  /// Every lane of a `hov:lanes` value is `designated`.
  static func allLanesDesignated(_ lanes: String?) -> Bool {
    guard let lanes else { return false }
    return lanes.split(separator: "|", omittingEmptySubsequences: false).allSatisfy { $0 == "designated" }
  }

  /// What the signs of a one-way announce: "A59: Düsseldorf, Köln" from `destination:ref` and
  /// `destination`, else either alone, else `destination:street`.
  static func destinations(_ tags: OSMTags, forward: Bool) -> String {
    let suffix = forward ? ":forward" : ":backward"
    let value = { (key: String) -> String? in
      (tags[key + suffix] ?? tags[key]).map { $0.replacingOccurrences(of: ";", with: ", ") }
    }
    let ref = value("destination:ref")
    let destination = value("destination")
    let joined: String
    if let ref, let destination {
      joined = "\(ref): \(destination)"
    } else {
      joined = ref ?? destination ?? value("destination:street") ?? ""
    }
    return TagValues.canonicalList(joined, separator: ",")
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

  /// One key per direction, where a one-way's plain value only speaks for its direction.
  func directionalByKey(_ tags: OSMTags, _ key: String, _ onewayForward: Bool, _ onewayBackward: Bool) -> (
    forward: String?, backward: String?
  ) {
    var forward = tags["\(key):forward"]
    var backward = tags["\(key):backward"]
    if forward == nil || backward == nil, let common = tags[key] {
      if onewayForward {
        forward = forward ?? common
      } else if onewayBackward {
        backward = backward ?? common
      } else {
        forward = forward ?? common
        backward = backward ?? common
      }
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

  /// km/h of a `maxspeed` value: a number (with `mph`), or a symbolic limit such as `FR:urban`;
  /// 0 when it names none (`walk`, `signals`, or a table entry of 0).
  func maxspeed(_ value: String) -> Double {
    if let n = TagValues.speed(value) { return n }
    let lowered = value.lowercased()
    if let speed = maxspeedTable[lowered] { return speed }
    return TagValues.limitKind(lowered).flatMap { maxspeedTableDefault[$0] } ?? 0
  }
}
