import FleetGeometry
import Synchronization

/// Why a routing query has no answer. Codes are OSRM's, so the HTTP API can pass them through.
public struct RoutingError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable {
    /// A point has no road within reach.
    case noSegment = "NoSegment"
    /// The points are on roads that do not connect.
    case noRoute = "NoRoute"
    /// No part of a trace fits the roads.
    case noMatch = "NoMatch"
    case invalidQuery = "InvalidQuery"
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code.rawValue): \(message)" }
}

/// A point snapped to the road network.
public struct SnappedPoint: Sendable, Hashable {
  public var location: LatLng
  /// The road's name (or ref), empty when it has none; on a junction, those of the roads that
  /// meet there, joined by " / " (OSRM's waypoint names).
  public var name: String
  /// Metres from the asked point.
  public var distance: Double
}

/// One stretch of a route between consecutive waypoints.
public struct RouteLeg: Sendable, Hashable {
  public var distance: Double
  public var duration: Double
  public var geometry: [LatLng]
  /// The roads driven, one span per road edge, in order; they cover `geometry` end to end.
  public var spans: [RouteSpan] = []
  /// The OpenStreetMap node of each point of `geometry` (at a snapped end, the node of its
  /// road segment behind the start or ahead of the end), as OSRM's `nodes` annotation.
  public var nodes: [Int64] = []
}

/// The part of a leg driven on one road edge: what learned traffic is kept per.
public struct RouteSpan: Sendable, Hashable {
  /// The directed edge: the road edge's index in the network, and the direction driven.
  public var edge: Int32
  public var reversed: Bool
  public var distance: Double
  /// Seconds as the route was timed (free flow or traffic: `TrafficTiming`), turn costs included
  /// (spread over the leg's spans by their share).
  public var duration: Double
  /// Seconds at free-flow speed, turn costs included: what learned traffic is measured against.
  public var freeFlowDuration: Double
  /// The leg's geometry between these point indices (inclusive) is this span.
  public var firstPoint: Int
  public var lastPoint: Int
  /// What the route minimised here, spread as `duration` is.
  public var weight: Double

  public init(
    edge: Int32, reversed: Bool, distance: Double, duration: Double, firstPoint: Int, lastPoint: Int,
    weight: Double? = nil, freeFlowDuration: Double? = nil
  ) {
    self.edge = edge
    self.reversed = reversed
    self.distance = distance
    self.duration = duration
    self.freeFlowDuration = freeFlowDuration ?? duration
    self.firstPoint = firstPoint
    self.lastPoint = lastPoint
    self.weight = weight ?? duration
  }
}

public struct Route: Sendable, Hashable {
  public var distance: Double
  public var duration: Double
  /// What the route minimised (seconds with the profile's preferences).
  public var weight: Double
  public var legs: [RouteLeg]
  public var waypoints: [SnappedPoint]

  /// The whole route's shape, legs joined.
  public var geometry: [LatLng] { joinedGeometry(legs) }
}

/// Consecutive legs' shapes as one line (each leg starts where the previous one ended).
func joinedGeometry(_ legs: [RouteLeg]) -> [LatLng] {
  var points: [LatLng] = []
  for leg in legs {
    points.append(contentsOf: points.last == leg.geometry.first ? leg.geometry.dropFirst() : leg.geometry[...])
  }
  return points
}

/// The one entry point to routing: its network is immutable after it is built, and each query
/// reads one metric that traffic customization swaps whole (`RoutingEngine+Traffic`), so any
/// number of queries may run on it concurrently.
public final class RoutingEngine: Sendable {
  public let network: RoadNetwork
  public let profile: CarProfile
  let turns: TurnGraph
  /// The roads at each junction as a driver sees them: turn costs and guidance read them.
  let junctionGeometry: JunctionGeometry
  /// The hierarchy's topology, every metric's.
  let hierarchy: CCH
  /// The current traffic's metric and those made on demand (`RoutingEngine+Traffic`).
  let metrics: Mutex<TrafficMetrics>
  /// The turn graph's arcs by target, for backward searches (alternative routes).
  let incomingArcs: IncomingArcs
  let labels: SearchLabelPool
  let index: SegmentIndex
  /// Strongly connected components, sized as OSRM sizes them.
  let components: RoadComponents
  /// The area the network covers, with a margin: points outside it get `NoSegment`.
  let bounds: (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>)

