/// The cost of driving one road edge in one direction.
public struct EdgeCost: Sendable, Hashable, Codable {
  /// Seconds at the profile's speed.
  public var duration: Double
  /// What routing minimises: duration at the penalised rate (see `CarProfile.servicePenalties`).
  public var weight: Double
  /// Only for starting or ending a trip (private or destination-only access).
  public var restricted: Bool
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
  public var nameIndex: Int32
  public var wayID: Int64
  public var isRoundabout: Bool
  public var roadClass: RoadClass
  /// Lanes tagged on the way, 0 when unknown.
  public var lanes: UInt8

  public func cost(reversed: Bool) -> EdgeCost? { reversed ? backward : forward }
}

/// A turn restriction of the source data, by way at a junction.
public struct TurnRestriction: Sendable, Hashable, Codable {
  public var via: Int32
  public var fromWay: Int64
  public var toWay: Int64
  /// `only_*`: from `fromWay` at `via`, `toWay` is the only way allowed; `no_*`: it is forbidden.
  public var isOnly: Bool
}

/// The drivable road network: junctions, the edges between them with their shapes, and what
/// the profile said about nodes and turns. Built from OSM by `OSMExtractor`.
public struct RoadNetwork: Sendable, Codable {
  /// Every shape point of every edge.
  public var points: [FixedCoordinate] = []
  /// Junction index → point index.
  public var junctions: [Int32] = []
  /// Seconds added to every turn through a junction (signals, gates, stop signs).
  public var junctionDelays: [Float] = []
  /// Junctions cars cannot pass (barriers); only turning back is allowed there.
  public var blockedJunctions: [Bool] = []
  public var edges: [RoadEdge] = []
  public var geometry: [Int32] = []
  public var names: [String] = [""]
  public var restrictions: [TurnRestriction] = []

  public init() {}

  public func shape(of edge: RoadEdge) -> ArraySlice<Int32> {
    geometry[Int(edge.geometryStart)..<Int(edge.geometryEnd)]
  }

  public func coordinate(ofJunction junction: Int32) -> FixedCoordinate { points[Int(junctions[Int(junction)])] }
}
