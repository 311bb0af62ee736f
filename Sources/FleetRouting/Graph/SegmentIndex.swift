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
  /// The directions a route may drive from or to here (all the edge allows, unless a query's
  /// bearing, approach or exclusions narrowed them).
  public var directions: RoadDirections = .both
}

/// Directions along a road edge: from its `from` end to its `to` end, and back.
public struct RoadDirections: OptionSet, Sendable, Hashable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  public static let forward = RoadDirections(rawValue: 1)
  public static let backward = RoadDirections(rawValue: 2)
  public static let both: RoadDirections = [.forward, .backward]

  public static func along(reversed: Bool) -> RoadDirections { reversed ? .backward : .forward }
}

/// A uniform grid over shape segments for nearest-road queries, stored flat (one array of
/// segments ordered by cell, one start index per cell) so that a query reads cells without hashing.
public struct SegmentIndex: Sendable {
  /// About 110 m of latitude: a few dozen segments per cell in a city.
  static let finestCellSizeE6: Int32 = 1000

  struct Cell: Hashable {
    var x: Int32
    var y: Int32
  }

  /// Cells are this many microdegrees wide and high: the finest size whose grid over the
  /// network's extent has at most a few cells per segment (coarser for a country than a city).
  let cellSizeE6: Int32
  /// The grid's extent in cells (inclusive).
  let lowCell: Cell
  let highCell: Cell
  /// The segments of cell (x, y) are `entries[cellStart[k]..<cellStart[k + 1]]` with
  /// k = (y - lowCell.y) * width + (x - lowCell.x).
  let cellStart: [Int32]
  let entries: [(edge: Int32, segment: Int32)]
  var width: Int { Int(highCell.x - lowCell.x) + 1 }

  public init(network: RoadNetwork, include: (RoadEdge) -> Bool = { _ in true }) {
    // Every included segment's box, in microdegrees.
    var boxes: [(edge: Int32, segment: Int32, low: FixedCoordinate, high: FixedCoordinate)] = []
    for (i, edge) in network.edges.enumerated() where include(edge) {
      let shape = network.shape(of: edge)
      for k in 0..<(shape.count - 1) {
        let a = network.points[Int(shape[shape.startIndex + k])]
        let b = network.points[Int(shape[shape.startIndex + k + 1])]
        boxes.append(
          (
            Int32(i), Int32(k),
            FixedCoordinate(
              latitudeE6: min(a.latitudeE6, b.latitudeE6), longitudeE6: min(a.longitudeE6, b.longitudeE6)),
            FixedCoordinate(
              latitudeE6: max(a.latitudeE6, b.latitudeE6), longitudeE6: max(a.longitudeE6, b.longitudeE6))
          ))
      }
    }
    let south = boxes.map(\.low.latitudeE6).min() ?? 0
    let west = boxes.map(\.low.longitudeE6).min() ?? 0
    let north = boxes.map(\.high.latitudeE6).max() ?? 0
    let east = boxes.map(\.high.longitudeE6).max() ?? 0
    let cellBudget = max(1 << 20, 2 * boxes.count)
    var size = Self.finestCellSizeE6
    while (Int(east - west) / Int(size) + 2) * (Int(north - south) / Int(size) + 2) > cellBudget { size *= 2 }
    cellSizeE6 = size
    let lowCell = Self.cell(FixedCoordinate(latitudeE6: south, longitudeE6: west), size: size)
    let highCell = Self.cell(FixedCoordinate(latitudeE6: north, longitudeE6: east), size: size)
    self.lowCell = lowCell
    self.highCell = highCell
    let width = Int(highCell.x - lowCell.x) + 1
    let cellCount = width * (Int(highCell.y - lowCell.y) + 1)
    // Counting pass, then filling pass into each cell's slot range.
    var start = [Int32](repeating: 0, count: cellCount + 1)
    func forEachCell(
      _ box: (edge: Int32, segment: Int32, low: FixedCoordinate, high: FixedCoordinate), _ body: (Int) -> Void
    ) {
      let low = Self.cell(box.low, size: size)
      let high = Self.cell(box.high, size: size)
      for y in low.y...high.y {
        for x in low.x...high.x { body(Int(y - lowCell.y) * width + Int(x - lowCell.x)) }
      }
    }
    for box in boxes { forEachCell(box) { start[$0 + 1] += 1 } }
    for k in 0..<cellCount { start[k + 1] += start[k] }
    var next = start
    var entries = [(edge: Int32, segment: Int32)](repeating: (0, 0), count: Int(start[cellCount]))
    for box in boxes {
      forEachCell(box) { k in
        entries[Int(next[k])] = (box.edge, box.segment)
        next[k] += 1
      }
    }
    cellStart = start
    self.entries = entries
  }