  /// Components smaller than this are "tiny", as in OSRM (`--small-component-size`), counted in
  /// its units (`RoadComponents`).
  public static let smallComponentSize: Int32 = 1000
  /// How far outside the network's bounding box a point may be and still be snapped (degrees).
  static let boundsMargin = 0.5

  /// The engine for `network`; `cchOrder` is the hierarchy's node order when already known
  /// (stored in graph files by `GraphFile.write`), else it is computed.
  public init(network: RoadNetwork, profile: CarProfile = CarProfile(), cchOrder: [Int32]? = nil) {
    self.network = network
    self.profile = profile
    junctionGeometry = JunctionGeometry(network: network)
    turns = TurnGraph(network: network, profile: profile, geometry: junctionGeometry)
    hierarchy = CCH(graph: turns, network: network, order: cchOrder)
    metrics = Mutex(TrafficMetrics(current: CustomizedCCH(cch: hierarchy, graph: turns, network: network)))
    incomingArcs = IncomingArcs(turns)
    labels = SearchLabelPool(nodeCount: turns.directedEdgeCount)
    index = SegmentIndex(network: network)
    components = RoadComponents(network: network, graph: turns, smallComponentSize: Self.smallComponentSize)
    let latitudes = network.points.map(\.latitude)
    let longitudes = network.points.map(\.longitude)
    if let south = latitudes.min(), let north = latitudes.max(), let west = longitudes.min(),
      let east = longitudes.max()
    {
      bounds = (
        (south - Self.boundsMargin)...(north + Self.boundsMargin),
        (west - Self.boundsMargin)...(east + Self.boundsMargin)
      )
    } else {
      bounds = (0...0, 0...0)
    }
  }

  /// Loads a graph file written by `GraphFile.write` (`fleetd graph build`).
  public convenience init(graph path: String) throws {
    let (network, profile, order) = try GraphFile.read(path)
    self.init(network: network, profile: profile, cchOrder: order)
  }

  /// Loads a graph file on a thread of its own: building the hierarchy takes seconds on a large
  /// network, too long to hold one of the threads every task shares.
  public static func load(graph path: String) async throws -> RoutingEngine {
    try await onDedicatedThread(named: "graph-load") { try RoutingEngine(graph: path) }
  }

  /// Extracts the network from an OSM PBF file.
  public convenience init(osm path: String, profile: CarProfile = CarProfile()) throws {
    let (network, _) = try OSMExtractor(profile: profile).extract(path: path)
    self.init(network: network, profile: profile)
  }

  // MARK: - Nearest road

  /// The `count` nearest roads to a point, closest first; `radius` in metres limits the search.
  public func nearest(_ point: LatLng, count: Int = 1, radius: Double? = nil) throws(RoutingError) -> [SnappedPoint] {
    try validate(point, "coordinate")
    let found = index.nearest(
      FixedCoordinate(latitude: point.latitude, longitude: point.longitude), in: network, count: count,
      radius: radius ?? .infinity, accept: isStartpoint)
    guard !found.isEmpty else {
      throw RoutingError(
        .noSegment, radius.map { "no road within \($0) m of the coordinate" } ?? "the road network is empty")
    }
    return found.map(snapped)
  }

  func snapped(_ position: RoadPosition) -> SnappedPoint {
    SnappedPoint(
      location: position.point.latLng,
      name: network.names[Int(network.edges[position.edge].nameIndex)], distance: position.distance)
  }

  /// A point on several roads (a junction's `candidates`) is named after all of them, as OSRM
  /// joins its candidates' names.
  func snapped(_ roads: [RoadPosition]) -> SnappedPoint {
    var point = snapped(roads[0])
    guard roads.count > 1 else { return point }
    point.name = roads.map { network.names[Int(network.edges[$0.edge].nameIndex)] }.filter { !$0.isEmpty }
      .joined(separator: " / ")
    return point
  }

