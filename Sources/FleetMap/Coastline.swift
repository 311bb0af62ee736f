import FleetGeometry
import FleetRouting
import Foundation

/// The sea, from OpenStreetMap's coastline ways: land lies on their left and water on their
/// right, so a tile's sea is the area on the right of the coastline pieces crossing it, closed
/// along the tile's edge clockwise. A tile no coastline crosses is sea or land as a whole: the
/// side of the nearest coastline tells. A coastline cut by the extract's edge is carried on
/// straight for 20 km, so that the sea along the edge fills; where even that ends inside a tile
/// (zoomed far out), the tile's sea is left undrawn.
struct Coastline: Sendable {
  struct Chain: Sendable {
    var points: [FixedCoordinate]
    var bounds: Viewport
  }

  let chains: [Chain]

  init(chains: [[FixedCoordinate]]) {
    self.chains = chains.filter { $0.count >= 2 }.map { points in
      let line = points.first == points.last ? points : Self.extended(points)
      return Chain(points: line, bounds: MapAreas.bounds(of: [line]))
    }
  }

  /// About 20 km, in degrees of latitude.
  static let carriedOn = 0.18

  /// An open coastline carried on straight beyond both ends.
  static func extended(_ points: [FixedCoordinate]) -> [FixedCoordinate] {
    func beyond(_ end: FixedCoordinate, from previous: FixedCoordinate) -> FixedCoordinate? {
      let scale = cos(Double(end.latitudeE6) / 1e6 * .pi / 180)
      let dy = Double(end.latitudeE6 - previous.latitudeE6) / 1e6
      let dx = Double(end.longitudeE6 - previous.longitudeE6) / 1e6 * scale
      let length = hypot(dx, dy)
      guard length > 0 else { return nil }
      return FixedCoordinate(
        latitude: Double(end.latitudeE6) / 1e6 + dy / length * carriedOn,
        longitude: Double(end.longitudeE6) / 1e6 + dx / length * carriedOn / max(scale, 0.01))
    }
    var line = points
    if let before = points.dropFirst().first(where: { $0 != points[0] }), let start = beyond(points[0], from: before) {
      line.insert(start, at: 0)
    }
    if let after = points.dropLast().last(where: { $0 != points.last! }), let end = beyond(points.last!, from: after) {
      line.append(end)
    }
    return line
  }

  /// Coastline ways joined end to start, keeping their direction (it says where the water is).
  static func joined(_ ways: [[Int64]]) -> [[Int64]] {
    var chains = ways.filter { $0.count >= 2 }
    var merged = true
    while merged {
      merged = false
      var byFirst: [Int64: Int] = [:]
      for (i, chain) in chains.enumerated() where chain.first != chain.last { byFirst[chain.first!] = i }
      for i in chains.indices where chains[i].first != chains[i].last {
        guard let j = byFirst[chains[i].last!], j != i, !chains[j].isEmpty, !chains[i].isEmpty else { continue }
        chains[i] += chains[j].dropFirst()
        chains[j] = []
        merged = true
        break
      }
      chains.removeAll { $0.isEmpty }
    }
    return chains
  }

  /// The sea's rings in the tile's pixels (drawn even-odd), or nil when the tile has no sea or
  /// its sea cannot be told.
  func seaRings(_ tile: TileProjection) -> [[Pixel]]? {
    guard !chains.isEmpty else { return nil }
    let low = -4.0
    let high = Double(TileRenderer.size) + 4
    let area = tile.bounds(margin: 0.05)
    var pieces: [[Pixel]] = []
    var islands: [[Pixel]] = []
    for chain in chains where chain.bounds.intersects(area) {
      let points = chain.points.map { tile.pixel($0) }
      if chain.points.first == chain.points.last, points.allSatisfy({ Self.inside($0, low, high) }) {
        islands.append(points)
        continue
      }
      guard let clipped = Self.clip(points, low, high) else { return nil }  // ends inside the tile
      pieces += clipped
    }
    if pieces.isEmpty {
      guard isSea(Pixel(x: 128, y: 128), tile) else { return nil }
      let frame = [
        Pixel(x: low, y: low), Pixel(x: high, y: low), Pixel(x: high, y: high), Pixel(x: low, y: high),
      ]
      return [frame] + islands
    }
    return Self.close(pieces, low, high) + islands
  }

  static func inside(_ p: Pixel, _ low: Double, _ high: Double) -> Bool {
    p.x > low && p.x < high && p.y > low && p.y < high
  }

