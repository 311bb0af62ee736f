import FleetGeometry
import FleetRouting
import Foundation

public enum MapAreaKind: UInt8, Sendable, Hashable {
  case water, green, coastline

  static let landColour = "#f2efe9"

  var colour: String {
    switch self {
    case .water, .coastline: "#aad3df"
    case .green: "#cdebb0"
    }
  }

  var minimumZoom: Int {
    switch self {
    case .water, .coastline: 0
    case .green: 12
    }
  }

  /// The kind a way's or multipolygon's tags make it, if any.
  static func of(_ tags: OSMTags) -> MapAreaKind? {
    if tags["natural"] == "coastline" { return .coastline }
    if tags["natural"] == "water" || tags["waterway"] == "riverbank" || tags["natural"] == "bay"
      || ["reservoir", "basin"].contains(tags["landuse"] ?? "")
    {
      return .water
    }
    if ["park", "garden", "pitch", "golf_course"].contains(tags["leisure"] ?? "")
      || ["grass", "forest", "meadow", "recreation_ground", "village_green", "cemetery"].contains(tags["landuse"] ?? "")
      || ["wood", "scrub", "grassland"].contains(tags["natural"] ?? "")
    {
      return .green
    }
    return nil
  }
}

/// Water and green areas (and coastlines, drawn as lines) from an OpenStreetMap extract:
/// closed ways and the rings of multipolygon relations.
public struct MapAreas: Sendable {
  public struct Area: Sendable {
    public var kind: MapAreaKind
    /// Outer and inner rings alike (drawn even-odd); a coastline's line as one "ring".
    public var rings: [[FixedCoordinate]]
    var bounds: Viewport
  }

  public private(set) var list: [Area] = []
  /// The sea, where the extract has coastlines.
  var coastline = Coastline(chains: [])

  public init() {}

  func seaRings(_ tile: TileProjection) -> [[Pixel]]? { coastline.seaRings(tile) }

  func areas(in bounds: Viewport) -> [Area] {
    list.filter { $0.bounds.intersects(bounds) }
  }

  /// Reads an extract in three passes: multipolygon relations, then ways, then the nodes they use.
  public init(reading source: some OSMElementSource) throws {
    var relationWays: [Int64: MapAreaKind] = [:]
    var relations: [(kind: MapAreaKind, ways: [Int64])] = []
    try source.read(
      .relations, node: { _ in }, way: { _ in },
      relation: { relation in
        guard relation.tags["type"] == "multipolygon", let kind = MapAreaKind.of(relation.tags) else { return }
        let ways = relation.members.filter { $0.type == .way }.map(\.id)
        for way in ways { relationWays[way] = kind }
        relations.append((kind, ways))
      })
    var wayNodes: [Int64: [Int64]] = [:]
    var single: [(kind: MapAreaKind, nodes: [Int64])] = []
    try source.read(
      .ways, node: { _ in },
      way: { way in
        if relationWays[way.id] != nil { wayNodes[way.id] = way.nodeIDs }
        guard let kind = MapAreaKind.of(way.tags), way.nodeIDs.count >= 2 else { return }
        // Areas are closed; coastlines are joined into lines below.
        if kind == .coastline || way.nodeIDs.first == way.nodeIDs.last { single.append((kind, way.nodeIDs)) }
      }, relation: { _ in })
    var needed = Set<Int64>()
    for s in single { needed.formUnion(s.nodes) }
    for nodes in wayNodes.values { needed.formUnion(nodes) }
    var coordinates: [Int64: FixedCoordinate] = [:]
    try source.read(
      .nodes,
      node: { node in
        if needed.contains(node.id) {
          coordinates[node.id] = FixedCoordinate(latitude: node.latitude, longitude: node.longitude)
        }
      }, way: { _ in }, relation: { _ in })
    func ring(_ nodes: [Int64]) -> [FixedCoordinate] { nodes.compactMap { coordinates[$0] } }
    var list: [Area] = []
    let coastlines = Coastline.joined(single.filter { $0.kind == .coastline }.map(\.nodes))
    coastline = Coastline(chains: coastlines.map(ring))
    for s in single where s.kind != .coastline {
      let points = ring(s.nodes)
      if points.count >= 2 { list.append(Area(kind: s.kind, rings: [points], bounds: Self.bounds(of: [points]))) }
    }
    for relation in relations {
      let rings = Self.closedRings(relation.ways.compactMap { wayNodes[$0] }).map(ring).filter { $0.count >= 3 }
      if !rings.isEmpty { list.append(Area(kind: relation.kind, rings: rings, bounds: Self.bounds(of: rings))) }
    }
    for line in coastlines.map(ring) where line.count >= 2 {
      list.append(Area(kind: .coastline, rings: [line], bounds: Self.bounds(of: [line])))
    }
    // Water over green, whatever order the file had.
    self.list = list.sorted { ($0.kind == .green ? 0 : 1) < ($1.kind == .green ? 0 : 1) }
  }

  /// Ways joined end to end into closed rings; pieces that do not close (cut by the extract's
  /// edge) are left out.
  static func closedRings(_ ways: [[Int64]]) -> [[Int64]] {
    var open = ways.filter { $0.count >= 2 }
    var rings: [[Int64]] = []
    while let first = open.popLast() {
      var ring = first
      var grown = true
      while ring.first != ring.last && grown {
        grown = false
        for (i, way) in open.enumerated() {
          if way.first == ring.last {
            ring += way.dropFirst()
          } else if way.last == ring.last {
            ring += way.reversed().dropFirst()
          } else {
            continue
          }
          open.remove(at: i)
          grown = true
          break
        }
      }
      if ring.count >= 4 && ring.first == ring.last { rings.append(ring) }
    }
    return rings
  }

  static func bounds(of rings: [[FixedCoordinate]]) -> Viewport {
    let all = rings.joined()
    let lats = all.map { Double($0.latitudeE6) / 1e6 }
    let lngs = all.map { Double($0.longitudeE6) / 1e6 }
    return Viewport(
      south: lats.min() ?? 0, west: lngs.min() ?? 0, north: lats.max() ?? 0, east: lngs.max() ?? 0)
  }
}