  /// The component a position is in: its forward direction's when that is drivable.
  func componentOf(_ edge: Int) -> Int32 {
    let e = network.edges[edge]
    return components.component[Int(TurnGraph.directed(edge, reversed: e.forward == nil))]
  }

  /// Trips may start or end on the edge (OSRM's `is_startpoint`: not a ferry, not a private
  /// service road).
  func isStartpoint(_ edge: Int) -> Bool { network.edges[edge].isStartpoint }

  func isInBigComponent(_ edge: Int) -> Bool { isStartpoint(edge, where: components.isTiny, holds: false) }

  /// In the network's main part (`RoadComponents.mainFrom`): where drives that OSRM's snapping
  /// cannot connect go instead.
  func isInMainComponent(_ edge: Int) -> Bool { isStartpoint(edge, where: components.isMain, holds: true) }

  /// Every way the edge may be driven is in the main part, not only one: routes from anywhere
  /// else reach it and leave it (a place for a simulated rider or parcel).
  public func isWhollyInMainComponent(_ edge: Int) -> Bool {
    let e = network.edges[edge]
    return [false, true].allSatisfy {
      e.cost(reversed: $0) == nil || components.isMain(Int(TurnGraph.directed(edge, reversed: $0)))
    }
  }

  /// A startpoint with a drivable direction whose component `test` answers `holds` for.
  private func isStartpoint(_ edge: Int, where test: (Int) -> Bool, holds: Bool) -> Bool {
    let e = network.edges[edge]
    return e.isStartpoint
      && [false, true].contains {
        e.cost(reversed: $0) != nil && test(Int(TurnGraph.directed(edge, reversed: $0))) == holds
      }
  }

  /// Snaps waypoints as OSRM does: to the nearest road, unless that leaves some of them in a tiny
  /// component the others are not in; then each goes to its nearest road in a big component,
  /// when there is one.
  func positions(_ points: [LatLng], radiuses: [Double?]? = nil) throws(RoutingError) -> [RoadPosition] {
    var nearest: [RoadPosition] = []
    for (i, point) in points.enumerated() {
      try validate(point, "coordinate \(i)")
      let radius = radiuses?[i] ?? .infinity
      guard let first = index.nearest(fixed(point), in: network, radius: radius, accept: isStartpoint).first else {
        throw RoutingError(.noSegment, "coordinate \(i) has no road within \(radius) m")
      }
      nearest.append(first)
    }
    let components = Set(nearest.map { componentOf($0.edge) })
    if components.count == 1 { return nearest }
    return moved(nearest, points, radiuses: radiuses, into: isInBigComponent)
  }

  /// The positions not on a road that `accept`s moved to the nearest one that does, within their
  /// radius; those with none stay.
  func moved(
    _ positions: [RoadPosition], _ points: [LatLng], radiuses: [Double?]?, into accept: (Int) -> Bool
  ) -> [RoadPosition] {
    positions.enumerated().map { i, position in
      if accept(position.edge) { return position }
      let radius = radiuses?[i] ?? .infinity
      return index.nearest(fixed(points[i]), in: network, radius: radius, accept: accept).first ?? position
    }
  }

  /// OSRM's snapping finds no route where a small extract has no big component (OSRM then calls
  /// every component tiny and keeps each waypoint on its nearest road, however cut off): the
  /// waypoints then go to the main part, the answer a user wants (docs/routing.md).
  func positionsInMainPart(
    _ positions: [RoadPosition], _ points: [LatLng], options: RouteOptions
  ) -> [RoadPosition]? {
    let moved =
      options.constrainsSnapping
      ? constrainedPositions(positions, points, options: options, into: isInMainComponent)
      : moved(positions, points, radiuses: options.radiuses, into: isInMainComponent)
    return zip(moved, positions).contains { $0.edge != $1.edge } ? moved : nil
  }

  func fixed(_ point: LatLng) -> FixedCoordinate {
    FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
  }

