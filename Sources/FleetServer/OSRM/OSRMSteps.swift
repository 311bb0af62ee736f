import FleetCore
import FleetRouting

/// OSRM's route step: one maneuver and the road driven until the next.
struct OSRMStep: Encodable {
  var geometry: OSRMGeometry
  var maneuver: OSRMManeuver
  var mode: String
  var driving_side: String
  var name: String
  var ref: String?
  var pronunciation: String?
  var destinations: String?
  var exits: String?
  var rotary_name: String?
  var rotary_pronunciation: String?
  var intersections: [OSRMIntersection]
  var weight: Double
  var duration: Double
  var distance: Double
  /// Mapbox's extensions, on request (`voice_instructions`, `banner_instructions`).
  var voiceInstructions: [OSRMVoiceInstruction]?
  var bannerInstructions: [OSRMBannerInstruction]?

  init(_ step: RouteStep, format: String) {
    geometry = OSRMGeometry(step.geometry, format: format)
    maneuver = OSRMManeuver(step.maneuver)
    mode = step.isFerry ? "ferry" : "driving"
    driving_side = step.drivingSide.rawValue
    name = step.name
    ref = step.ref.isEmpty ? nil : step.ref
    pronunciation = step.pronunciation.isEmpty ? nil : step.pronunciation
    destinations = step.destinations.isEmpty ? nil : step.destinations
    exits = step.exits.isEmpty ? nil : step.exits
    rotary_name = step.rotaryName.isEmpty ? nil : step.rotaryName
    // As OSRM: a rotary's pronunciation only beside its name.
    rotary_pronunciation = rotary_name == nil || step.rotaryPronunciation.isEmpty ? nil : step.rotaryPronunciation
    intersections = step.intersections.map(OSRMIntersection.init)
    weight = OSRMFront.round(step.weight)
    duration = OSRMFront.round(step.duration)
    distance = OSRMFront.round(step.distance)
  }
}

struct OSRMVoiceInstruction: Encodable {
  var distanceAlongGeometry: Double
  var announcement: String
  var ssmlAnnouncement: String

  init(_ spoken: StepInstructions.Spoken) {
    distanceAlongGeometry = spoken.distanceAlongGeometry
    announcement = spoken.announcement
    ssmlAnnouncement = spoken.ssmlAnnouncement
  }
}

/// A banner as Mapbox's Directions API writes one: its primary line, with the maneuver's type
/// and modifier for the arrow and the text as one component.
struct OSRMBannerInstruction: Encodable {
  struct Component: Encodable {
    var text: String
    var type: String
    /// Lane components only.
    var directions: [String]?
    var active: Bool?
    var active_direction: String?
  }

  struct Text: Encodable {
    var text: String
    var type: String
    var modifier: String?
    var components: [Component]
  }

  var distanceAlongGeometry: Double
  var primary: Text
  var secondary: Text?
  /// The lanes at the maneuver, as Mapbox's lane components.
  var sub: Text?

  init(_ banner: StepInstructions.Banner) {
    distanceAlongGeometry = OSRMFront.round(banner.distanceAlongGeometry)
    var components = [Component(text: banner.text, type: "text")]
    if let exit = banner.exit { components.append(Component(text: "\(exit)", type: "exit-number")) }
    primary = Text(
      text: banner.text, type: banner.kind.rawValue, modifier: banner.modifier?.rawValue, components: components)
    if !banner.lanes.isEmpty {
      sub = Text(
        text: "", type: banner.kind.rawValue, modifier: banner.modifier?.rawValue,
        components: banner.lanes.map {
          Component(
            text: "", type: "lane", directions: $0.directions, active: $0.active, active_direction: $0.activeDirection)
        })
    }
  }
}

struct OSRMManeuver: Encodable {
  var bearing_after: Int
  var bearing_before: Int
  var location: [Double]
  var type: String
  var modifier: String?
  var exit: Int?

