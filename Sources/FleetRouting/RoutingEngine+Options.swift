import FleetGeometry

extension RoutingEngine {
  /// The fastest route through `waypoints` and up to `options.alternatives` others (fastest
  /// first; there may be fewer than asked), with the waypoints snapped as the options say.
  public func routes(_ waypoints: [LatLng], options: RouteOptions) throws(RoutingError) -> [Route] {
    let (legs, roads, metric) = try solve(waypoints, options: options)
    let best = route(of: legs, at: roads, metric: metric)
    guard options.alternatives > 0, legs.count == 1, let leg = legs.first, leg.path.directedEdges.count > 1 else {
      return [best]
    }
    // Alternatives leave and reach the roads the fastest route takes at its waypoints.
    let path = leg.path
    let sources = endpoints(of: leg.from, in: network, asSource: true, slowdowns: metric.slowdowns)
    let targets = targetEndpoints(of: leg.to, slowdowns: metric.slowdowns)
    let search = CCHSearch(customized: metric, network: network, graph: turns)
    let others = AlternativeSearch(
      network: network, graph: turns, incoming: incomingArcs, excluding: options.excluding, slowdowns: metric.slowdowns,
      fastest: { search.shortestPath(from: $0, to: $1, sameEdge: nil, pool: self.labels) }
    ).alternatives(to: path, from: sources, to: targets, count: options.alternatives)
    return [best]
      + others.compactMap { edges in
        search.measure(edges, sources: sources, targets: targets).map {
          route(of: [FoundLeg(path: $0, from: leg.from, to: leg.to)], at: roads, metric: metric)
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
    // Segments are taken only where some direction the options allow is driven on them.
    return index.nearest(
      fixed(point), in: network, radius: radius ?? .infinity, accept: allowing(excluding, and: accept),
      acceptSegment: heading(bearing, excluding: excluding)
    ).first.flatMap {
      self.narrowed($0, point, bearing: bearing, approach: options.approaches?[i], excluding: excluding)
    }
  }

  /// Edges `accept`ed that have a direction of no excluded class.
  func allowing(_ excluding: RoadClasses, and accept: @escaping (Int) -> Bool) -> (Int) -> Bool {
    { edge in
      accept(edge)
        && [false, true].contains {
          self.network.edges[edge].cost(reversed: $0)?.classes.isDisjoint(with: excluding) ?? false
        }
    }
  }

  /// With a bearing, only segments with a direction that heads its way.
  func heading(_ bearing: WaypointBearing?, excluding: RoadClasses) -> ((Int, Int) -> Bool)? {
    bearing.map { bearing in
      { edge, segment in !self.directions(edge, segment, bearing: bearing, excluding: excluding).isEmpty }
    }
  }

  /// Each waypoint's roads: its position and, where that is a junction (an end of its road),
  /// every other road at the same point that the options allow, as OSRM's snapping keeps them
  /// all (`PhantomNodeCandidates`): a leg leaves and reaches a waypoint on whichever of them its
  /// fastest path takes. A car at a junction is on any road that meets there, not on the road
  /// indexed first (which could send it round a roundabout it only touches).
  func candidates(_ positions: [RoadPosition], _ points: [LatLng], options: RouteOptions) -> [[RoadPosition]] {
    positions.enumerated().map { i, position in
      let edge = network.edges[position.edge]
      guard
        position.point == network.coordinate(ofJunction: edge.from)
          || position.point == network.coordinate(ofJunction: edge.to)
      else { return [position] }
      let bearing = options.bearings?[i] ?? nil
      let excluding = options.excluding
      // Of the same kind of component as the position (it may have been moved into a bigger one).
      let big = isInBigComponent(position.edge)
      let main = isInMainComponent(position.edge)
      let others = index.positions(
        onRoadsAt: position.point, besides: position.edge, nearest: fixed(points[i]), in: network,
        accept: allowing(excluding) { edge in
          self.isStartpoint(edge) && (!big || self.isInBigComponent(edge)) && (!main || self.isInMainComponent(edge))
        }, acceptSegment: heading(bearing, excluding: excluding)
      )
      .compactMap {
        options.constrainsSnapping
          ? narrowed($0, points[i], bearing: bearing, approach: options.approaches?[i], excluding: excluding) : $0
      }
      return [position] + others
    }
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

  /// Legs through via waypoints without turning back at them: each via is passed on one of its
  /// roads in one direction, chosen for the fastest whole route. Where no route can keep straight
  /// on, the legs may turn back (`legs(through:metric:)`).
  func legs(through candidates: [[RoadPosition]], metric: CustomizedCCH, continueStraight: Bool) throws(RoutingError)
    -> [FoundLeg]
  {
    guard continueStraight, candidates.count > 2 else { return try legs(through: candidates, metric: metric) }
    // Per via: the ways it may be passed (a road and a direction), and the best route so far
    // ending with each. The first waypoint may be left on any of its roads, the last reached on any.
    var best: [(way: [RoadPosition], legs: [FoundLeg], weight: Double)] = [(candidates[0], [], 0)]
    for i in 1..<candidates.count {
      let ways: [[RoadPosition]] =
        i == candidates.count - 1
        ? [candidates[i]]
        : candidates[i].flatMap { position in
          [RoadDirections.forward, .backward].compactMap { direction in
            guard position.directions.contains(direction) else { return nil }
            var way = position
            way.directions = direction
            return endpoints(of: way, in: network, asSource: true).isEmpty ? nil : [way]
          }
        }
      var next: [(way: [RoadPosition], legs: [FoundLeg], weight: Double)] = []
      for way in ways {
        let reached = best.compactMap { previous -> ([RoadPosition], [FoundLeg], Double)? in
          guard let leg = search(from: previous.way, to: way, metric: metric) else { return nil }
          return (way, previous.legs + [leg], previous.weight + leg.path.weight)
        }
        if let fastest = reached.min(by: { $0.2 < $1.2 }) { next.append(fastest) }
      }
      guard !next.isEmpty else { return try legs(through: candidates, metric: metric) }
      best = next
    }
    return best.min(by: { $0.weight < $1.weight })!.legs
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