  /// `label` names the point in an error; it is only made for one.
  func validate(_ point: LatLng, _ label: @autoclosure () -> String) throws(RoutingError) {
    guard point.latitude.isFinite, point.longitude.isFinite, (-90...90).contains(point.latitude),
      (-180...180).contains(point.longitude)
    else { throw RoutingError(.invalidQuery, "\(label()) \(point) is not a valid coordinate") }
    guard bounds.latitude.contains(point.latitude), bounds.longitude.contains(point.longitude) else {
      throw RoutingError(.noSegment, "\(label()) is outside the area the road network covers")
    }
  }

  // MARK: - Routes

  /// The fastest route through `waypoints` (at least two), in order. `radiuses` (metres, one per
  /// waypoint, nil for unlimited) bounds how far each may be from its road.
  public func route(_ waypoints: [LatLng], radiuses: [Double?]? = nil) throws(RoutingError) -> Route {
    let (legs, roads, metric) = try solve(waypoints, options: RouteOptions(radiuses: radiuses))
    return route(of: legs, at: roads, metric: metric)
  }

  /// The fastest path of each leg between the snapped waypoints, each waypoint's roads
  /// (`candidates`) and the metric searched.
  func solve(_ waypoints: [LatLng], options: RouteOptions) throws(RoutingError) -> (
    [FoundLeg], [[RoadPosition]], CustomizedCCH
  ) {
    guard waypoints.count >= 2 else { throw RoutingError(.invalidQuery, "a route needs at least two coordinates") }
    try options.validate(waypoints: waypoints.count)
    let metric = metric(options.traffic, excluding: options.excluding)
    let positions = try positions(waypoints, options: options)
    var roads = candidates(positions, waypoints, options: options)
    do {
      return (try legs(through: roads, metric: metric, continueStraight: options.continueStraight), roads, metric)
    } catch {
      guard let main = positionsInMainPart(positions, waypoints, options: options) else { throw error }
      roads = candidates(main, waypoints, options: options)
      return (try legs(through: roads, metric: metric, continueStraight: options.continueStraight), roads, metric)
    }
  }

  /// The route that drives `legs` through waypoints on `roads`.
  func route(of found: [FoundLeg], at roads: [[RoadPosition]], metric: CustomizedCCH) -> Route {
    let legs = found.map { leg(of: $0.path, from: $0.from, to: $0.to, metric: metric) }
    return Route(
      distance: legs.reduce(0) { $0 + $1.distance }, duration: legs.reduce(0) { $0 + $1.duration },
      weight: found.reduce(0) { $0 + $1.path.weight }, legs: legs, waypoints: roads.map(snapped))
  }

  public func route(from: LatLng, to: LatLng) throws(RoutingError) -> Route { try route([from, to]) }

  /// The fastest route through `waypoints`, leaving the first the way a car there heads
  /// (`heading`, degrees clockwise from north, within `headingTolerance`, on a road within
  /// `headingRadius`): on a junction, from a road there that runs its way. Any way from the
  /// nearest point's roads when the heading is unknown or no road near runs so (a heading the
  /// device got wrong must not move the start to a distant road).
  public func route(_ waypoints: [LatLng], heading: Double?) throws(RoutingError) -> Route {
    if let heading, !waypoints.isEmpty {
      let options = RouteOptions(
        radiuses: [Self.headingRadius] + waypoints.dropFirst().map { _ in nil },
        bearings: [WaypointBearing(degrees: heading, range: Self.headingTolerance)]
          + waypoints.dropFirst().map { _ in nil })
      if let route = try? routes(waypoints, options: options).first { return route }
    }
    return try route(waypoints)
  }

  /// Degrees either side of a car's heading that the road it is on may run.
  public static let headingTolerance = 45.0
  /// Metres from a car to the roads its heading chooses among.
  public static let headingRadius = 30.0

  /// The legs of the fastest route through `waypoints`, as `route` finds them, without their
  /// geometry: each leg's totals and the roads it drives (`spans`, their point indices 0). For
  /// estimates through stops (searches, dispatch, quotes).
  public func drivenLegs(_ waypoints: [LatLng], traffic: TrafficTiming = .current) throws(RoutingError) -> [RouteLeg] {
    let (legs, _, metric) = try solve(waypoints, options: RouteOptions(traffic: traffic))
    return legs.map { leg(of: $0.path, from: $0.from, to: $0.to, geometry: false, metric: metric) }
  }

