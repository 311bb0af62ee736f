import Foundation

/// Values over a small part of the globe, on a square grid of cells in a local plane (metres
/// east and north of a corner), and the areas where they are at most a limit: the contours of
/// isochrones (travel times) and isodistances.
public struct ValueGrid: Sendable {
  public let width: Int
  public let height: Int
  /// The side of a cell, in metres.
  public let cellMeters: Double
  /// The centre of cell (0, 0), the grid's south-west corner.
  public let origin: LatLng
  /// Row by row from the south, `.infinity` where there is no value.
  public var values: [Double]

  /// Cells per degree north and per degree east (kept: the cosine is not cheap per point).
  let cellsPerDegreeLatitude: Double
  let cellsPerDegreeLongitude: Double

  public init(origin: LatLng, width: Int, height: Int, cellMeters: Double) {
    precondition(width > 0 && height > 0 && cellMeters > 0)
    self.origin = origin
    self.width = width
    self.height = height
    self.cellMeters = cellMeters
    values = [Double](repeating: .infinity, count: width * height)
    cellsPerDegreeLatitude = LatLng.earthRadius * .pi / 180 / cellMeters
    cellsPerDegreeLongitude = cellsPerDegreeLatitude * origin.localCosine
  }

  public subscript(x: Int, y: Int) -> Double {
    get { values[y * width + x] }
    set { values[y * width + x] = newValue }
  }

  /// The cell `point` falls in (may lie outside the grid).
  public func cell(of point: LatLng) -> (x: Int, y: Int) {
    let (x, y) = gridPosition(of: point)
    return (Int(x.rounded()), Int(y.rounded()))
  }

  /// `point` in cells east and north of the origin's centre.
  public func gridPosition(of point: LatLng) -> (x: Double, y: Double) {
    (
      (point.longitude - origin.longitude) * cellsPerDegreeLongitude,
      (point.latitude - origin.latitude) * cellsPerDegreeLatitude
    )
  }

  public func point(x: Double, y: Double) -> LatLng {
    LatLng(
      latitude: origin.latitude + y / cellsPerDegreeLatitude, longitude: origin.longitude + x / cellsPerDegreeLongitude)
  }

  public func contains(x: Int, y: Int) -> Bool { x >= 0 && y >= 0 && x < width && y < height }

  /// Gives each cell without a value the value of the nearest cell with one within `radius`
  /// metres (a point between roads takes the road it is nearest to, as routing snaps it).
  /// Nearest by a propagation over the grid's eight neighbours, each cell keeping the seed it
  /// got: exact but for rare ties between seeds at nearly equal distances.
  public mutating func spread(within radius: Double, seeded isSeed: (Int) -> Bool) {
    let limit = radius / cellMeters
    var seedOf = [Int32](repeating: -1, count: values.count)
    var reach = [Double](repeating: .infinity, count: values.count)
    var queue: [Int32] = []
    for i in values.indices where isSeed(i) {
      seedOf[i] = Int32(i)
      reach[i] = 0
      queue.append(Int32(i))
    }
    // Breadth-first in rounds: a cell is revisited when a nearer seed reaches it.
    while !queue.isEmpty {
      var next: [Int32] = []
      for cell in queue {
        let c = Int(cell)
        let seed = Int(seedOf[c])
        let (sx, sy) = (seed % width, seed / width)
        let (cx, cy) = (c % width, c / width)
        for dy in -1...1 {
          for dx in -1...1 where dx != 0 || dy != 0 {
            let (nx, ny) = (cx + dx, cy + dy)
            guard contains(x: nx, y: ny) else { continue }
            let n = ny * width + nx
            let ex = Double(nx - sx)
            let ey = Double(ny - sy)
            let d = (ex * ex + ey * ey).squareRoot()
            guard d <= limit, d < reach[n] else { continue }
            reach[n] = d
            seedOf[n] = Int32(seed)
            next.append(Int32(n))
          }
        }
      }
      queue = next
    }
    for i in values.indices where seedOf[i] >= 0 && !isSeed(i) { values[i] = values[Int(seedOf[i])] }
  }

  /// The area where the values are at most `limit`, traced between the cells' centres (marching
  /// squares, crossings placed by linear interpolation). Outlines run counter-clockwise and
  /// holes clockwise (GeoJSON, RFC 7946). `minimumShare` drops outlines smaller than that share
  /// of the largest (with their holes): 1 keeps the largest only. `toleranceMeters` simplifies
  /// each ring (Douglas–Peucker).
  public func area(atMost limit: Double, minimumShare: Double = 0, toleranceMeters: Double = 0) -> Area {
    let rings = traceRings(atMost: limit).map { simplified($0, tolerance: toleranceMeters / cellMeters) }
      .filter { $0.count >= 3 }
    var outlines: [(ring: [GridPoint], area: Double, holes: [[GridPoint]])] = []
    var holes: [[GridPoint]] = []
    for ring in rings {
      let area = Self.signedArea(ring)
      if area > 0 { outlines.append((ring, area, [])) } else if area < 0 { holes.append(ring) }
    }
    // Each hole goes to the smallest outline around it.
    let bySize = outlines.indices.sorted { outlines[$0].area < outlines[$1].area }
    for hole in holes {
      if let owner = bySize.first(where: { Self.contains(outlines[$0].ring, hole[0]) }) {
        outlines[owner].holes.append(hole)
      }
    }
    let largest = outlines.map(\.area).max() ?? 0
    let kept = outlines.filter { $0.area >= minimumShare * largest }.sorted { $0.area > $1.area }
    return Area(
      polygons: kept.map { outline in
        ([outline.ring] + outline.holes).map { ring in ring.map { point(x: $0.x, y: $0.y) } }
      })
  }

