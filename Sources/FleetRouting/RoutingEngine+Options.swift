import FleetGeometry

extension RoutingEngine {
  /// The fastest route through `waypoints` and up to `options.alternatives` others (fastest
  /// first; there may be fewer than asked), with the waypoints snapped as the options say.
  public func routes(_ waypoints: [LatLng], options: RouteOptions) throws(RoutingError) -> [Route] {
    let (positions, paths, metric) = try solve(waypoints, options: options)
    let best = route(of: paths, through: positions, metric: metric)
    guard options.alternatives > 0, positions.count == 2, let path = paths.first, path.directedEdges.count > 1 else {
      return [best]
    }
    let sources = endpoints(of: positions[0], in: network, asSource: true, slowdowns: metric.slowdowns)
    let targets = targetEndpoints(of: positions[1], slowdowns: metric.slowdowns)
    let search = CCHSearch(customized: metric, network: network, graph: turns)
    let others = AlternativeSearch(
      network: network, graph: turns, incoming: incomingArcs, excluding: options.excluding, slowdowns: metric.slowdowns,
      fastest: { search.shortestPath(from: $0, to: $1, sameEdge: nil, pool: self.labels) }
    ).alternatives(to: path, from: sources, to: targets, count: options.alternatives)
    return [best]
      + others.compactMap { edges in
        search.measure(edges, sources: sources, targets: targets).map {
          route(of: [$0], through: positions, metric: metric)
        }
      }
  }

  /// Waypoints snapped by the options: plain nearest-road snapping unless a bearing, an approach
  /// or an exclusion narrows the roads and directions a waypoint may use.
  func positions(_ points: [LatLng], options: RouteOptions) throws(RoutingError) -> [RoadPosition] {
    guard options.constrainsSnapping else { return try positions(points, radiuses: options.radiuses) }
    var nearest: [RoadPosition] = []
    for (i, point) in points.enumerated() {
      try validate(point, "coordinate \(i)")
      guard let position = constrainedPosition(i, point, options: options, accept: isStartpoint) else {
        let radius = options.radiuses?[i] ?? nil
        throw RoutingError(
          .noSegment,
          "coordinate \(i) has no road\(radius.map { " within \($0) m" } ?? "") that its bearing and exclusions allow")
      }
      nearest.append(position)
    }
    if Set(nearest.map { componentOf($0.edge) }).count == 1 { return nearest }
    return constrainedPositions(nearest, points, options: options, into: isInBigComponent)
  }

  /// The positions not on a road that `accept`s moved to the nearest one that does and that
  /// the options allow; those with none stay.
  func constrainedPositions(
    _ positions: [RoadPosition], _ points: [LatLng], options: RouteOptions, into accept: @escaping (Int) -> Bool
  ) -> [RoadPosition] {
    positions.enumerated().map { i, position in
      accept(position.edge)
        ? position : constrainedPosition(i, points[i], options: options, accept: accept) ?? position
    }
  }

  func constrainedPosition(_ i: Int, _ point: LatLng, options: RouteOptions, accept: @escaping (Int) -> Bool)
    -> RoadPosition?
  {
    let radius = options.radiuses?[i] ?? nil
    let excluding = options.excluding
    let bearing = options.bearings?[i] ?? nil
    // Segments are taken only where some direction the options allow is driven on them. With a
    // bearing, the roads meeting at the nearest point are all asked for (below).
    let candidates = index.nearest(
      fixed(point), in: network, count: bearing == nil ? 1 : Self.roadsAtAPoint, radius: radius ?? .infinity,
      accept: { edge in
        accept(edge)
          && [false, true].contains {
            self.network.edges[edge].cost(reversed: $0)?.classes.isDisjoint(with: excluding) ?? false
          }
      },
      acceptSegment: bearing.map { bearing in
        { edge, segment in !self.directions(edge, segment, bearing: bearing, excluding: excluding).isEmpty }
      })
    return headedMost(candidates, bearing: bearing).flatMap {
      self.narrowed($0, point, bearing: bearing, approach: options.approaches?[i], excluding: excluding)
    }
  }

  /// At most this many roads are weighed where a point lies on a junction.
  static let roadsAtAPoint = 8

  /// The nearest candidate; of several equally near (a point on a junction, where the roads
  /// meet), the one a direction of which heads most nearly the bearing's way: a car heading
  /// into one road at a junction is on that road, not on the one that merely touches its point.
  /// (OSRM routes from every road at such a point; one road is a route's start here.)
  func headedMost(_ candidates: [RoadPosition], bearing: WaypointBearing?) -> RoadPosition? {
    guard let bearing, let nearest = candidates.first else { return candidates.first }
    let tied = candidates.prefix { $0.distance <= nearest.distance + Self.sameSpot }
    return tied.min { deviation($0, from: bearing) < deviation($1, from: bearing) } ?? nearest
  }

  /// Positions nearer to each other than this are one spot (a few centimetres of rounding).
  static let sameSpot = 0.05

  /// Degrees between the bearing and the nearest direction driven on the position's segment.
  func deviation(_ position: RoadPosition, from bearing: WaypointBearing) -> Double {
    let road = network.edges[position.edge]
    let (a, b) = segment(position.edge, position.segment)
    var least = 360.0
    for reversed in [false, true] where road.cost(reversed: reversed) != nil {
      least = min(
        least, PerceivedBearing.angularDeviation(reversed ? Geo.bearing(b, a) : Geo.bearing(a, b), bearing.degrees))
    }
    return least
  }

