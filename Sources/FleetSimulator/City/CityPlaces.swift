import FleetGeometry
import FleetRouting
import Foundation

/// Where a city's riders come from and go to: the junctions of its two-way public roads (where
/// people live: demand spread as the streets are) and hotspots read from the extract — stations,
/// hospitals, universities, shopping, nightlife, offices and named places, each weighted by how
/// many riders such a place draws, and in extracts cut to the roads alone their stops, station
/// entrances and pedestrian crossings — snapped to the nearest of those junctions.
public struct CityPlaces: Sendable {
  public struct Hotspot: Sendable {
    public var point: LatLng
    public var weight: Double
    public var kind: String
  }

  /// Junctions of two-way public roads.
  public let points: [LatLng]
  public let hotspots: [Hotspot]
  /// Running sums of the hotspots' weights, for drawing one.
  let cumulative: [Double]
  /// The share of trip ends drawn from the hotspots (the rest from the streets).
  public var hotspotShare = 0.5
  /// Trip lengths (straight line): log-normal around `medianTripMetres`, kept within the bounds;
  /// by default an eighth of the extract's diagonal, at most 4 km.
  public var medianTripMetres: Double
  public var tripMetres: ClosedRange<Double>

  public init(points: [LatLng], hotspots: [Hotspot] = []) {
    self.points = points.isEmpty ? [LatLng(latitude: 0, longitude: 0)] : points
    self.hotspots = hotspots
    var sum = 0.0
    cumulative = hotspots.map {
      sum += $0.weight
      return sum
    }
    // Trips that fit the city: a small town's are shorter than a metro's (an extract reaches
    // beyond the city into its outskirts, so an eighth of its diagonal, at most 4 km).
    let extent = Self.extent(of: self.points)
    medianTripMetres = min(4000, max(300, extent / 8))
    tripMetres = min(800, extent / 10)...max(min(25_000, extent / 2), min(800, extent / 10) + 1)
  }

  /// The diagonal of the points' bounding box, metres.
  static func extent(of points: [LatLng]) -> Double {
    guard let first = points.first else { return 0 }
    var (south, north, west, east) = (first.latitude, first.latitude, first.longitude, first.longitude)
    for p in points {
      south = min(south, p.latitude)
      north = max(north, p.latitude)
      west = min(west, p.longitude)
      east = max(east, p.longitude)
    }
    return LatLng(latitude: south, longitude: west).distance(to: LatLng(latitude: north, longitude: east))
  }

  /// The junctions of `routing`'s two-way roads that are not service roads, tracks or paths, and
  /// that no road outside the network's main part touches: where a car from anywhere else drives
  /// to (a point on a road cut off at the extract's border is routed to elsewhere).
  public init(routing: RoutingEngine, hotspots: [Hotspot] = []) {
    let network = routing.network
    var seen = Set<Int32>()
    for (index, edge) in network.edges.enumerated() where !routing.isWhollyInMainComponent(index) {
      seen.formUnion([edge.from, edge.to])
    }
    var points: [LatLng] = []
    for edge in network.edges
    where edge.forward != nil && edge.backward != nil && ![.service, .track, .footPath].contains(edge.roadClass)
      && !edge.isRoundabout && seen.insert(edge.from).inserted
    {
      let c = network.coordinate(ofJunction: edge.from)
      points.append(LatLng(latitude: Double(c.latitudeE6) / 1e6, longitude: Double(c.longitudeE6) / 1e6))
    }
    self.init(points: points, hotspots: hotspots)
  }

  /// The road network's junctions with hotspots from the extract at `osmPath`.
  public static func load(routing: RoutingEngine, osmPath: String) throws -> CityPlaces {
    let streets = CityPlaces(routing: routing)
    return CityPlaces(points: streets.points, hotspots: try streets.hotspots(in: PBFReader(path: osmPath)))
  }