  /// The fastest path of each leg, in order, each leg from and to whichever of its waypoints'
  /// roads is fastest.
  func legs(through candidates: [[RoadPosition]], metric: CustomizedCCH) throws(RoutingError) -> [FoundLeg] {
    var legs: [FoundLeg] = []
    for i in 0..<(candidates.count - 1) {
      guard let leg = search(from: candidates[i], to: candidates[i + 1], metric: metric) else {
        throw RoutingError(.noRoute, "no route from coordinate \(i) to coordinate \(i + 1)")
      }
      legs.append(leg)
    }
    return legs
  }

  func search(from source: RoadPosition, to target: RoadPosition, metric: CustomizedCCH) -> FoundPath? {
    search(from: [source], to: [target], metric: metric)?.path
  }

  /// The fastest path from any of `sources` to any of `targets` (the roads at one point each),
  /// with the two it drives from and to.
  func search(from sources: [RoadPosition], to targets: [RoadPosition], metric: CustomizedCCH) -> FoundLeg? {
    let starts = sources.flatMap { endpoints(of: $0, in: network, asSource: true, slowdowns: metric.slowdowns) }
    let ends = targets.flatMap { targetEndpoints(of: $0, slowdowns: metric.slowdowns) }
    guard !starts.isEmpty, !ends.isEmpty else { return nil }
    let search = CCHSearch(customized: metric, network: network, graph: turns)
    let direct = directPath(from: sources, to: targets, slowdowns: metric.slowdowns)
    let shared = Set(starts.map(\.directed)).intersection(ends.map(\.directed))
    var found: FoundPath?
    if shared.isEmpty {
      found = search.shortestPath(from: starts, to: ends, sameEdge: direct, pool: labels)
    } else {
      let (aims, entering) = aiming(ends, around: shared, metric: metric)
      if aims.isEmpty {
        found = direct
      } else if var path = search.shortestPath(from: starts, to: aims, sameEdge: direct, pool: labels) {
        let isDirect = direct.map { $0.weight == path.weight && $0.directedEdges == path.directedEdges } ?? false
        if !isDirect, let last = path.directedEdges.last, let end = entering[last] {
          path.directedEdges.append(end)
        }
        found = path
      }
    }
    guard let path = found, let first = path.directedEdges.first, let last = path.directedEdges.last else {
      return nil
    }
    // Each candidate is a road of its own: the path's first and last roads say which it took.
    let from = sources.first { $0.edge == TurnGraph.edge(of: first) } ?? sources[0]
    let to = targets.first { $0.edge == TurnGraph.edge(of: last) } ?? targets[0]
    return FoundLeg(path: path, from: from, to: to)
  }

  /// An end on a start's own directed edge but behind it is reached only by leaving the edge and
  /// driving back into it, which the hierarchy's meeting rule (a start and an end on one node do
  /// not meet there) can miss: such ends are replaced by the roads that turn into their edge,
  /// each carrying the turn and the edge up to the end. Also returns which edge each of those
  /// roads enters, to add after a path found to it.
  func aiming(_ targets: [Endpoint], around shared: Set<Int32>, metric: CustomizedCCH) -> (
    [Endpoint], [Int32: Int32]
  ) {
    var aims = targets.filter { !shared.contains($0.directed) }
    var entering: [Int32: Int32] = [:]
    for end in targets where shared.contains(end.directed) {
      for i in incomingArcs.arcs(into: end.directed) {
        let before = incomingArcs.source[i]
        let arc = Int(incomingArcs.arc[i])
        let driven = turns.original(before)
        let edge = network.edges[TurnGraph.edge(of: driven)]
        guard let cost = metric.slowdowns.cost(edge, driven), cost.classes.isDisjoint(with: metric.excluded)
        else { continue }
        let aim = Endpoint(
          directed: before, weight: cost.weight + Double(turns.arcTurnCost[arc] + turns.arcPenalty[arc]) + end.weight,
          duration: cost.duration + Double(turns.arcTurnCost[arc]) + end.duration, distance: edge.length + end.distance,
          isApproach: true)
        if let known = aims.firstIndex(where: { $0.directed == before }) {
          guard aim.weight < aims[known].weight else { continue }
          aims[known] = aim
        } else {
          aims.append(aim)
        }
        entering[driven] = end.directed
      }
    }
    return (aims, entering)
  }

