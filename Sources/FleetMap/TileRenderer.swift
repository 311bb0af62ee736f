import FleetGeometry
import FleetRouting
import Foundation

/// Map tiles drawn from the road graph, so that pages need no tile server on the internet: one
/// SVG image per Web Mercator tile (z/x/y, 256 px), roads by class with their casings, names
/// along the roads from zoom 16, water and land areas where the extract has them.
public struct TileRenderer: Sendable {
  let network: RoadNetwork
  let areas: MapAreas
  let index: EdgeGrid
  /// The network's extent, for a page's first view.
  public let bounds: Viewport

  public init(network: RoadNetwork, areas: MapAreas = MapAreas()) {
    self.network = network
    self.areas = areas
    index = EdgeGrid(network: network)
    bounds = index.bounds
  }

  public static let size = 256
  public static let maximumZoom = 20

  /// The SVG document of tile z/x/y, or nil when there is no such tile.
  public func svg(z: Int, x: Int, y: Int) -> String? {
    guard (0...Self.maximumZoom).contains(z), (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(y) else {
      return nil
    }
    let tile = TileProjection(z: z, x: x, y: y)
    var svg = SVGTile()
    if let sea = areas.seaRings(tile) { svg.addArea(sea, kind: .water) }
    for area in areas.areas(in: tile.bounds) where tile.z >= area.kind.minimumZoom {
      svg.addArea(area.rings.map { ring in ring.map { tile.pixel($0) } }, kind: area.kind)
    }
    let edges = index.edges(in: tile.bounds(margin: 0.15)).filter {
      RoadStyle(network.edges[Int($0)].roadClass).minimumZoom <= z
    }
    var paths: [Int: [[Pixel]]] = [:]
    for e in edges {
      let edge = network.edges[Int(e)]
      let points = network.shape(of: edge).map { tile.pixel(network.points[Int($0)]) }
      paths[RoadStyle(edge.roadClass).drawOrder, default: []].append(points)
    }
    // Casings under every fill, minor roads under major ones.
    let order = paths.keys.sorted()
    for key in order { svg.addRoads(paths[key]!, style: RoadStyle.byDrawOrder[key], zoom: z, casing: true) }
    for key in order { svg.addRoads(paths[key]!, style: RoadStyle.byDrawOrder[key], zoom: z, casing: false) }
    if z >= 16 {
      for label in RoadLabels(network: network, edges: edges, tile: tile).placed() {
        svg.addLabel(label.path, text: label.name, fontSize: z >= 18 ? 13 : z >= 17 ? 12 : 11)
      }
    }
    return svg.document()
  }
}

extension Viewport {
  init(south: Double, west: Double, north: Double, east: Double) {
    self.init(low: LatLng(latitude: south, longitude: west), high: LatLng(latitude: north, longitude: east))
  }

  /// For boxes that do not cross the antimeridian (tiles and extracts here never do).
  func intersects(_ other: Viewport) -> Bool {
    low.latitude <= other.high.latitude && other.low.latitude <= high.latitude
      && low.longitude <= other.high.longitude && other.low.longitude <= high.longitude
  }
}

struct Pixel: Hashable {
  var x: Double
  var y: Double
}

/// Web Mercator for one tile: degrees to the tile's pixels.
struct TileProjection {
  let z: Int
  let x: Int
  let y: Int
  let scale: Double

  init(z: Int, x: Int, y: Int) {
    self.z = z
    self.x = x
    self.y = y
    scale = Double(TileRenderer.size) * Double(1 << z)
  }

  func pixel(_ c: FixedCoordinate) -> Pixel {
    pixel(latitude: Double(c.latitudeE6) / 1e6, longitude: Double(c.longitudeE6) / 1e6)
  }

  func pixel(latitude: Double, longitude: Double) -> Pixel {
    let worldX = (longitude + 180) / 360 * scale
    let sine = sin(min(max(latitude, -85.0511), 85.0511) * .pi / 180)
    let worldY = (0.5 - log((1 + sine) / (1 - sine)) / (4 * .pi)) * scale
    return Pixel(
      x: worldX - Double(x * TileRenderer.size), y: worldY - Double(y * TileRenderer.size))
  }

