/// The cost of driving one road edge in one direction.
public struct EdgeCost: Sendable, Hashable, Codable {
  /// Seconds at the profile's speed.
  public var duration: Double
  /// What routing minimises: duration at the penalised rate (see `CarProfile.servicePenalties`).
  public var weight: Double
  /// Only for starting or ending a trip (private or destination-only access).
  public var restricted: Bool
  /// OSRM's way classes in this direction (what `exclude` and intersections' `classes` name).
  public var classes: RoadClasses = []
}

/// The classes a road direction belongs to, as OSRM's car profile names them.
public struct RoadClasses: OptionSet, Sendable, Hashable, Codable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public static let toll = RoadClasses(rawValue: 1)
  public static let motorway = RoadClasses(rawValue: 2)
  public static let ferry = RoadClasses(rawValue: 4)
  public static let restricted = RoadClasses(rawValue: 8)
  public static let tunnel = RoadClasses(rawValue: 16)

  /// In OSRM's order, which is also the order responses list them in.
  public static let named: [(name: String, value: RoadClasses)] = [
    ("toll", .toll), ("motorway", .motorway), ("ferry", .ferry), ("restricted", .restricted), ("tunnel", .tunnel),
  ]
  /// The classes a route may be asked to avoid (OSRM car's `excludable`), one at a time: the
  /// combinations the profile offers.
  public static let excludable: RoadClasses = [.toll, .motorway, .ferry]
  public static let excludableSets: [RoadClasses] = [.toll, .motorway, .ferry]

  public var names: [String] { Self.named.filter { contains($0.value) }.map(\.name) }
}

/// The side of the road traffic keeps to.
public enum DrivingSide: String, Sendable, Hashable, Codable {
  case right, left
}

/// What a road edge is, beyond its costs: what guidance, snapping and turn costs read.
public struct RoadFlags: OptionSet, Sendable, Hashable, Codable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// `junction=roundabout`.
  public static let roundabout = RoadFlags(rawValue: 1)
  /// `junction=circular`: one-way round, but not a roundabout's rules (OSRM calls it a rotary).
  public static let circular = RoadFlags(rawValue: 2)
  /// Traffic keeps left here.
  public static let leftHandDriving = RoadFlags(rawValue: 4)
  /// A trip may start or end here (not on a ferry, not on a private service road).
  public static let startpoint = RoadFlags(rawValue: 8)
  /// A ferry or a shuttle train carries the car (OSRM's `ferry` mode).
  public static let ferry = RoadFlags(rawValue: 16)
}

/// A road between two junctions along one OSM way, with its shape.
public struct RoadEdge: Sendable, Hashable, Codable {
  /// Junction indices at either end.
  public var from: Int32
  public var to: Int32
  /// The shape: `RoadNetwork.geometry[geometryStart..<geometryEnd]`, point indices from `from` to `to`.
  public var geometryStart: Int32
  public var geometryEnd: Int32
  public var length: Double
  /// Driving from `from` to `to`; nil when not allowed.
  public var forward: EdgeCost?
  /// Driving from `to` to `from`; nil when not allowed.
  public var backward: EdgeCost?
  /// Indices into `RoadNetwork.names`: `name`, `ref`, the signposted destinations (one-ways
  /// only), `junction:ref` and `name:pronunciation`; 0 is the empty string.
  public var nameIndex: Int32
  public var refIndex: Int32 = 0
  public var destinationsIndex: Int32 = 0
  public var exitsIndex: Int32 = 0
  public var pronunciationIndex: Int32 = 0
  public var wayID: Int64
  public var flags: RoadFlags = [.startpoint]
  public var roadClass: RoadClass
  /// Lanes tagged on the way, 0 when unknown.
  public var lanes: UInt8
  /// Indices into `RoadNetwork.turnLanes`, per direction as driven (from `from` to `to` and
  /// back); 0 when the way tags none.
  public var turnLanesForward: UInt32 = 0
  public var turnLanesBackward: UInt32 = 0

  public func turnLanes(reversed: Bool) -> UInt32 { reversed ? turnLanesBackward : turnLanesForward }

  public func cost(reversed: Bool) -> EdgeCost? { reversed ? backward : forward }

  /// Goes round a junction one way (`junction=roundabout` or `circular`).
  public var isRoundabout: Bool { !flags.isDisjoint(with: [.roundabout, .circular]) }
  public var drivingSide: DrivingSide { flags.contains(.leftHandDriving) ? .left : .right }
  public var isStartpoint: Bool { flags.contains(.startpoint) }
  public var isFerry: Bool { flags.contains(.ferry) }

  /// The indices of its label's strings (`RoadLabel`), in the graph file's order.
  var labelIndices: [Int32] { [nameIndex, refIndex, destinationsIndex, exitsIndex, pronunciationIndex] }