  /// The same answer by plain Dijkstra over the turn graph: the reference the CCH is tested against.
  func searchExactly(
    from source: RoadPosition, to target: RoadPosition, slowdowns: RoadSlowdowns = .freeFlow
  ) -> FoundPath? {
    let sources = endpoints(of: source, in: network, asSource: true, slowdowns: slowdowns)
    let targets = targetEndpoints(of: target, slowdowns: slowdowns)
    return DijkstraSearch(network: network, graph: turns, slowdowns: slowdowns)
      .shortestPath(from: sources, to: targets, sameEdge: directPath(from: source, to: target, slowdowns: slowdowns))
  }

  /// Where a search may end at a position: its endpoints, and the same on every copy of their
  /// roads (via-way restrictions), which arrive there too.
  func targetEndpoints(of position: RoadPosition, slowdowns: RoadSlowdowns) -> [Endpoint] {
    let ends = endpoints(of: position, in: network, asSource: false, slowdowns: slowdowns)
    guard !turns.duplicates.isEmpty else { return ends }
    return ends.flatMap { end in
      [end]
        + (turns.duplicates[end.directed] ?? []).map {
          Endpoint(directed: $0, weight: end.weight, duration: end.duration, distance: end.distance)
        }
    }
  }

  /// Driving straight along one edge from one position to a later one on it, if possible.
  func directPath(from source: RoadPosition, to target: RoadPosition, slowdowns: RoadSlowdowns) -> FoundPath? {
    guard source.edge == target.edge else { return nil }
    let edge = network.edges[source.edge]
    var direct: FoundPath?
    for reversed in [false, true]
    where source.directions.contains(.along(reversed: reversed))
      && target.directions.contains(.along(reversed: reversed))
    {
      guard let cost = slowdowns.cost(edge, TurnGraph.directed(source.edge, reversed: reversed)) else { continue }
      let metres = reversed ? source.offset - target.offset : target.offset - source.offset
      guard metres >= 0 else { continue }
      let share = edge.length > 0 ? metres / edge.length : 0
      let path = FoundPath(
        directedEdges: [TurnGraph.directed(source.edge, reversed: reversed)], weight: cost.weight * share,
        duration: cost.duration * share, distance: metres)
      if path.weight < (direct?.weight ?? .infinity) { direct = path }
    }
    return direct
  }

  // MARK: - Matrices

  /// Durations (s) and distances (m) from every source to every destination; nil where no route.
  public struct Matrix: Sendable, Hashable {
    public var durations: [[Double?]]
    public var distances: [[Double?]]
    public var sources: [SnappedPoint]
    public var destinations: [SnappedPoint]
  }

  /// The matrix between `sources` and `destinations` (one upward search per point, buckets
  /// between), timed with `traffic`.
  public func matrix(sources: [LatLng], destinations: [LatLng], traffic: TrafficTiming = .current) throws(RoutingError)
    -> Matrix
  {
    let metric = metric(traffic)
    guard !sources.isEmpty, !destinations.isEmpty else {
      throw RoutingError(.invalidQuery, "a matrix needs at least one source and one destination")
    }
    let points = sources + destinations
    // Each place is snapped once, however often it is named (a square table names each twice).
    var slot: [LatLng: Int] = [:]
    var distinct: [LatLng] = []
    let slots = points.map { point in
      if let known = slot[point] { return known }
      slot[point] = distinct.count
      distinct.append(point)
      return distinct.count - 1
    }
    let snappedOnce = try positions(distinct)
    let roadsOnce = candidates(snappedOnce, distinct, options: RouteOptions())
    var roads = slots.map { roadsOnce[$0] }
    var found = matrix(roads, sources: sources.count, metric: metric)
    // Pairs OSRM's snapping leaves unconnected: again with every point in the main part.
    if found.contains(where: { $0.contains { $0 == nil } }),
      let main = positionsInMainPart(roads.map { $0[0] }, points, options: RouteOptions())
    {
      roads = candidates(main, points, options: RouteOptions())
      found = matrix(roads, sources: sources.count, metric: metric)
    }
    let from = Array(roads.prefix(sources.count))
    let to = Array(roads.suffix(destinations.count))
    let durations = found.map { $0.map { $0?.duration } }
    let distances = found.map { $0.map { $0?.distance } }
    return Matrix(durations: durations, distances: distances, sources: from.map(snapped), destinations: to.map(snapped))
  }