  /// The parts of a line inside the square [low, high]², each entering and leaving through its
  /// edge; nil when the line starts or ends inside.
  static func clip(_ line: [Pixel], _ low: Double, _ high: Double) -> [[Pixel]]? {
    if inside(line.first!, low, high) || inside(line.last!, low, high) { return nil }
    var pieces: [[Pixel]] = []
    var current: [Pixel] = []
    for (a, b) in zip(line, line.dropFirst()) {
      guard let (t0, t1) = segmentInside(a, b, low, high) else { continue }
      let entry = Pixel(x: a.x + (b.x - a.x) * t0, y: a.y + (b.y - a.y) * t0)
      let exit = Pixel(x: a.x + (b.x - a.x) * t1, y: a.y + (b.y - a.y) * t1)
      if t0 > 0 || current.isEmpty {
        if !current.isEmpty { pieces.append(current) }
        current = [entry]
      }
      current.append(exit)
      if t1 < 1 {
        pieces.append(current)
        current = []
      }
    }
    if current.count >= 2 { pieces.append(current) }
    return pieces.filter { $0.count >= 2 }
  }

  /// Liang–Barsky: the part of segment a→b inside the square, as parameters, or nil.
  static func segmentInside(_ a: Pixel, _ b: Pixel, _ low: Double, _ high: Double) -> (Double, Double)? {
    var t0 = 0.0
    var t1 = 1.0
    let dx = b.x - a.x
    let dy = b.y - a.y
    for (p, q) in [(-dx, a.x - low), (dx, high - a.x), (-dy, a.y - low), (dy, high - a.y)] {
      if p == 0 {
        if q < 0 { return nil }
        continue
      }
      let r = q / p
      if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
      if t0 > t1 { return nil }
    }
    return t1 - t0 > 1e-9 ? (t0, t1) : nil
  }

  /// Where a point on the square's edge lies along it, clockwise from the top-left corner (in
  /// screen coordinates, y down).
  static func perimeter(_ p: Pixel, _ low: Double, _ high: Double) -> Double {
    let side = high - low
    let epsilon = 1e-6
    if abs(p.y - low) < epsilon { return p.x - low }
    if abs(p.x - high) < epsilon { return side + (p.y - low) }
    if abs(p.y - high) < epsilon { return 2 * side + (high - p.x) }
    return 3 * side + (high - p.y)
  }

  /// Sea rings: each piece, then clockwise along the edge to the next piece's entry, until the
  /// ring closes.
  static func close(_ pieces: [[Pixel]], _ low: Double, _ high: Double) -> [[Pixel]] {
    let side = high - low
    let total = 4 * side
    let corners = [
      (side, Pixel(x: high, y: low)), (2 * side, Pixel(x: high, y: high)), (3 * side, Pixel(x: low, y: high)),
      (0, Pixel(x: low, y: low)),
    ]
    let entries = pieces.map { perimeter($0.first!, low, high) }
    let exits = pieces.map { perimeter($0.last!, low, high) }
    var used = [Bool](repeating: false, count: pieces.count)
    var rings: [[Pixel]] = []
    for start in pieces.indices where !used[start] {
      var ring: [Pixel] = []
      var current = start
      for _ in 0...pieces.count {
        used[current] = true
        ring += pieces[current]
        // The next entry clockwise from this exit.
        let from = exits[current]
        let next = pieces.indices.min { a, b in
          let da = (entries[a] - from).truncatingRemainder(dividingBy: total)
          let db = (entries[b] - from).truncatingRemainder(dividingBy: total)
          return (da < 0 ? da + total : da) < (db < 0 ? db + total : db)
        }!
        var gap = entries[next] - from
        if gap < 0 { gap += total }
        // The corners passed on the way, in order.
        let passed = corners.map { (position, corner) -> (Double, Pixel) in
          var along = (position - from).truncatingRemainder(dividingBy: total)
          if along <= 0 { along += total }
          return (along, corner)
        }
        ring += passed.filter { $0.0 < gap }.sorted { $0.0 < $1.0 }.map(\.1)
        if next == start { break }
        if used[next] { break }
        current = next
      }
      rings.append(ring)
    }
    return rings
  }

  /// Whether a point of the tile lies on the water side of the nearest coastline.
  func isSea(_ p: Pixel, _ tile: TileProjection) -> Bool {
    var best = Double.infinity
    var sea = false
    let area = tile.bounds(margin: 4)
    for chain in chains where chain.bounds.intersects(area) {
      let points = chain.points.map { tile.pixel($0) }
      for (a, b) in zip(points, points.dropFirst()) {
        let dx = b.x - a.x
        let dy = b.y - a.y
        let length = dx * dx + dy * dy
        let t = length > 0 ? max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length)) : 0
        let distance = hypot(p.x - (a.x + dx * t), p.y - (a.y + dy * t))
        if distance < best {
          best = distance
          // Water lies on the right of the way's direction: y grows downwards here.
          sea = dx * (p.y - a.y) - dy * (p.x - a.x) > 0
        }
      }
    }
    return best.isFinite && sea
  }
}