  init(_ maneuver: RouteStep.Maneuver) {
    bearing_after = maneuver.bearingAfter
    bearing_before = maneuver.bearingBefore
    location = [maneuver.location.longitude, maneuver.location.latitude]
    type = maneuver.kind.rawValue
    modifier = maneuver.modifier?.rawValue
    exit = maneuver.exit
  }
}

struct OSRMIntersection: Encodable {
  var out: Int?
  var `in`: Int?
  var entry: [Bool]
  var bearings: [Int]
  var location: [Double]
  var classes: [String]?
  var lanes: [OSRMLane]?

  init(_ intersection: RouteStep.Intersection) {
    out = intersection.leavingRoad
    `in` = intersection.arrivingRoad
    entry = intersection.entry
    bearings = intersection.bearings
    location = [intersection.location.longitude, intersection.location.latitude]
    classes = intersection.classes.isEmpty ? nil : intersection.classes
    let lanes = intersection.lanes
    self.lanes = lanes.isEmpty ? nil : lanes.map { OSRMLane(indications: $0.indications, valid: $0.valid) }
  }
}

/// One lane at an intersection, left to right: its arrows, and whether the route may use it.
struct OSRMLane: Encodable {
  var indications: [String]
  var valid: Bool
}

/// OSRM's per-segment annotation of a leg: one value per pair of consecutive points of its
/// geometry (`nodes`: one per point), only the kinds asked for.
struct OSRMAnnotation: Encodable {
  /// The annotation kinds OSRM knows, in the order `annotations=true` gives them.
  static let kinds: Set<String> = ["duration", "distance", "speed", "nodes", "weight", "datasources"]

  struct Metadata: Encodable { var datasource_names = ["lua profile"] }

  var metadata: Metadata?
  var datasources: [Int]?
  var weight: [Double]?
  var nodes: [Int64]?
  var distance: [Double]?
  var duration: [Double]?
  var speed: [Double]?

  init(_ leg: RouteLeg, kinds: Set<String>) {
    var distances: [Double] = []
    var durations: [Double] = []
    var weights: [Double] = []
    let points = leg.geometry
    // Each span's seconds and weight spread over its segments by length.
    for span in leg.spans where span.lastPoint > span.firstPoint {
      let lengths = (span.firstPoint..<span.lastPoint).map { points[$0].distance(to: points[$0 + 1]) }
      let total = lengths.reduce(0, +)
      for length in lengths {
        let share = total > 0 ? length / total : 1 / Double(lengths.count)
        distances.append(length)
        durations.append(span.duration * share)
        weights.append(span.weight * share)
      }
    }
    if kinds.contains("datasources") {
      datasources = Array(repeating: 0, count: distances.count)
      metadata = Metadata()
    }
    if kinds.contains("weight") { weight = weights.map(OSRMFront.round) }
    if kinds.contains("nodes") { nodes = leg.nodes }
    if kinds.contains("distance") { distance = distances }
    if kinds.contains("duration") { duration = durations.map(OSRMFront.round) }
    if kinds.contains("speed") {
      speed = zip(distances, durations).map { $1 > 0 ? OSRMFront.round($0 / $1) : 0 }
    }
  }
}

extension OSRMLeg {
  /// OSRM's leg summary with steps: the names of the two roads driven longest, in route order.
  static func summary(_ steps: [RouteStep]) -> String {
    var seconds: [String: (first: Int, duration: Double)] = [:]
    for (i, step) in steps.enumerated() {
      let label = step.name.isEmpty ? step.ref : step.name
      guard !label.isEmpty else { continue }
      seconds[label, default: (i, 0)].duration += step.duration
    }
    return seconds.sorted { ($0.value.duration, -$0.value.first) > ($1.value.duration, -$1.value.first) }
      .prefix(2).sorted { $0.value.first < $1.value.first }.map(\.key).joined(separator: ", ")
  }
}