  /// The paths from the first `sources` places to the others, each place's roads its candidates
  /// (`candidates`): from whichever road of a source to whichever of a destination is fastest.
  func matrix(_ places: [[RoadPosition]], sources: Int, metric: CustomizedCCH) -> [[FoundPath?]] {
    let from = Array(places.prefix(sources))
    let to = Array(places.dropFirst(sources))
    let slowdowns = metric.slowdowns
    let starts = from.map { $0.flatMap { endpoints(of: $0, in: network, asSource: true, slowdowns: slowdowns) } }
    // Ends on a start's own edge are aimed at through the roads into it (`aiming`).
    let startNodes = Set(starts.joined().map(\.directed))
    let ends = to.map { roads in
      let ends = roads.flatMap { targetEndpoints(of: $0, slowdowns: slowdowns) }
      let shared = startNodes.intersection(ends.map(\.directed))
      return shared.isEmpty ? ends : aiming(ends, around: shared, metric: metric).0
    }
    return CCHSearch(customized: metric, network: network, graph: turns).matrix(
      sources: starts, targets: ends, direct: { directPath(from: from[$0], to: to[$1], slowdowns: slowdowns) },
      pool: labels)
  }

  /// Driving straight along one edge from one of a place's roads to one of another's, the
  /// fastest such if several share an edge.
  func directPath(from sources: [RoadPosition], to targets: [RoadPosition], slowdowns: RoadSlowdowns) -> FoundPath? {
    var direct: FoundPath?
    for source in sources {
      for target in targets where source.edge == target.edge {
        if let path = directPath(from: source, to: target, slowdowns: slowdowns),
          path.weight < direct?.weight ?? .infinity
        {
          direct = path
        }
      }
    }
    return direct
  }

