/// What kind of road a way is, as far as junction geometry cares (OSRM's road classification):
/// how wide its junctions are drawn and whether its shape is worth reading closely.
public enum RoadClass: UInt8, Sendable, Hashable, Codable, CaseIterable {
  case motorway, motorwayLink, trunk, trunkLink, primary, primaryLink, secondary, secondaryLink
  case tertiary, tertiaryLink, unclassified, residential, livingStreet, service, other
  /// Tracks and paths (OSRM's bike-path class), and foot ways (its foot-path class).
  case track, footPath

  public init(highway: String) {
    switch highway {
    case "motorway": self = .motorway
    case "motorway_link": self = .motorwayLink
    case "trunk": self = .trunk
    case "trunk_link": self = .trunkLink
    case "primary": self = .primary
    case "primary_link": self = .primaryLink
    case "secondary": self = .secondary
    case "secondary_link": self = .secondaryLink
    case "tertiary": self = .tertiary
    case "tertiary_link": self = .tertiaryLink
    case "unclassified": self = .unclassified
    case "residential": self = .residential
    case "living_street": self = .livingStreet
    case "service": self = .service
    case "track", "path": self = .track
    case "footway", "pedestrian", "steps": self = .footPath
    default: self = .other
    }
  }

  /// Service roads, tracks and the like: drawn so loosely that only their first metres count.
  var isLowPriority: Bool { self == .service || self == .other || self == .track || self == .footPath }

  /// A motorway or trunk road, its links excluded (OSRM's motorway class).
  var isMotorway: Bool { self == .motorway || self == .trunk }

  /// A link road of any class (OSRM's link class).
  var isLink: Bool { [.motorwayLink, .trunkLink, .primaryLink, .secondaryLink, .tertiaryLink].contains(self) }

  /// A slip road onto or off a motorway or trunk road (OSRM's ramp class).
  var isRamp: Bool { self == .motorwayLink || self == .trunkLink }

  /// How many lane widths a junction of this road may spread over (motorway-like roads, where
  /// exits leave at a slant, most).
  var offsetCorrectionFactor: Double {
    switch self {
    case .motorway, .motorwayLink, .trunk, .trunkLink: 2.5
    case .primary: 1.5
    default: 1
    }
  }
}