  /// The same label (OSRM's same name id): every string alike, as each is stored once.
  func hasSameLabel(as other: RoadEdge) -> Bool {
    nameIndex == other.nameIndex && refIndex == other.refIndex && destinationsIndex == other.destinationsIndex
      && exitsIndex == other.exitsIndex && pronunciationIndex == other.pronunciationIndex
  }

  /// No name, ref, destinations, pronunciation or exits (OSRM's empty name id).
  var hasEmptyLabel: Bool {
    nameIndex == 0 && refIndex == 0 && destinationsIndex == 0 && exitsIndex == 0 && pronunciationIndex == 0
  }

  /// Same road for guidance and junction geometry: label, class, flags and access alike.
  func describesSameRoad(as other: RoadEdge) -> Bool {
    hasSameLabel(as: other) && roadClass == other.roadClass && flags == other.flags
  }
}

/// A turn restriction of the source data, by way at a junction.
public struct TurnRestriction: Sendable, Hashable, Codable {
  public var via: Int32
  public var fromWay: Int64
  public var toWay: Int64
  /// `only_*`: from `fromWay` at `via`, `toWay` is the only way allowed; `no_*`: it is forbidden.
  public var isOnly: Bool
}

/// A turn restriction through roads instead of a junction (OSRM's via-way restrictions): from
/// `fromWay` along the road edges `via`, in order from the junction `start` where `fromWay`
/// meets them, the turn onto `toWay` at their far end is forbidden (`no_*`) or the only one
/// allowed (`only_*`). Drives onto the via roads from elsewhere are not bound.
public struct WayRestriction: Sendable, Hashable, Codable {
  public var fromWay: Int64
  public var start: Int32
  public var via: [Int32]
  public var toWay: Int64
  public var isOnly: Bool
}

/// Something at a junction that costs time to pass: traffic signals, a stop or give-way sign,
/// a gate. OSRM's obstacles.
public struct Obstacle: Sendable, Hashable, Codable {
  public enum Kind: UInt8, Sendable, Hashable, Codable {
    case trafficSignals, stop, minorStop, giveWay, gate
  }

  public var junction: Int32
  public var kind: Kind
  /// Seconds added to a turn through the junction.
  public var seconds: Float
  /// The directed edge an arrival must come by for the obstacle to apply (a sign facing one way
  /// of its road, `direction=forward`); -1 when it applies to every arrival.
  public var arrivingBy: Int32 = -1
}

/// The drivable road network: junctions, the edges between them with their shapes, and what
/// the profile said about nodes and turns. Built from OSM by `OSMExtractor`.
public struct RoadNetwork: Sendable, Codable {
  /// Every shape point of every edge.
  public var points: [FixedCoordinate] = []
  /// The OpenStreetMap node id of each point (empty for networks not built from OSM).
  public var pointNodes: [Int64] = []
  /// Junction index → point index.
  public var junctions: [Int32] = []
  /// Junctions cars cannot pass (barriers); only turning back is allowed there.
  public var blockedJunctions: [Bool] = []
  public var obstacles: [Obstacle] = []
  public var edges: [RoadEdge] = []
  public var geometry: [Int32] = []
  public var names: [String] = [""]
  /// Distinct `turn:lanes` descriptions, each lane's indications from left to right; the first
  /// stands for none (an untagged road), and an empty one for a value no car can read.
  public var turnLanes: [[LaneIndications]] = [[]]
  public var restrictions: [TurnRestriction] = []
  public var wayRestrictions: [WayRestriction] = []

  public init() {}

  public func shape(of edge: RoadEdge) -> ArraySlice<Int32> {
    geometry[Int(edge.geometryStart)..<Int(edge.geometryEnd)]
  }

  public func coordinate(ofJunction junction: Int32) -> FixedCoordinate { points[Int(junctions[Int(junction)])] }

  /// How a road is named, as guidance reads it.
  func label(of edge: RoadEdge) -> RoadLabel {
    RoadLabel(
      name: names[Int(edge.nameIndex)], ref: names[Int(edge.refIndex)],
      pronunciation: names[Int(edge.pronunciationIndex)],
      exits: names[Int(edge.exitsIndex)], destinations: names[Int(edge.destinationsIndex)])
  }
}

extension RoadNetwork {
  /// Names this network's road numbering: the same extract built by the same fleetd gives the
  /// same fingerprint, another extract or a rebuilt profile another (FNV-1a over every edge's way,
  /// ends and shape). What is kept per road (the usual traffic) is kept under it.
  public var fingerprint: String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    func mix(_ value: Int64) {
      hash = (hash ^ UInt64(bitPattern: value)) &* 0x100_0000_01b3
    }
    mix(Int64(edges.count))
    for edge in edges {
      mix(edge.wayID)
      mix(Int64(edge.from) << 32 | Int64(edge.to))
      let first = points[Int(geometry[Int(edge.geometryStart)])]
      mix(Int64(first.latitudeE6) << 32 | Int64(UInt32(bitPattern: first.longitudeE6)))
      mix(Int64((edge.length * 100).rounded()))
    }
    return String(hash, radix: 16)
  }
}