  struct GridPoint: Hashable {
    var x: Double
    var y: Double
  }

  /// Closed rings (the first point not repeated) around the cells at most `limit`, the inside on
  /// the left. Cells outside the grid count as above the limit, so every ring closes.
  func traceRings(atMost limit: Double) -> [[GridPoint]] {
    // A crossing sits on a grid edge: horizontal from vertex (x, y) to (x + 1, y), or vertical
    // from (x, y) to (x, y + 1); keyed with a one-cell border around the grid.
    let stride = width + 2
    func key(_ x: Int, _ y: Int, vertical: Bool) -> Int { ((y + 1) * stride + (x + 1)) * 2 + (vertical ? 1 : 0) }
    func value(_ x: Int, _ y: Int) -> Double { contains(x: x, y: y) ? self[x, y] : .infinity }
    func crossing(_ a: (Int, Int), _ b: (Int, Int)) -> GridPoint {
      let va = value(a.0, a.1)
      let vb = value(b.0, b.1)
      // From the inside corner towards the outside one; halfway when the far side has no value.
      let (inside, outside, vi, vo) = va <= limit ? (a, b, va, vb) : (b, a, vb, va)
      let t = vo.isFinite && vo > vi ? min(max((limit - vi) / (vo - vi), 0), 1) : 0.5
      return GridPoint(
        x: Double(inside.0) + t * Double(outside.0 - inside.0), y: Double(inside.1) + t * Double(outside.1 - inside.1))
    }
    // Each crossing starts exactly one segment: next[start] = (end key, start point). `starts`
    // keeps them in order, so that finding where the next ring begins does not rescan the table.
    var next: [Int: (end: Int, point: GridPoint)] = [:]
    var starts: [Int] = []
    for y in -1..<height {
      for x in -1..<width {
        // Most cells are all in or all out: told apart before anything is built.
        let count =
          (value(x, y) <= limit ? 1 : 0) + (value(x + 1, y) <= limit ? 1 : 0)
          + (value(x + 1, y + 1) <= limit ? 1 : 0) + (value(x, y + 1) <= limit ? 1 : 0)
        guard count > 0 && count < 4 else { continue }
        // Corners and the edges after each, counter-clockwise from the south-west.
        let corners = [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)]
        let inside = corners.map { value($0.0, $0.1) <= limit }
        let edges = [
          key(x, y, vertical: false), key(x + 1, y, vertical: true), key(x, y + 1, vertical: false),
          key(x, y, vertical: true),
        ]
        // Crossings in counter-clockwise order, each leaving the inside or entering it.
        var crossings: [(edge: Int, leaves: Bool, point: GridPoint)] = []
        for i in 0..<4 where inside[i] != inside[(i + 1) % 4] {
          crossings.append((edges[i], inside[i], crossing(corners[i], corners[(i + 1) % 4])))
        }
        // A segment leaves through one crossing towards the one that enters: the next one
        // counter-clockwise keeps the inside corners joined through the cell's centre, the
        // previous one cuts each inside corner off. Only a saddle (four crossings) can tell.
        var joined = true
        if crossings.count == 4 {
          let centre = corners.map { min(value($0.0, $0.1), 2 * limit + 1) }.reduce(0, +) / 4
          joined = centre <= limit
        }
        for (i, c) in crossings.enumerated() where c.leaves {
          let partner = crossings[(i + (joined ? 1 : crossings.count - 1)) % crossings.count]
          next[c.edge] = (partner.edge, c.point)
          starts.append(c.edge)
        }
      }
    }
    var rings: [[GridPoint]] = []
    for start in starts where next[start] != nil {
      var ring: [GridPoint] = []
      var edge = start
      while let step = next.removeValue(forKey: edge) {
        ring.append(step.point)
        edge = step.end
      }
      rings.append(ring)
    }
    return rings
  }

  /// The area (in square cells) a ring encloses, positive when counter-clockwise.
  static func signedArea(_ ring: [GridPoint]) -> Double {
    var sum = 0.0
    var j = ring.count - 1
    for i in ring.indices {
      sum += (ring[j].x * ring[i].y - ring[i].x * ring[j].y)
      j = i
    }
    return sum / 2
  }

  static func contains(_ ring: [GridPoint], _ point: GridPoint) -> Bool {
    Area.ringEncloses(x: point.x, y: point.y, count: ring.count) { (ring[$0].x, ring[$0].y) }
  }

  /// Douglas–Peucker on a closed ring, split at the point farthest from its first.
  func simplified(_ ring: [GridPoint], tolerance: Double) -> [GridPoint] {
    guard tolerance > 0, ring.count > 4 else { return ring }
    let far =
      ring.indices.max { a, b in
        Self.distance(ring[0], ring[a]) < Self.distance(ring[0], ring[b])
      } ?? 0
    let first = Self.douglasPeucker(Array(ring[0...far]), tolerance)
    let second = Self.douglasPeucker(Array(ring[far...]) + [ring[0]], tolerance)
    return first + second.dropFirst().dropLast()
  }

  static func distance(_ a: GridPoint, _ b: GridPoint) -> Double {
    ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
  }

  /// Douglas–Peucker in the grid's plane.
  static func douglasPeucker(_ line: [GridPoint], _ tolerance: Double) -> [GridPoint] {
    DouglasPeucker.kept(count: line.count, tolerance: tolerance) { i, first, last in
      let (a, b, p) = (line[first], line[last], line[i])
      let length = distance(a, b)
      return length > 0 ? abs((b.x - a.x) * (a.y - p.y) - (a.x - p.x) * (b.y - a.y)) / length : distance(a, p)
    }.map { line[$0] }
  }
}
