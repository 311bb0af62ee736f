import FleetGeometry

/// The areas a drive from one point reaches within limits (isochrones, or isodistances), each
/// point in them judged as a route to it would be: snapped to its nearest road, and driven
/// there on the fastest path.
public struct Isochrone: Sendable {
  public struct Contour: Sendable {
    /// Seconds or metres.
    public var limit: Double
    public var area: Area
  }

  public var origin: SnappedPoint
  public var metric: ReachMetric
  /// In the order the limits were asked.
  public var contours: [Contour]
  /// The side of the grid's cells the areas were traced on, in metres.
  public var resolution: Double
}

public struct IsochroneOptions: Sendable {
  /// Seconds or metres, increasing.
  public var limits: [Double]
  public var metric: ReachMetric
  public var excluding: RoadClasses
  /// Parts smaller than this share of the largest part of a contour are left out (0 keeps all,
  /// 1 the largest only: Valhalla's `denoise`).
  public var minimumShare: Double
  /// Douglas–Peucker tolerance for the outlines, in metres; nil: the grid's resolution.
  public var toleranceMeters: Double?
  /// Which speeds the roads are timed with.
  public var traffic: TrafficTiming

  public init(
    limits: [Double], metric: ReachMetric = .duration, excluding: RoadClasses = [], minimumShare: Double = 0,
    toleranceMeters: Double? = nil, traffic: TrafficTiming = .current
  ) {
    self.traffic = traffic
    self.limits = limits
    self.metric = metric
    self.excluding = excluding
    self.minimumShare = minimumShare
    self.toleranceMeters = toleranceMeters
  }
}

extension RoutingEngine {
  /// A point farther than this from every road is not reached: a car cannot take it.
  public static let isochroneSnapMeters = 500.0
  /// Cells across the reached area's longer side: the contours' resolution.
  static let isochroneCellsAcross = 400.0
  static let isochroneFinestCell = 10.0
  public static let isochroneMaximumContours = 4

  /// The areas reached from `point` within each of `options.limits`: one search from the point
  /// to every road within the largest limit, the measure along each road drawn on a grid, each
  /// cell off the roads given its nearest road's (within `isochroneSnapMeters`), and each
  /// limit's outline traced on that grid.
  public func isochrone(from point: LatLng, _ options: IsochroneOptions) throws(RoutingError) -> Isochrone {
    let limits = options.limits
    guard (1...Self.isochroneMaximumContours).contains(limits.count) else {
      throw RoutingError(.invalidQuery, "an isochrone needs 1 to \(Self.isochroneMaximumContours) contours")
    }
    guard limits.allSatisfy({ $0.isFinite && $0 > 0 }), zip(limits, limits.dropFirst()).allSatisfy({ $0 < $1 }) else {
      throw RoutingError(.invalidQuery, "contours must be positive and in increasing order")
    }
    guard (0...1).contains(options.minimumShare) else {
      throw RoutingError(.invalidQuery, "denoise must be between 0 and 1")
    }
    // In the network's main part, where `/table` takes its points when a tiny piece of road
    // (or a small extract's pieces) would leave them unconnected.
    var origin = try positions([point], radiuses: nil)
    origin = moved(origin, [point], radiuses: nil, into: isInMainComponent)
    origin[0].directions = .both
    let largest = limits[limits.count - 1]
    let slowdowns = metric(options.traffic).slowdowns
    // From every road at the point, as `/table` leaves it.
    let roads = candidates(origin, [point], options: RouteOptions())[0]
    let labels = ReachSearch(network: network, graph: turns, slowdowns: slowdowns).run(
      from: roads.flatMap { endpoints(of: $0, in: network, asSource: true, slowdowns: slowdowns) },
      metric: options.metric, limit: largest, excluding: options.excluding)
    let grid = reachGrid(labels, metric: options.metric, around: origin[0].point.latLng, slowdowns: slowdowns)
    let tolerance = options.toleranceMeters ?? grid.cellMeters
    return Isochrone(
      origin: snapped(roads), metric: options.metric,
      contours: limits.map { limit in
        Isochrone.Contour(
          limit: limit, area: grid.area(atMost: limit, minimumShare: options.minimumShare, toleranceMeters: tolerance))
      }, resolution: grid.cellMeters)
  }