  static func cell(_ c: FixedCoordinate, size: Int32) -> Cell {
    Cell(
      x: c.longitudeE6 >= 0 ? c.longitudeE6 / size : (c.longitudeE6 + 1) / size - 1,
      y: c.latitudeE6 >= 0 ? c.latitudeE6 / size : (c.latitudeE6 + 1) / size - 1)
  }

  /// Where a cell's segments lie in `entries`; none outside the grid.
  func segmentRange(in cell: Cell) -> Range<Int> {
    guard cell.x >= lowCell.x, cell.x <= highCell.x, cell.y >= lowCell.y, cell.y <= highCell.y else { return 0..<0 }
    let k = Int(cell.y - lowCell.y) * width + Int(cell.x - lowCell.x)
    return Int(cellStart[k])..<Int(cellStart[k + 1])
  }

  /// The nearest positions on distinct edges, closest first, within `radius` metres.
  public func nearest(
    _ point: FixedCoordinate, in network: RoadNetwork, count: Int = 1, radius: Double = .infinity,
    accept: (Int) -> Bool = { _ in true }, acceptSegment: ((Int, Int) -> Bool)? = nil
  ) -> [RoadPosition] {
    let center = Self.cell(point, size: cellSizeE6)
    // Candidates are ranked by a flat-earth distance (exact to a fraction of a per cent over the
    // few hundred metres a search covers); only the winners get exact positions.
    let cosLatitude = cos(point.latitude * Geo.degreeToRadian)
    let metresPerMicrodegree = Geo.earthRadius * Geo.degreeToRadian / 1e6
    // One ring of cells is at least this many metres wide.
    let ringMeters = Double(cellSizeE6) * metresPerMicrodegree * max(0.1, cosLatitude)
    var best: [Int32: (segment: Int32, distance: Double)] = [:]
    // The nearest road alone (most queries): kept without a dictionary, ties to the lower edge.
    var nearestOne: (edge: Int32, segment: Int32, distance: Double)?
    // Beyond this ring every occupied cell has been visited.
    let coveringRing = max(
      abs(center.x - lowCell.x), abs(center.x - highCell.x), abs(center.y - lowCell.y), abs(center.y - highCell.y))
    let maximumRing = min(coveringRing, Int32(min(100_000, radius.isFinite ? radius / ringMeters + 2 : 100_000)))
    let px = Double(point.longitudeE6) * cosLatitude
    let py = Double(point.latitudeE6)
    // How far the point is from a cell's box: a cell no nearer than the best so far is skipped.
    let size = Double(cellSizeE6)
    let boxDistance = { (cell: Cell) -> Double in
      let west = Double(cell.x) * size
      let south = Double(cell.y) * size
      let dx = max(0, west - Double(point.longitudeE6), Double(point.longitudeE6) - (west + size)) * cosLatitude
      let dy = max(0, south - Double(point.latitudeE6), Double(point.latitudeE6) - (south + size))
      return (dx * dx + dy * dy).squareRoot() * metresPerMicrodegree
    }
    var ring: Int32 = 0
    while ring <= maximumRing {
      forEachCell(onRing: ring, around: center) { cell in
        if ring > 0 {
          let bound = boxDistance(cell)
          if bound > radius || (count == 1 && nearestOne.map { bound > $0.distance } == true) { return }
        }
        for k in segmentRange(in: cell) {
          let entry = entries[k]
          // Indexed directly: a slice of the shape per segment costs a retain and a release.
          let first = Int(network.edges[Int(entry.edge)].geometryStart) + Int(entry.segment)
          let a = network.points[Int(network.geometry[first])]
          let b = network.points[Int(network.geometry[first + 1])]
          let ax = Double(a.longitudeE6) * cosLatitude
          let ay = Double(a.latitudeE6)
          let dx = Double(b.longitudeE6) * cosLatitude - ax
          let dy = Double(b.latitudeE6) - ay
          let length2 = dx * dx + dy * dy
          let t = length2 > 0 ? min(max(((px - ax) * dx + (py - ay) * dy) / length2, 0), 1) : 0
          let ex = ax + t * dx - px
          let ey = ay + t * dy - py
          let distance = (ex * ex + ey * ey).squareRoot() * metresPerMicrodegree
          guard distance <= radius else { continue }
          // The filters only for a segment that would be kept: most are farther than the best.
          func accepted() -> Bool {
            accept(Int(entry.edge)) && acceptSegment?(Int(entry.edge), Int(entry.segment)) ?? true
          }
          if count == 1 {
            if let kept = nearestOne, (kept.distance, kept.edge) <= (distance, entry.edge) { continue }
            if accepted() { nearestOne = (entry.edge, entry.segment, distance) }
          } else if distance < (best[entry.edge]?.distance ?? .infinity), accepted() {
            best[entry.edge] = (entry.segment, distance)
          }
        }
      }
      // Anything in farther rings is at least `ring * ringMeters` away.
      let kth =
        count == 1
        ? nearestOne?.distance : best.count >= count ? best.values.map(\.distance).sorted()[count - 1] : nil
      if let kth, kth <= Double(ring) * ringMeters { break }
      ring += 1
    }
    if let one = nearestOne {
      return [Self.position(point, edge: Int(one.edge), segment: Int(one.segment), network)].filter {
        $0.distance <= radius
      }
    }
    // Ties (roads meeting at the nearest point) go to the lower edge index, so that the same
    // query snaps the same way in every process: dictionary order is seeded per process.
    return best.sorted { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }.prefix(count)
      .map { Self.position(point, edge: Int($0.key), segment: Int($0.value.segment), network) }
      .filter { $0.distance <= radius }
      .sorted { ($0.distance, $0.edge) < ($1.distance, $1.edge) }
  }

