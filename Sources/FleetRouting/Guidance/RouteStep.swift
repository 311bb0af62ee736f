import FleetGeometry

/// One instruction of turn-by-turn guidance, shaped as OSRM's route steps are: a maneuver where
/// it begins, the road driven until the next one, and the intersections passed on the way.
public struct RouteStep: Sendable, Hashable {
  /// OSRM's maneuver types.
  public enum Kind: String, Sendable, Hashable {
    case depart, arrive, turn, `continue`, fork, merge, notification, roundabout, rotary
    case newName = "new name"
    case onRamp = "on ramp"
    case offRamp = "off ramp"
    case endOfRoad = "end of road"
    case exitRoundabout = "exit roundabout"
    case exitRotary = "exit rotary"
    /// A roundabout small enough to be said as a turn.
    case roundaboutTurn = "roundabout turn"
  }

  /// OSRM's direction modifiers.
  public enum Modifier: String, Sendable, Hashable {
    case uturn, right, straight, left
    case sharpRight = "sharp right"
    case slightRight = "slight right"
    case slightLeft = "slight left"
    case sharpLeft = "sharp left"

    /// From a turn angle (180 straight on, below 180 to the right, 0 turning back), with OSRM's
    /// bounds (`getTurnDirection`).
    public init(turnAngle angle: Double) {
      switch angle {
      case let a where a > 0 && a < 60: self = .sharpRight
      case 60..<140: self = .right
      case 140..<160: self = .slightRight
      case 160...200: self = .straight
      case let a where a > 200 && a <= 220: self = .slightLeft
      case let a where a > 220 && a <= 300: self = .left
      case let a where a > 300 && a < 360: self = .sharpLeft
      default: self = .uturn
      }
    }

    /// Which side of the road a departure or arrival point lies on, from the angle between the
    /// asked point, the snapped point and the road (OSRM's `bearingToDirectionModifier`).
    init(sideAngle angle: Double) {
      self = angle < 135 ? .right : angle <= 225 ? .straight : .left
    }
  }

  public struct Maneuver: Sendable, Hashable {
    public var location: LatLng
    /// Whole degrees from north of the route's last metres before and first after the maneuver.
    public var bearingBefore: Int
    public var bearingAfter: Int
    public var kind: Kind
    public var modifier: Modifier?
    /// At roundabouts: the number of the exit taken, counted from the entry.
    public var exit: Int?
  }

  /// A junction the step passes: every road there by its bearing away from it (ascending), which
  /// may be entered from the road driven in, and which two roads the route uses.
  public struct Intersection: Sendable, Hashable {
    public var location: LatLng
    public var bearings: [Int]
    public var entry: [Bool]
    /// Index in `bearings` of the road arrived by (nil at a departure) and left by (nil at an arrival).
    public var arrivingRoad: Int?
    public var leavingRoad: Int?
    /// OSRM's classes of the road left by (`toll`, `motorway`, `ferry`, `restricted`, `tunnel`).
    public var classes: [String]
    /// The lanes of the road arrived by from left to right, when its `turn:lanes` are matched to
    /// this junction's turns (OSRM's `lane_description`), and which of them the route may use.
    public var laneDescription: [LaneIndications] = []
    public var turnLanes: LaneRange?

    /// Each lane, left to right, with whether the route may use it (OSRM's `lanes`).
    public var lanes: [(indications: [String], valid: Bool)] {
      guard let turnLanes else { return [] }
      return laneDescription.enumerated().map { position, lane in
        (lane.names, turnLanes.contains(laneDescription.count - 1 - position))
      }
    }
  }

  /// The lanes a turn may be made from, counted from the right (OSRM's `LaneTuple`).
  public struct LaneRange: Sendable, Hashable {
    public var count: Int
    public var firstFromRight: Int

    func contains(_ lane: Int) -> Bool { lane >= firstFromRight && lane < firstFromRight + count }
  }

  public var maneuver: Maneuver
  public var name: String
  public var ref: String
  public var destinations: String
  /// The road's exit numbers (`junction:ref`).
  public var exits: String
  /// The name of the roundabout driven round, at rotaries.
  public var rotaryName: String
  /// How `name` is spoken (`name:pronunciation`), empty when the map does not say.
  public var pronunciation: String = ""
  /// How `rotaryName` is spoken.
  public var rotaryPronunciation: String = ""
  public var isFerry: Bool
  public var drivingSide: DrivingSide
  public var geometry: [LatLng]
  public var distance: Double
  public var duration: Double
  public var weight: Double
  public var intersections: [Intersection]
}

extension RouteStep {
  /// How the step's road is named, as guidance compares it.
  var label: RoadLabel {
    RoadLabel(name: name, ref: ref, pronunciation: pronunciation, exits: exits, destinations: destinations)
  }

  /// OSRM's `haveSameName` (collapsing_utility.hpp): both roads named or numbered, and the
  /// change not one to say, read without the profile's suffixes as post-processing reads names.
  func hasSameName(as other: RouteStep) -> Bool {
    guard !(name.isEmpty && ref.isEmpty), !(other.name.isEmpty && other.ref.isEmpty) else { return false }
    return label == other.label || !RoadNames.requiresNameAnnounced(from: label, to: other.label, suffixes: [])
  }

  /// Takes another step's road names (OSRM's `AdaptStepSignage`), the rotary's name aside.
  mutating func adaptSignage(from other: RouteStep) {
    (name, ref, pronunciation, destinations, exits) = (
      other.name, other.ref, other.pronunciation, other.destinations, other.exits
    )
  }
}

extension RouteStep.Kind {
  /// Onto a roundabout: the steps that say its exit (OSRM's `entersRoundabout`).
  var entersRoundabout: Bool { self == .roundabout || self == .rotary || self == .roundaboutTurn }
  var leavesRoundabout: Bool { self == .exitRoundabout || self == .exitRotary }
}

extension RouteStep {
  /// Drives on through `next` without a maneuver of its own: its way, metres and time join this step.
  mutating func absorb(_ next: RouteStep) {
    geometry += next.geometry.dropFirst()
    distance += next.distance
    duration += next.duration
    weight += next.weight
    intersections += next.intersections
  }
}