  /// The drive's measure on a grid over the area it reaches: each cell a road passes through
  /// holds the least measure along it there (infinite for roads not reached), and cells off the
  /// roads take their nearest road's. The roads drawn are those points are snapped to: the
  /// main part's.
  func reachGrid(
    _ labels: ReachSearch.Labels, metric: ReachMetric, around start: LatLng, slowdowns: RoadSlowdowns
  ) -> ValueGrid {
    let search = ReachSearch(network: network, graph: turns, slowdowns: slowdowns)
    // The reached roads' extent.
    var south = start.latitude
    var north = start.latitude
    var west = start.longitude
    var east = start.longitude
    for d in labels.end.indices where labels.end[d].isFinite || labels.reentered[d].isFinite {
      let edge = network.edges[TurnGraph.edge(of: Int32(d))]
      for p in network.shape(of: edge) {
        let point = network.points[Int(p)]
        south = min(south, point.latitude)
        north = max(north, point.latitude)
        west = min(west, point.longitude)
        east = max(east, point.longitude)
      }
    }
    let southWest = LatLng(latitude: south, longitude: west)
    let across = max(
      southWest.distance(to: LatLng(latitude: north, longitude: west)),
      southWest.distance(to: LatLng(latitude: south, longitude: east)))
    let cell = max(across / Self.isochroneCellsAcross, Self.isochroneFinestCell)
    let margin = (Self.isochroneSnapMeters / cell).rounded(.up) + 1
    var grid = ValueGrid(origin: southWest, width: 1, height: 1, cellMeters: cell)
    let (eastCells, northCells) = grid.gridPosition(of: LatLng(latitude: north, longitude: east))
    grid = ValueGrid(
      origin: grid.point(x: -margin, y: -margin), width: Int(eastCells.rounded(.up) + 2 * margin) + 1,
      height: Int(northCells.rounded(.up) + 2 * margin) + 1, cellMeters: cell)
    let corner = grid.point(x: Double(grid.width), y: Double(grid.height))
    let (low, high) = (
      FixedCoordinate(latitude: grid.origin.latitude, longitude: grid.origin.longitude),
      FixedCoordinate(latitude: corner.latitude, longitude: corner.longitude)
    )

    var isRoad = [Bool](repeating: false, count: grid.values.count)
    for e in network.edges.indices where isInMainComponent(e) {
      let edge = network.edges[e]
      let shape = network.shape(of: edge)
      guard shape.count > 1 else { continue }
      // The edge's box against the grid's, and its length in cells (the grid is a plane).
      var (south, north, west, east) = (Int32.max, Int32.min, Int32.max, Int32.min)
      var cells = 0.0
      var previous = grid.gridPosition(of: network.points[Int(shape[shape.startIndex])].latLng)
      for p in shape {
        let point = network.points[Int(p)]
        (south, north) = (min(south, point.latitudeE6), max(north, point.latitudeE6))
        (west, east) = (min(west, point.longitudeE6), max(east, point.longitudeE6))
        let position = grid.gridPosition(of: point.latLng)
        cells +=
          ((position.x - previous.x) * (position.x - previous.x) + (position.y - previous.y) * (position.y - previous.y))
          .squareRoot()
        previous = position
      }
      guard north >= low.latitudeE6, south <= high.latitudeE6, east >= low.longitudeE6, west <= high.longitudeE6
      else { continue }
      let forward = 2 * e
      let backward = 2 * e + 1
      let forwardCost = search.cost(forward, metric)
      let backwardCost = search.cost(backward, metric)
      // Samples every half cell along the shape, each with its share of the way from `from`.
      var along = 0.0
      var a = grid.gridPosition(of: network.points[Int(shape[shape.startIndex])].latLng)
      for p in shape.dropFirst() {
        let b = grid.gridPosition(of: network.points[Int(p)].latLng)
        let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
        let steps = max(1, Int((length * 2).rounded(.up)))
        for step in 0...steps {
          let t = Double(step) / Double(steps)
          let x = Int((a.x + t * (b.x - a.x)).rounded())
          let y = Int((a.y + t * (b.y - a.y)).rounded())
          guard grid.contains(x: x, y: y) else { continue }
          let share = cells > 0 ? min((along + t * length) / cells, 1) : 0
          let value = min(
            labels.value(forward, at: share, cost: forwardCost),
            labels.value(backward, at: 1 - share, cost: backwardCost))
          isRoad[y * grid.width + x] = true
          grid[x, y] = min(grid[x, y], value)
        }
        along += length
        a = b
      }
    }
    grid.spread(within: Self.isochroneSnapMeters) { isRoad[$0] }
    return grid
  }
}