  /// The tile's extent, grown by `margin` tiles on each side (roads just outside still draw
  /// their casing and round caps into it).
  func bounds(margin: Double = 0) -> Viewport {
    let n = Double(1 << z)
    func longitude(_ tx: Double) -> Double { tx / n * 360 - 180 }
    func latitude(_ ty: Double) -> Double { atan(sinh(.pi * (1 - 2 * ty / n))) * 180 / .pi }
    return Viewport(
      south: latitude(Double(y) + 1 + margin), west: longitude(Double(x) - margin),
      north: latitude(Double(y) - margin), east: longitude(Double(x) + 1 + margin))
  }

  var bounds: Viewport { bounds() }
}

/// Road edges by grid cell (about 1 km), for the edges a tile covers.
struct EdgeGrid: Sendable {
  static let cellDegrees = 0.01
  let bounds: Viewport
  let columns: Int
  let rows: Int
  /// The edges of cell k are `entries[cellStart[k]..<cellStart[k + 1]]`.
  let cellStart: [Int32]
  let entries: [Int32]

  init(network: RoadNetwork) {
    var boxes: [Viewport] = []
    boxes.reserveCapacity(network.edges.count)
    for edge in network.edges {
      let shape = network.shape(of: edge).map { network.points[Int($0)] }
      let lats = shape.map { Double($0.latitudeE6) / 1e6 }
      let lngs = shape.map { Double($0.longitudeE6) / 1e6 }
      boxes.append(Viewport(south: lats.min()!, west: lngs.min()!, north: lats.max()!, east: lngs.max()!))
    }
    let all = Viewport(
      south: boxes.map(\.low.latitude).min() ?? 0, west: boxes.map(\.low.longitude).min() ?? 0,
      north: boxes.map(\.high.latitude).max() ?? 0, east: boxes.map(\.high.longitude).max() ?? 0)
    bounds = all
    columns = max(1, Int(((all.high.longitude - all.low.longitude) / Self.cellDegrees).rounded(.up)) + 1)
    rows = max(1, Int(((all.high.latitude - all.low.latitude) / Self.cellDegrees).rounded(.up)) + 1)
    var counts = [Int32](repeating: 0, count: columns * rows + 1)
    let columns = self.columns
    let rows = self.rows
    func clampedCells(_ box: Viewport, _ body: (Int) -> Void) {
      let (c0, r0) = Self.cell(box.low.longitude, box.low.latitude, in: all)
      let (c1, r1) = Self.cell(box.high.longitude, box.high.latitude, in: all)
      for r in min(r0, rows - 1)...min(r1, rows - 1) {
        for c in min(c0, columns - 1)...min(c1, columns - 1) { body(r * columns + c) }
      }
    }
    for box in boxes { clampedCells(box) { counts[$0 + 1] += 1 } }
    for k in 1..<counts.count { counts[k] += counts[k - 1] }
    var fill = counts
    var entries = [Int32](repeating: 0, count: Int(counts.last ?? 0))
    for (e, box) in boxes.enumerated() {
      clampedCells(box) { k in
        entries[Int(fill[k])] = Int32(e)
        fill[k] += 1
      }
    }
    cellStart = counts
    self.entries = entries
  }

  static func cell(_ longitude: Double, _ latitude: Double, in all: Viewport) -> (Int, Int) {
    (
      max(0, Int((longitude - all.low.longitude) / cellDegrees)),
      max(0, Int((latitude - all.low.latitude) / cellDegrees))
    )
  }

  /// Every edge whose box meets `area`, once each.
  func edges(in area: Viewport) -> [Int32] {
    guard !entries.isEmpty, area.intersects(bounds) else { return [] }
    let (c0, r0) = Self.cell(
      max(area.low.longitude, bounds.low.longitude), max(area.low.latitude, bounds.low.latitude), in: bounds)
    let (c1, r1) = Self.cell(
      min(area.high.longitude, bounds.high.longitude), min(area.high.latitude, bounds.high.latitude), in: bounds)
    var found = Set<Int32>()
    for r in r0...min(r1, rows - 1) {
      for c in c0...min(c1, columns - 1) {
        let k = r * columns + c
        for i in Int(cellStart[k])..<Int(cellStart[k + 1]) { found.insert(entries[i]) }
      }
    }
    return found.sorted()
  }
}