  /// How many riders a tagged point draws, relative to an ordinary shop; nil for none.
  public static func weight(of tags: OSMTags) -> (kind: String, weight: Double)? {
    if let value = tags["aeroway"], ["aerodrome", "terminal"].contains(value) { return ("aeroway=\(value)", 40) }
    if tags["railway"] == "station" || tags["public_transport"] == "station" { return ("station", 12) }
    // Road-only extracts keep what lies on the roads: station entrances, stops, crossings (people
    // cross where people are).
    if let value = tags["railway"], ["train_station_entrance", "subway_entrance"].contains(value) {
      return ("railway=\(value)", 6)
    }
    if let value = tags["public_transport"], ["stop_position", "platform"].contains(value) { return ("stop", 1) }
    if tags["highway"] == "bus_stop" { return ("stop", 1) }
    if tags["highway"] == "crossing" { return ("crossing", 0.2) }
    if let value = tags["amenity"] {
      switch value {
      case "hospital": return ("amenity=hospital", 10)
      case "university", "college": return ("amenity=\(value)", 8)
      case "bus_station", "ferry_terminal": return ("amenity=\(value)", 6)
      case "cinema", "theatre", "nightclub", "casino", "events_venue", "conference_centre":
        return ("amenity=\(value)", 4)
      case "bar", "pub", "restaurant": return ("amenity=\(value)", 1.5)
      case "cafe", "fast_food", "clinic", "doctors", "school", "townhall", "library", "marketplace":
        return ("amenity=\(value)", 1)
      default: break
      }
    }
    if let value = tags["shop"] {
      switch value {
      case "mall", "department_store": return ("shop=\(value)", 10)
      case "supermarket": return ("shop=\(value)", 3)
      default: return ("shop", 0.5)
      }
    }
    if let value = tags["tourism"], ["hotel", "attraction", "museum"].contains(value) {
      return ("tourism=\(value)", 3)
    }
    if tags["office"] != nil { return ("office", 1) }
    if let value = tags["place"] {
      switch value {
      case "city", "town": return ("place=\(value)", 8)
      case "suburb", "quarter": return ("place=\(value)", 4)
      case "neighbourhood", "village": return ("place=\(value)", 2)
      default: break
      }
    }
    return nil
  }

  /// The extract's tagged points, each snapped to the nearest street junction within 300 m
  /// (points further from any street are not where a car can stop).
  func hotspots(in source: some OSMElementSource) throws -> [Hotspot] {
    let grid = JunctionGrid(points: points)
    var found: [Hotspot] = []
    try source.read(
      .nodes,
      node: { node in
        guard !node.tags.isEmpty, let (kind, weight) = Self.weight(of: node.tags) else { return }
        let point = LatLng(latitude: node.latitude, longitude: node.longitude)
        guard let nearest = grid.nearest(to: point, within: 300) else { return }
        found.append(Hotspot(point: nearest, weight: weight, kind: kind))
      }, way: { _ in }, relation: { _ in })
    return found
  }

  /// A trip: each end from a hotspot (with `hotspotShare`) or a street, the drop-off at a
  /// log-normal distance from the pickup.
  func trip(using random: inout SplitMix64) -> (pickup: LatLng, dropoff: LatLng) {
    let pickup = end(using: &random)
    // Box–Muller: a normal draw for the log of the distance (σ 0.6: most trips within 2× of the median).
    let u1 = max(Double.ulpOfOne, random.nextUnit())
    let u2 = random.nextUnit()
    let gaussian = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    let target = min(max(medianTripMetres * exp(0.6 * gaussian), tripMetres.lowerBound), tripMetres.upperBound)
    var best = end(using: &random)
    var bestMiss = abs(pickup.distance(to: best) - target)
    for _ in 0..<40 {
      let candidate = end(using: &random)
      let miss = abs(pickup.distance(to: candidate) - target)
      if miss < bestMiss {
        best = candidate
        bestMiss = miss
        if miss < target * 0.1 { break }
      }
    }
    return (pickup, best)
  }

  func end(using random: inout SplitMix64) -> LatLng {
    if let total = cumulative.last, total > 0, random.nextUnit() < hotspotShare {
      let draw = random.nextUnit() * total
      var low = 0
      var high = cumulative.count - 1
      while low < high {
        let middle = (low + high) / 2
        if cumulative[middle] < draw { low = middle + 1 } else { high = middle }
      }
      return hotspots[low].point
    }
    return points[Int(random.next() % UInt64(points.count))]
  }

  /// Riders travelling together: mostly one, sometimes two, rarely three or four.
  func party(using random: inout SplitMix64) -> Int {
    let u = random.nextUnit()
    return u < 0.75 ? 1 : u < 0.93 ? 2 : u < 0.98 ? 3 : 4
  }

  /// Where vehicle number `index` starts: a fixed stride through the streets.
  public func start(for index: Int) -> LatLng { points[(index &* 7919) % points.count] }
}

/// Points in cells of about 250 m, for the nearest one to a position.
struct JunctionGrid {
  let cell = 0.004
  var cells: [Int64: [LatLng]] = [:]

  init(points: [LatLng]) {
    for point in points {
      cells[key(Int(floor(point.latitude / cell)), Int(floor(point.longitude / cell))), default: []].append(point)
    }
  }

  func key(_ row: Int, _ column: Int) -> Int64 {
    Int64(row) << 32 | Int64(UInt32(bitPattern: Int32(truncatingIfNeeded: column)))
  }

  func nearest(to point: LatLng, within metres: Double) -> LatLng? {
    let row = Int(floor(point.latitude / cell))
    let column = Int(floor(point.longitude / cell))
    var best: (LatLng, Double)?
    for r in (row - 1)...(row + 1) {
      for c in (column - 1)...(column + 1) {
        for candidate in cells[key(r, c)] ?? [] {
          let d = point.distance(to: candidate)
          if d <= metres, d < (best?.1 ?? .infinity) { best = (candidate, d) }
        }
      }
    }
    return best?.0
  }
}
