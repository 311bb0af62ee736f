import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// A hand-drawn road map, in the manner of OSRM's and Valhalla's feature tests: letters are OSM
/// nodes, digits are query points, every character is `gridMeters` apart (rows and columns);
/// anything else is decoration. Ways, node tags and restrictions are added by name.
public struct MapFixture: OSMElementSource, Sendable {
  public let gridMeters: Double
  private(set) var locations: [Character: LatLng] = [:]
  private var nodeTags: [Character: [String: String]] = [:]
  private var ways: [(nodes: String, tags: [String: String])] = []
  private var relations: [OSMRelation] = []

  /// Monaco: right-hand traffic.
  public static let origin = LatLng(latitude: 43.7, longitude: 7.4)

  public init(_ drawing: String, gridMeters: Double = 25, origin: LatLng = MapFixture.origin) {
    self.gridMeters = gridMeters
    let degreesPerMeter = 1 / (LatLng.earthRadius * .pi / 180)
    for (row, line) in drawing.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      for (column, character) in line.enumerated() where character.isLetter || character.isNumber {
        locations[character] = LatLng(
          latitude: origin.latitude - Double(row) * gridMeters * degreesPerMeter,
          longitude: origin.longitude + Double(column) * gridMeters * degreesPerMeter / cos(origin.latitude * .pi / 180)
        )
      }
    }
  }

  /// A letter's OSM node id: its Unicode scalar.
  public func nodeID(_ c: Character) -> Int64 { Int64(c.unicodeScalars.first!.value) }
  /// A way's OSM id, by its nodes as drawn ("abc"): its place in the order ways were added, from 1.
  public func wayID(_ nodes: String) -> Int64 { Int64(ways.firstIndex { $0.nodes == nodes }! + 1) }
  /// The drawn nodes of the way with this OSM id.
  public func wayNodes(_ id: Int64) -> String? { id >= 1 && id <= ways.count ? ways[Int(id) - 1].nodes : nil }
  public func hasWay(_ nodes: String) -> Bool { ways.contains { $0.nodes == nodes } }

  public mutating func way(_ nodes: String, _ tags: [String: String] = ["highway": "primary"]) {
    precondition(nodes.allSatisfy { locations[$0] != nil }, "way \(nodes) uses a node not on the map")
    ways.append((nodes, tags))
  }

  public mutating func tag(_ node: Character, _ tags: [String: String]) { nodeTags[node] = tags }

  public mutating func restriction(_ kind: String, from: String, via: Character, to: String) {
    restriction(["restriction": kind], from: from, via: [String(via)], to: to)
  }

  /// A restriction relation with any tags; `via` names one node (a letter) or ways (their nodes).
  public mutating func restriction(_ tags: [String: String], from: String, via: [String], to: String) {
    let viaMembers: [OSMRelation.Member] =
      via.count == 1 && via[0].count == 1 && !hasWay(via[0])
      ? [.init(type: .node, id: nodeID(via[0].first!), role: "via")]
      : via.map { .init(type: .way, id: wayID($0), role: "via") }
    let pairs = [("type", "restriction")] + tags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    relations.append(
      OSMRelation(
        id: Int64(relations.count + 1),
        members: [.init(type: .way, id: wayID(from), role: "from")] + viaMembers + [
          .init(type: .way, id: wayID(to), role: "to")
        ],
        tags: OSMTags(pairs.map { (key: $0.0, value: $0.1) })))
  }

  public func point(_ c: Character) -> LatLng { locations[c]! }

  public func engine(profile: CarProfile = CarProfile()) throws -> RoutingEngine {
    RoutingEngine(network: try OSMExtractor(profile: profile).extract(from: self).0, profile: profile)
  }

  public func read(
    _ kinds: OSMElementKinds, node: (OSMNode) throws -> Void, way: (OSMWay) throws -> Void,
    relation: (OSMRelation) throws -> Void
  ) throws {
    if kinds.contains(.nodes) {
      for (c, location) in locations.sorted(by: { $0.key < $1.key }) where c.isLetter {
        let tags = (nodeTags[c] ?? [:]).sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        try node(
          OSMNode(id: nodeID(c), latitude: location.latitude, longitude: location.longitude, tags: OSMTags(tags)))
      }
    }
    if kinds.contains(.ways) {
      for (i, w) in ways.enumerated() {
        let tags = w.tags.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        try way(OSMWay(id: Int64(i + 1), nodeIDs: w.nodes.map(nodeID), tags: OSMTags(tags)))
      }
    }
    if kinds.contains(.relations) { for r in relations { try relation(r) } }
  }
}