  /// The roads other than `edge` with a segment that ends at `node` and whose position nearest
  /// `point` is that node: the other roads of a junction a point snapped to (OSRM's candidates
  /// at one snapped coordinate), one position per road, in edge order. `accept` and
  /// `acceptSegment` filter as in `nearest`. Only the node's own cell is read: every segment
  /// ending there is indexed in it.
  func positions(
    onRoadsAt node: FixedCoordinate, besides edge: Int, nearest point: FixedCoordinate, in network: RoadNetwork,
    accept: (Int) -> Bool, acceptSegment: ((Int, Int) -> Bool)? = nil
  ) -> [RoadPosition] {
    var found: [RoadPosition] = []
    for k in segmentRange(in: Self.cell(node, size: cellSizeE6)) {
      let entry = entries[k]
      let road = Int(entry.edge)
      guard road != edge, !found.contains(where: { $0.edge == road }) else { continue }
      let first = Int(network.edges[road].geometryStart) + Int(entry.segment)
      guard
        network.points[Int(network.geometry[first])] == node
          || network.points[Int(network.geometry[first + 1])] == node,
        accept(road), acceptSegment?(road, Int(entry.segment)) ?? true
      else { continue }
      let position = Self.position(point, edge: road, segment: Int(entry.segment), network)
      if position.point == node { found.append(position) }
    }
    return found.sorted { $0.edge < $1.edge }
  }

  /// The grid's cells at Chebyshev distance `r` from `center` (its perimeter only).
  func forEachCell(onRing r: Int32, around center: Cell, _ body: (Cell) -> Void) {
    guard r > 0 else { return body(center) }
    let x0 = max(center.x - r, lowCell.x)
    let x1 = min(center.x + r, highCell.x)
    if x0 <= x1 {
      // The two rows and the two columns of the ring, without building arrays on the hot path.
      for y in stride(from: center.y - r, through: center.y + r, by: Int(2 * r))
      where (lowCell.y...highCell.y).contains(y) {
        for x in x0...x1 { body(Cell(x: x, y: y)) }
      }
    }
    let y0 = max(center.y - r + 1, lowCell.y)
    let y1 = min(center.y + r - 1, highCell.y)
    if y0 <= y1 {
      for x in stride(from: center.x - r, through: center.x + r, by: Int(2 * r))
      where (lowCell.x...highCell.x).contains(x) {
        for y in y0...y1 { body(Cell(x: x, y: y)) }
      }
    }
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
