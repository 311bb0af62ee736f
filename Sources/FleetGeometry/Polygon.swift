/// An area on the map: one or more polygons, each an outer ring and any holes (GeoJSON's
/// Polygon and MultiPolygon). Rings are closed implicitly; a point on the boundary may fall on
/// either side.
public struct Area: Sendable, Hashable {
  /// Each polygon's rings: the first is the outline, the others are holes.
  public var polygons: [[[LatLng]]]
  public let bounds: Viewport

  public init(polygons: [[[LatLng]]]) {
    self.polygons = polygons
    let points = polygons.flatMap { $0.first ?? [] }
    let latitudes = points.map(\.latitude)
    let longitudes = points.map(\.longitude)
    bounds = Viewport(
      low: LatLng(latitude: latitudes.min() ?? 0, longitude: longitudes.min() ?? 0),
      high: LatLng(latitude: latitudes.max() ?? 0, longitude: longitudes.max() ?? 0))
  }

  /// Whether `point` lies inside: inside an outline and outside its holes (even-odd crossings
  /// over all of a polygon's rings).
  public func contains(_ point: LatLng) -> Bool {
    guard bounds.contains(point) else { return false }
    return polygons.contains { rings in
      rings.reduce(false) { inside, ring in
        guard ring.count >= 3 else { return inside }
        return inside
          != Self.ringEncloses(x: point.longitude, y: point.latitude, count: ring.count) {
            (ring[$0].longitude, ring[$0].latitude)
          }
      }
    }
  }

  /// Whether the ring of `count` corners (`corner(i)`, in any plane) encloses the point: an odd
  /// number of its edges cross the ray from the point towards +x.
  static func ringEncloses(x: Double, y: Double, count: Int, corner: (Int) -> (x: Double, y: Double)) -> Bool {
    var inside = false
    var j = count - 1
    for i in 0..<count {
      let a = corner(i)
      let b = corner(j)
      if (a.y > y) != (b.y > y), x < a.x + (y - a.y) / (b.y - a.y) * (b.x - a.x) { inside.toggle() }
      j = i
    }
    return inside
  }
}

extension Area {
  /// Metres from `point` to the area: 0 inside, else to the nearest edge of any ring.
  public func distance(to point: LatLng) -> Double {
    if contains(point) { return 0 }
    let cosine = point.localCosine
    var nearest = Double.infinity
    for rings in polygons {
      for ring in rings where ring.count >= 2 {
        var j = ring.count - 1
        for i in ring.indices {
          nearest = min(nearest, point.projection(onto: ring[j], ring[i], cosine: cosine).distance)
          j = i
        }
      }
    }
    return nearest
  }
}

/// Areas filed in a grid of their bounding boxes, so that finding the areas around a point
/// reads one cell and tests only the areas whose boxes cover it: thousands of areas cost
/// microseconds per point.
public struct AreaIndex<Key: Sendable & Hashable>: Sendable {
  public struct Entry: Sendable {
    public let key: Key
    public let area: Area
  }

  public let entries: [Entry]
  let cellDegrees: Double
  /// Each cell's areas, in the order they were given.
  let cells: [Int64: [Int32]]
  /// Areas too wide for the grid, tested for every point.
  let everywhere: [Int32]

  /// `cellDegrees`: the grid's cell; by default the typical area's size, so that a cell holds
  /// about as many areas as overlap there, whatever the areas' scale (districts or countries).
  public init(_ entries: [(Key, Area)], cellDegrees: Double? = nil) {
    self.entries = entries.map { Entry(key: $0.0, area: $0.1) }
    let size = cellDegrees ?? Self.typicalSize(of: entries.map(\.1))
    self.cellDegrees = size
    var cells: [Int64: [Int32]] = [:]
    var everywhere: [Int32] = []
    for (i, entry) in self.entries.enumerated() {
      let b = entry.area.bounds
      let (x0, y0) = Self.cell(b.low, size)
      let (x1, y1) = Self.cell(b.high, size)
      // An area that would fill more than 100,000 cells is tested for every point instead.
      guard (x1 - x0 + 1) * (y1 - y0 + 1) <= 100_000 else {
        everywhere.append(Int32(i))
        continue
      }
      for x in x0...x1 {
        for y in y0...y1 { cells[Self.key(x, y), default: []].append(Int32(i)) }
      }
    }
    self.cells = cells
    self.everywhere = everywhere
  }

  /// The median of the areas' larger sides, from about 100 m to about 100 km.
  static func typicalSize(of areas: [Area]) -> Double {
    let sides = areas.map { area in
      max(area.bounds.high.latitude - area.bounds.low.latitude, area.bounds.high.longitude - area.bounds.low.longitude)
    }.sorted()
    guard !sides.isEmpty else { return 0.05 }
    return min(1, max(0.001, sides[sides.count / 2]))
  }

  static func cell(_ point: LatLng, _ size: Double) -> (Int64, Int64) {
    (Int64((point.longitude / size).rounded(.down)), Int64((point.latitude / size).rounded(.down)))
  }

  static func key(_ x: Int64, _ y: Int64) -> Int64 { (x << 32) ^ (y & 0xFFFF_FFFF) }

  /// The areas containing `point`, in the order they were given.
  public func areas(containing point: LatLng) -> [Entry] {
    let (x, y) = Self.cell(point, cellDegrees)
    let cell = cells[Self.key(x, y)] ?? []
    var found: [Entry] = []
    guard !everywhere.isEmpty else {
      for i in cell where entries[Int(i)].area.contains(point) { found.append(entries[Int(i)]) }
      return found
    }
    for i in (cell + everywhere).sorted() where entries[Int(i)].area.contains(point) {
      found.append(entries[Int(i)])
    }
    return found
  }
}
