import Foundation

/// A point on the road network: an edge, where along it, and how far from the asked point.
public struct RoadPosition: Sendable, Hashable {
  public var edge: Int
  /// Index of the shape segment the point lies on (between shape points `segment` and `segment + 1`).
  public var segment: Int
  /// Metres from the edge's `from` end along its shape.
  public var offset: Double
  public var point: FixedCoordinate
  /// Metres from the queried point to `point`.
  public var distance: Double
}

/// A uniform grid over shape segments for nearest-road queries.
public struct SegmentIndex: Sendable {
  /// About 110 m of latitude: a few dozen segments per cell in a city.
  static let cellSizeE6: Int32 = 1000

  struct Cell: Hashable {
    var x: Int32
    var y: Int32
  }

  let cells: [Cell: [(edge: Int32, segment: Int32)]]
  /// The occupied cells' extent: a search stops once its ring has passed all of them.
  let lowCell: Cell
  let highCell: Cell

  public init(network: RoadNetwork, include: (RoadEdge) -> Bool = { _ in true }) {
    var cells: [Cell: [(edge: Int32, segment: Int32)]] = [:]
    for (i, edge) in network.edges.enumerated() where include(edge) {
      let shape = network.shape(of: edge)
      for k in 0..<(shape.count - 1) {
        let a = network.points[Int(shape[shape.startIndex + k])]
        let b = network.points[Int(shape[shape.startIndex + k + 1])]
        let low = Self.cell(
          FixedCoordinate(
            latitudeE6: min(a.latitudeE6, b.latitudeE6), longitudeE6: min(a.longitudeE6, b.longitudeE6)))
        let high = Self.cell(
          FixedCoordinate(
            latitudeE6: max(a.latitudeE6, b.latitudeE6), longitudeE6: max(a.longitudeE6, b.longitudeE6)))
        for x in low.x...high.x {
          for y in low.y...high.y { cells[Cell(x: x, y: y), default: []].append((Int32(i), Int32(k))) }
        }
      }
    }
    self.cells = cells
    lowCell = Cell(x: cells.keys.map(\.x).min() ?? 0, y: cells.keys.map(\.y).min() ?? 0)
    highCell = Cell(x: cells.keys.map(\.x).max() ?? 0, y: cells.keys.map(\.y).max() ?? 0)
  }

  static func cell(_ c: FixedCoordinate) -> Cell {
    Cell(
      x: c.longitudeE6 >= 0 ? c.longitudeE6 / cellSizeE6 : (c.longitudeE6 + 1) / cellSizeE6 - 1,
      y: c.latitudeE6 >= 0 ? c.latitudeE6 / cellSizeE6 : (c.latitudeE6 + 1) / cellSizeE6 - 1)
  }

  /// The nearest positions on distinct edges, closest first, within `radius` metres.
  public func nearest(
    _ point: FixedCoordinate, in network: RoadNetwork, count: Int = 1, radius: Double = .infinity,
    accept: (Int) -> Bool = { _ in true }
  ) -> [RoadPosition] {
    let center = Self.cell(point)
    // Candidates are ranked by a flat-earth distance (exact to a fraction of a per cent over the
    // few hundred metres a search covers); only the winners get exact positions.
    let cosLatitude = cos(point.latitude * Geo.degreeToRadian)
    let metresPerMicrodegree = Geo.earthRadius * Geo.degreeToRadian / 1e6
    // One ring of cells is at least this many metres wide.
    let ringMeters = Double(Self.cellSizeE6) * metresPerMicrodegree * max(0.1, cosLatitude)
    var best: [Int32: (segment: Int32, distance: Double)] = [:]
    // Beyond this ring every occupied cell has been visited.
    let coveringRing = max(
      abs(center.x - lowCell.x), abs(center.x - highCell.x), abs(center.y - lowCell.y), abs(center.y - highCell.y))
    let maximumRing = min(coveringRing, Int32(min(100_000, radius.isFinite ? radius / ringMeters + 2 : 100_000)))
    let px = Double(point.longitudeE6) * cosLatitude
    let py = Double(point.latitudeE6)
    var ring: Int32 = 0
    while ring <= maximumRing {
      for cell in Self.ring(ring, around: center) {
        guard let entries = cells[cell] else { continue }
        for entry in entries where accept(Int(entry.edge)) {
          let shape = network.shape(of: network.edges[Int(entry.edge)])
          let a = network.points[Int(shape[shape.startIndex + Int(entry.segment)])]
          let b = network.points[Int(shape[shape.startIndex + Int(entry.segment) + 1])]
          let ax = Double(a.longitudeE6) * cosLatitude
          let ay = Double(a.latitudeE6)
          let dx = Double(b.longitudeE6) * cosLatitude - ax
          let dy = Double(b.latitudeE6) - ay
          let length2 = dx * dx + dy * dy
          let t = length2 > 0 ? min(max(((px - ax) * dx + (py - ay) * dy) / length2, 0), 1) : 0
          let ex = ax + t * dx - px
          let ey = ay + t * dy - py
          let distance = (ex * ex + ey * ey).squareRoot() * metresPerMicrodegree
          if distance <= radius, distance < (best[entry.edge]?.distance ?? .infinity) {
            best[entry.edge] = (entry.segment, distance)
          }
        }
      }
      // Anything in farther rings is at least `ring * ringMeters` away.
      if best.count >= count {
        let kth = best.values.map(\.distance).sorted()[count - 1]
        if kth <= Double(ring) * ringMeters { break }
      }
      ring += 1
    }
    // Ties (roads meeting at the nearest point) go to the lower edge index, so that the same
    // query snaps the same way in every process: dictionary order is seeded per process.
    return best.sorted { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }.prefix(count)
      .map { Self.position(point, edge: Int($0.key), segment: Int($0.value.segment), network) }
      .filter { $0.distance <= radius }
      .sorted { ($0.distance, $0.edge) < ($1.distance, $1.edge) }
  }

  /// The cells at Chebyshev distance `r` from `center` (its perimeter only).
  static func ring(_ r: Int32, around center: Cell) -> [Cell] {
    guard r > 0 else { return [center] }
    var result: [Cell] = []
    result.reserveCapacity(Int(8 * r))
    for x in (center.x - r)...(center.x + r) {
      result.append(Cell(x: x, y: center.y - r))
      result.append(Cell(x: x, y: center.y + r))
    }
    for y in (center.y - r + 1)...(center.y + r - 1) {
      result.append(Cell(x: center.x - r, y: y))
      result.append(Cell(x: center.x + r, y: y))
    }
    return result
  }

  static func position(_ p: FixedCoordinate, edge: Int, segment: Int, _ network: RoadNetwork) -> RoadPosition {
    let e = network.edges[edge]
    let shape = network.shape(of: e)
    let a = network.points[Int(shape[shape.startIndex + segment])]
    let b = network.points[Int(shape[shape.startIndex + segment + 1])]
    let t = Geo.projection(of: p, onto: a, b)
    let snapped = Geo.interpolate(a, b, t)
    var offset = 0.0
    for k in 0..<segment {
      offset += Geo.distance(
        network.points[Int(shape[shape.startIndex + k])], network.points[Int(shape[shape.startIndex + k + 1])])
    }
    offset += Geo.distance(a, snapped)
    return RoadPosition(
      edge: edge, segment: segment, offset: min(offset, e.length), point: snapped, distance: Geo.distance(p, snapped))
  }
}