  /// The leg a found path drives: its shape (the rest of the first edge, whole edges, the start
  /// of the last edge) and one span per edge. Without `geometry`, the spans and totals only
  /// (no shape, no nodes, every span's point indices 0): what an estimate timing the roads with
  /// learned traffic needs, at a fraction of the cost of cutting each edge's shape.
  func leg(
    of path: FoundPath, from source: RoadPosition, to target: RoadPosition, geometry: Bool = true,
    metric: CustomizedCCH
  ) -> RouteLeg {
    var points: [FixedCoordinate] = []
    var nodes: [Int64] = []
    var spans: [RouteSpan] = []
    for (i, directed) in path.directedEdges.enumerated() {
      let edgeIndex = TurnGraph.edge(of: directed)
      let edge = network.edges[edgeIndex]
      let reversed = TurnGraph.isReversed(directed)
      // Positions along this edge in metres from `from`: where the driven part starts and ends.
      let startOffset = i == 0 ? source.offset : (reversed ? edge.length : 0)
      let endOffset = i == path.directedEdges.count - 1 ? target.offset : (reversed ? 0 : edge.length)
      let first = max(points.count - 1, 0)
      if geometry {
        let shapeIndices = network.shape(of: edge)
        let node = { [network] (shapePoint: Int) in
          network.pointNodes.isEmpty ? 0 : network.pointNodes[Int(shapeIndices[shapeIndices.startIndex + shapePoint])]
        }
        if i > 0 && i < path.directedEdges.count - 1 {
          // A whole edge: its shape as it is, without measuring where to cut it.
          for k in 0..<shapeIndices.count {
            let shapePoint = reversed ? shapeIndices.count - 1 - k : k
            let p = network.points[Int(shapeIndices[shapeIndices.startIndex + shapePoint])]
            guard points.last != p else { continue }
            points.append(p)
            nodes.append(node(shapePoint))
          }
        } else {
          let shape = shapeIndices.map { network.points[Int($0)] }
          var part = Self.cut(shape, from: min(startOffset, endOffset), to: max(startOffset, endOffset))
          if reversed { part.reverse() }
          for (p, shapePoint) in part where points.last != p {
            points.append(p)
            nodes.append(node(shapePoint))
          }
        }
      }
      let metres = abs(endOffset - startOffset)
      let share = edge.length > 0 ? metres / edge.length : 0
      let free = edge.cost(reversed: reversed)
      let cost = metric.slowdowns.cost(edge, TurnGraph.directed(edgeIndex, reversed: reversed))
      spans.append(
        RouteSpan(
          edge: Int32(edgeIndex), reversed: reversed, distance: metres, duration: (cost?.duration ?? 0) * share,
          firstPoint: first, lastPoint: max(points.count - 1, first), weight: (cost?.weight ?? 0) * share,
          freeFlowDuration: (free?.duration ?? 0) * share))
    }
    if !geometry {
      Self.spreadTurnCosts(of: path, over: &spans)
      return RouteLeg(distance: path.distance, duration: path.duration, geometry: [], spans: spans, nodes: [])
    }
    // The ends are exactly the snapped points (the cut above interpolates by distance instead).
    if points.isEmpty {
      points = [source.point, target.point]
      nodes = [0, 0]
    }
    points[0] = source.point
    if points.count == 1 {
      points.append(target.point)
      nodes.append(nodes[0])
    } else {
      points[points.count - 1] = target.point
    }
    if let last = spans.indices.last { spans[last].lastPoint = points.count - 1 }
    Self.spreadTurnCosts(of: path, over: &spans)
    return RouteLeg(
      distance: path.distance, duration: path.duration,
      geometry: points.map { LatLng(latitude: $0.latitude, longitude: $0.longitude) }, spans: spans, nodes: nodes)
  }

  /// Turn costs are in the path's duration and weight but on no edge: spread them by each
  /// span's share.
  static func spreadTurnCosts(of path: FoundPath, over spans: inout [RouteSpan]) {
    let edgeSeconds = spans.reduce(0) { $0 + $1.duration }
    if edgeSeconds > 0 {
      let turnSeconds = path.duration - edgeSeconds
      for i in spans.indices {
        let turn = turnSeconds * spans[i].duration / edgeSeconds
        spans[i].duration += turn
        spans[i].freeFlowDuration += turn
      }
    }
    let edgeWeight = spans.reduce(0) { $0 + $1.weight }
    if edgeWeight > 0 {
      let scale = path.weight / edgeWeight
      for i in spans.indices { spans[i].weight *= scale }
    }
  }

  /// The part of a shape between two distances along it, each point with the shape point it is
  /// or, where it is cut inside a segment, the segment's end on the far side of the cut.
  static func cut(_ shape: [FixedCoordinate], from: Double, to: Double) -> [(FixedCoordinate, Int)] {
    var result: [(FixedCoordinate, Int)] = []
    result.reserveCapacity(shape.count + 1)
    var travelled = 0.0
    for k in 0..<(shape.count - 1) {
      let a = shape[k]
      let b = shape[k + 1]
      let step = Geo.distance(a, b)
      let segmentStart = travelled
      let segmentEnd = travelled + step
      travelled = segmentEnd
      if segmentEnd < from || segmentStart > to { continue }
      let t0 = step > 0 ? max(0, (from - segmentStart) / step) : 0
      let t1 = step > 0 ? min(1, (to - segmentStart) / step) : 1
      let p0 = t0 <= 0 ? a : Geo.interpolate(a, b, t0)
      let p1 = t1 >= 1 ? b : Geo.interpolate(a, b, t1)
      if result.last?.0 != p0 { result.append((p0, k)) }
      if result.last?.0 != p1 { result.append((p1, k + 1)) }
    }
    return result.isEmpty ? [(shape.first!, 0)] : result
  }
}