  /// The position with only the directions the options allow there, or nil when none is left
  /// by its bearing. A kerb-side approach that no direction meets (a one-way road with the
  /// point on its far side) is not held to.
  func narrowed(
    _ position: RoadPosition, _ point: LatLng, bearing: WaypointBearing?, approach: Approach?, excluding: RoadClasses
  ) -> RoadPosition? {
    let edge = network.edges[position.edge]
    let (a, b) = segment(position.edge, position.segment)
    var directions = directions(position.edge, position.segment, bearing: bearing, excluding: excluding)
    guard !directions.isEmpty else { return nil }
    if approach == .curb {
      // Which side of the segment, as driven from a to b, the asked point is on.
      let p = fixed(point)
      let cross =
        Double(b.longitudeE6 - a.longitudeE6) * Double(p.latitudeE6 - a.latitudeE6) - Double(
          b.latitudeE6 - a.latitudeE6)
        * Double(p.longitudeE6 - a.longitudeE6)
      if cross != 0 {
        let onRight = cross < 0
        let kerb: RoadDirections = (onRight == (edge.drivingSide == .right)) ? .forward : .backward
        if directions.contains(kerb) { directions = kerb }
      }
    }
    var narrowed = position
    narrowed.directions = directions
    return narrowed
  }

  /// A segment's ends, in the edge's direction.
  func segment(_ edge: Int, _ segment: Int) -> (FixedCoordinate, FixedCoordinate) {
    let shape = network.shape(of: network.edges[edge])
    return (
      network.points[Int(shape[shape.startIndex + segment])], network.points[Int(shape[shape.startIndex + segment + 1])]
    )
  }

  /// The directions a segment may be driven in that are of no excluded class and, given a
  /// bearing, head its way.
  func directions(_ edge: Int, _ segment: Int, bearing: WaypointBearing?, excluding: RoadClasses) -> RoadDirections {
    let road = network.edges[edge]
    let (a, b) = self.segment(edge, segment)
    var directions: RoadDirections = []
    for reversed in [false, true] {
      guard let cost = road.cost(reversed: reversed), cost.classes.isDisjoint(with: excluding) else { continue }
      if let bearing {
        let along = reversed ? Geo.bearing(b, a) : Geo.bearing(a, b)
        guard PerceivedBearing.angularDeviation(along, bearing.degrees) <= bearing.range else { continue }
      }
      directions.insert(.along(reversed: reversed))
    }
    return directions
  }

  /// Legs through via waypoints without turning back at them: each via is passed in one
  /// direction, chosen for the fastest whole route. Where no route can keep straight on, the legs
  /// may turn back (`paths(through:metric:)`).
  func paths(through positions: [RoadPosition], metric: CustomizedCCH, continueStraight: Bool) throws(RoutingError)
    -> [FoundPath]
  {
    guard continueStraight, positions.count > 2 else { return try paths(through: positions, metric: metric) }
    // Per via: the ways it may be passed, and the best route so far ending with each.
    var best: [(position: RoadPosition, paths: [FoundPath], weight: Double)] = [(positions[0], [], 0)]
    for i in 1..<positions.count {
      let ways: [RoadPosition] =
        i == positions.count - 1
        ? [positions[i]]
        : [RoadDirections.forward, .backward].compactMap { direction in
          guard positions[i].directions.contains(direction) else { return nil }
          var way = positions[i]
          way.directions = direction
          return endpoints(of: way, in: network, asSource: true).isEmpty ? nil : way
        }
      var next: [(position: RoadPosition, paths: [FoundPath], weight: Double)] = []
      for way in ways {
        let reached = best.compactMap { previous -> (RoadPosition, [FoundPath], Double)? in
          guard let path = search(from: previous.position, to: way, metric: metric) else { return nil }
          return (way, previous.paths + [path], previous.weight + path.weight)
        }
        if let fastest = reached.min(by: { $0.2 < $1.2 }) { next.append(fastest) }
      }
      guard !next.isEmpty else { return try paths(through: positions, metric: metric) }
      best = next
    }
    return best.min(by: { $0.weight < $1.weight })!.paths
  }
}

extension RouteOptions {
  func validate(waypoints: Int) throws(RoutingError) {
    for (name, count) in [
      ("radiuses", radiuses?.count), ("bearings", bearings?.count), ("approaches", approaches?.count),
    ] {
      if let count, count != waypoints {
        throw RoutingError(.invalidQuery, "give one of \(name) per coordinate (\(waypoints)), not \(count)")
      }
    }
    if let bad = bearings?.compactMap({ $0 }).first(where: {
      !(0...360).contains($0.degrees) || !(0...180).contains($0.range)
    }) {
      throw RoutingError(
        .invalidQuery, "a bearing is 0 to 360 degrees with a range of 0 to 180, not \(bad.degrees),\(bad.range)")
    }
    guard excluding.isEmpty || RoadClasses.excludableSets.contains(excluding) else {
      throw RoutingError(
        .invalidQuery,
        "exclude one of \(RoadClasses.excludable.names.joined(separator: ", ")), not \(excluding.names.joined(separator: ","))"
      )
    }
    guard alternatives >= 0 else { throw RoutingError(.invalidQuery, "alternatives must not be negative") }
  }
}
