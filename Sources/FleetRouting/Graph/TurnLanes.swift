/// The turns one lane allows, as painted on its arrows: OSRM's `TurnLaneType` bits.
public struct LaneIndications: OptionSet, Sendable, Hashable, Codable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  public static let none = LaneIndications(rawValue: 1 << 0)
  public static let straight = LaneIndications(rawValue: 1 << 1)
  public static let sharpLeft = LaneIndications(rawValue: 1 << 2)
  public static let left = LaneIndications(rawValue: 1 << 3)
  public static let slightLeft = LaneIndications(rawValue: 1 << 4)
  public static let slightRight = LaneIndications(rawValue: 1 << 5)
  public static let right = LaneIndications(rawValue: 1 << 6)
  public static let sharpRight = LaneIndications(rawValue: 1 << 7)
  public static let uturn = LaneIndications(rawValue: 1 << 8)
  public static let mergeToLeft = LaneIndications(rawValue: 1 << 9)
  public static let mergeToRight = LaneIndications(rawValue: 1 << 10)

  /// Each bit's OSM value (`turn:lanes`) and its name in responses, in bit order.
  static let vocabulary: [(osm: String, name: String)] = [
    ("none", "none"), ("through", "straight"), ("sharp_left", "sharp left"), ("left", "left"),
    ("slight_left", "slight left"), ("slight_right", "slight right"), ("right", "right"),
    ("sharp_right", "sharp right"), ("reverse", "uturn"), ("merge_to_left", "merge to left"),
    ("merge_to_right", "merge to right"),
  ]

  /// The indications as OSRM's responses name them, in bit order.
  public var names: [String] {
    Self.vocabulary.indices.filter { rawValue & (1 << $0) != 0 }.map { Self.vocabulary[$0].name }
  }

  /// A road's lanes from left to right from a `turn:lanes` value (OSRM's
  /// `laneStringToDescription`): lanes separated by `|`, a lane's turns by `;`, a lane without
  /// any `none`. A value OSRM does not know empties the whole description (it is then known to
  /// be unusable, which is not the same as untagged).
  public static func description(_ value: String) -> [LaneIndications] {
    var lanes: [LaneIndications] = []
    for lane in value.split(separator: "|", omittingEmptySubsequences: false) {
      let turns = lane.split(separator: ";")
      var indications: LaneIndications = turns.isEmpty ? .none : []
      for turn in turns {
        guard let bit = vocabulary.firstIndex(where: { $0.osm == turn }) else { return [] }
        indications.insert(LaneIndications(rawValue: 1 << bit))
      }
      lanes.append(indications)
    }
    return lanes
  }
}
