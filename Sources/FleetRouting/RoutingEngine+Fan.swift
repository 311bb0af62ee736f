import FleetGeometry

/// A point placed on the road network once, so that repeated queries from it need no
/// nearest-road search (vehicles searched again and again from where they stand). A class:
/// thousands are handed around per query, and a reference moves cheaper than the positions.
public final class RoadAnchor: Sendable {
  let nearest: RoadPosition
  /// The nearest road in the network's main part when `nearest` is not in it (a car park, a
  /// private cul-de-sac): drives to or from the rest of the network start there, as OSRM's do.
  let nearestBig: RoadPosition?
  /// The other roads at the point of `nearest` (and of `nearestBig`) when that is a junction
  /// (`RoutingEngine.candidates`): a car there leaves on whichever is fastest, as a route from
  /// there does. Empty elsewhere.
  let nearestOthers: [RoadPosition]
  let bigOthers: [RoadPosition]
  let component: Int32
  /// The point asked for: a target on a junction is reached on any road there nearest to it.
  let asked: LatLng
  /// Where drives from each of the two positions (with their junction's other roads) start:
  /// computed once, used by every query.
  let nearestStarts: Starts
  let bigStarts: Starts?

  /// A position's one or two drivable directions inline (no array to allocate or retain), and
  /// on a junction those of the other roads there.
  struct Starts: Sendable {
    var first: Endpoint?
    var second: Endpoint?
    var others: [Endpoint] = []

    init(_ endpoints: [Endpoint]) {
      first = endpoints.first
      second = endpoints.count > 1 ? endpoints[1] : nil
      if endpoints.count > 2 { others = Array(endpoints.dropFirst(2)) }
    }

    static let none = Starts([])

    func forEach(_ body: (Endpoint) -> Void) {
      if let first { body(first) }
      if let second { body(second) }
      for other in others { body(other) }
    }
  }

  /// The point on the road.
  public var snapped: LatLng { nearest.point.latLng }
  /// Metres from the given point to its road.
  public var offRoadMetres: Double { nearest.distance }

  init(
    nearest: RoadPosition, nearestBig: RoadPosition?, nearestOthers: [RoadPosition], bigOthers: [RoadPosition],
    component: Int32, asked: LatLng, nearestStarts: Starts, bigStarts: Starts?
  ) {
    self.nearest = nearest
    self.nearestBig = nearestBig
    self.nearestOthers = nearestOthers
    self.bigOthers = bigOthers
    self.component = component
    self.asked = asked
    self.nearestStarts = nearestStarts
    self.bigStarts = bigStarts
  }
}

extension RoutingEngine {
  /// Places `point` on its nearest road (and on the nearest road of a big component, when that
  /// one is in a tiny one).
  public func anchor(_ point: LatLng) throws(RoutingError) -> RoadAnchor {
    try validate(point, "coordinate")
    let fixed = FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
    guard let nearest = index.nearest(fixed, in: network, accept: isStartpoint).first else {
      throw RoutingError(.noSegment, "the road network is empty")
    }
    let big =
      isInMainComponent(nearest.edge) ? nil : index.nearest(fixed, in: network, accept: isInMainComponent).first
    let others = { (position: RoadPosition) in
      Array(self.candidates([position], [point], options: RouteOptions())[0].dropFirst())
    }
    let starts = { (roads: [RoadPosition]) in
      RoadAnchor.Starts(roads.flatMap { endpoints(of: $0, in: self.network, asSource: true) })
    }
    let nearestOthers = others(nearest)
    let bigOthers = big.map(others) ?? []
    return RoadAnchor(
      nearest: nearest, nearestBig: big, nearestOthers: nearestOthers, bigOthers: bigOthers,
      component: componentOf(nearest.edge), asked: point, nearestStarts: starts([nearest] + nearestOthers),
      bigStarts: big.map { starts([$0] + bigOthers) })
  }

  /// The fastest drives from every source to one target, in one query: a backward upward
  /// search from the target, then one sweep down the hierarchy over the nodes above the sources
  /// (restricted PHAST, Delling et al.), so that a thousand vehicles cost about one search, not
  /// a thousand. A nil source has no estimate.
  public func fan(from sources: [RoadAnchor?], to target: RoadAnchor, traffic: TrafficTiming = .current) -> RoadFan {
    RoadFan(engine: self, metric: metric(traffic), sources: sources, target: target)
  }
}

/// The result of `RoutingEngine.fan`: each source's drive to the target, timed with the metric
/// it was asked for, and its path on demand. Holds search labels until it is released.
public final class RoadFan {
  struct Best {
    var weight: Double
    var duration: Double
    var distance: Double
    /// The source's turn-graph node the drive starts on, and what leaving the source costs;
    /// nil when the drive stays on the source's own edge (or was searched on its own).
    var start: Endpoint?
  }

  /// The best way to leave a node upwards, kept apart for the target's own nodes: there the
  /// sweep's label is the backward search's start, which only stands for arriving on them.
  struct Upward {
    var cost: Double
    var edge: Int32
  }

  let engine: RoutingEngine
  /// The metric every drive is timed with (read once: a customization meanwhile does not mix in).
  let metric: CustomizedCCH
  public let target: RoadAnchor
  let sources: [RoadAnchor?]
  /// Per source: its best drive, nil when there is none.
  let best: [Best?]
  /// Backward labels from the target, and the sweep's: per node, the best of the backward
  /// label and leaving upwards (`parent` holds the upward edge, or -1 where the backward label
  /// is best and the path goes down to the target from there). The sweep labels cost only:
  /// seconds and metres are summed along the chosen sources' paths (`measureRest`).
  var backward: SearchLabels
  var sweep: SearchLabels
  var targetUpward: [Int32: Upward] = [:]
  let targetEnds: [Endpoint]
  let bigTarget: RoadPosition
  /// `bigTarget` and, when it is a junction, every other road there (`RoutingEngine.candidates`).
  let targetRoads: [RoadPosition]
  /// Sources whose drive was computed on its own (they share the target's tiny component).
  var paths: [Int: FoundPath] = [:]

  init(engine: RoutingEngine, metric: CustomizedCCH, sources: [RoadAnchor?], target: RoadAnchor) {
    self.engine = engine
    self.metric = metric
    self.target = target
    self.sources = sources
    let network = engine.network
    let cch = metric.cch
    let slowdowns = metric.slowdowns
    let search = CCHSearch(customized: metric, network: network, graph: engine.turns)
    // Locals until the end: closures below read them before `self` is whole.
    var backward = engine.labels.take()
    var sweep = engine.labels.take()
    var targetUpward: [Int32: Upward] = [:]
    // Where each source's drive goes: the target's nearest road when both are in one
    // component; else both nearest roads in big components.
    let bigTarget = target.nearestBig ?? target.nearest
    self.bigTarget = bigTarget
    let targetRoads = engine.candidates([bigTarget], [target.asked], options: RouteOptions())[0]
    self.targetRoads = targetRoads
    let targetEnds = targetRoads.flatMap { engine.targetEndpoints(of: $0, slowdowns: slowdowns) }
    self.targetEnds = targetEnds
    search.upwardByTree(from: search.backwardStarts(targetEnds), forward: false, into: &backward)

    // The nodes above every source (their upward closure). When the sources are many, that is
    // most of the graph: sweeping all of it costs less than finding which part.
    var starts: [RoadAnchor.Starts] = []
    starts.reserveCapacity(sources.count)
    for source in sources {
      guard let source, !Self.sharesTinyComponent(source, target) else {
        starts.append(.none)
        continue
      }
      starts.append(Self.from(source, target).starts)
    }
    let nodeCount = cch.rank.count
    // The nodes to relax, in descending rank.
    var order: [Int32]
    if sources.count * 4 >= nodeCount {
      order = (0..<Int32(nodeCount)).reversed()
      sweep.touched = Array(0..<Int32(nodeCount))
    } else {
      // A node's upper neighbours are all its ancestors in the elimination tree: the closure is
      // the union of the starts' paths to the root, each walked until it joins one walked before.
      for ends in starts {
        ends.forEach { end in
          var v = cch.rank[Int(end.directed)]
          while v >= 0, sweep.parent[Int(v)] == -2 {
            sweep.set(v, .infinity, 0, 0, parent: -1)
            v = cch.treeParent[Int(v)]
          }
        }
      }
      // In descending rank: a bit per rank, read from the top.
      var ranks = [UInt64](repeating: 0, count: (nodeCount + 63) / 64)
      for r in sweep.touched { ranks[Int(r) >> 6] |= 1 << UInt64(r & 63) }
      order = []
      order.reserveCapacity(sweep.touched.count)
      for word in stride(from: ranks.count - 1, through: 0, by: -1) {
        var bits = ranks[word]
        while bits != 0 {
          let bit = 63 - bits.leadingZeroBitCount
          bits &= ~(1 << UInt64(bit))
          order.append(Int32(word * 64 + bit))
        }
      }
    }
    Self.sweepDown(order, metric, &sweep, backward, &targetUpward)

    var best: [Best?] = []
    best.reserveCapacity(sources.count)
    var individual: [Int: FoundPath] = [:]
    for (i, source) in sources.enumerated() {
      guard let source else {
        best.append(nil)
        continue
      }
      if Self.sharesTinyComponent(source, target) {
        // Rare: the pickup is in a car park and so is the vehicle. One search of its own.
        if let path = engine.search(from: source.nearest, to: target.nearest, metric: metric) {
          individual[i] = path
          best.append(Best(weight: path.weight, duration: path.duration, distance: path.distance, start: nil))
        } else {
          best.append(nil)
        }
        continue
      }
      var found = Best(weight: .infinity, duration: 0, distance: 0, start: nil)
      if let direct = engine.directPath(from: Self.roads(source, target), to: targetRoads, slowdowns: slowdowns) {
        found = Best(weight: direct.weight, duration: direct.duration, distance: direct.distance, start: nil)
      }
      starts[i].forEach { free in
        // Anchors keep their starts at free flow; this metric's traffic is applied here.
        let end = slowdowns.slowed(free)
        // On the target's own edge the rest of the way must leave the edge first.
        let node = Int(cch.rank[Int(end.directed)])
        let rest = backward.parent[node] == -1 ? targetUpward[Int32(node)]?.cost : sweep.cost[node]
        guard let rest, end.weight + rest < found.weight else { return }
        found = Best(weight: end.weight + rest, duration: 0, distance: 0, start: end)
      }
      if let start = found.start {
        let rest = Self.measureRest(from: start, metric, sweep, backward, targetUpward)
        found.duration = start.duration + rest.duration
        found.distance = start.distance + rest.distance
      }
      best.append(found.weight.isFinite ? found : nil)
    }
    self.best = best
    self.paths = individual
    self.backward = backward
    self.sweep = sweep
    self.targetUpward = targetUpward
  }

  deinit {
    // Moved out first, so that the pool's reset works on arrays only it holds.
    var backward = SearchLabels(count: 0)
    var sweep = SearchLabels(count: 0)
    swap(&backward, &self.backward)
    swap(&sweep, &self.sweep)
    engine.labels.giveBack(consume backward)
    engine.labels.giveBack(consume sweep)
  }

  static func sharesTinyComponent(_ source: RoadAnchor, _ target: RoadAnchor) -> Bool {
    target.nearestBig != nil && source.component == target.component
  }

  /// Where a source's drive starts: its nearest road (and the others at its junction) when the
  /// target is in its component, else its nearest road in a big component (and the others there).
  static func from(_ source: RoadAnchor, _ target: RoadAnchor) -> (
    position: RoadPosition, others: [RoadPosition], starts: RoadAnchor.Starts
  ) {
    source.component == target.component || source.nearestBig == nil
      ? (source.nearest, source.nearestOthers, source.nearestStarts)
      : (source.nearestBig!, source.bigOthers, source.bigStarts!)
  }

  /// The roads a source's drive may start on (one array, as the same-edge drive takes them).
  static func roads(_ source: RoadAnchor, _ target: RoadAnchor) -> [RoadPosition] {
    let from = from(source, target)
    return from.others.isEmpty ? [from.position] : [from.position] + from.others
  }

  /// Walks the upward edges from a start's node to where the path turns down to the target (the
  /// sweep's choices, beginning with `targetUpward`'s on the target's own nodes), calling `body`
  /// with each from the bottom; returns the node where the path turns down.
  static func walkUpward(
    from start: Endpoint, _ metric: CustomizedCCH, _ sweep: SearchLabels, _ backward: SearchLabels,
    _ targetUpward: [Int32: Upward], _ body: (Int32) -> Void
  ) -> Int32 {
    let cch = metric.cch
    var v = cch.rank[Int(start.directed)]
    var choice = backward.parent[Int(v)] == -1 ? (targetUpward[v]?.edge ?? -1) : sweep.parent[Int(v)]
    while choice >= 0 {
      body(choice)
      v = cch.upTarget[Int(choice)]
      choice = sweep.parent[Int(v)]
    }
    return v
  }

  /// Seconds and metres from a start's node to the target along the sweep's choices: the upward
  /// edges walked, then the backward label where the path turns down.
  static func measureRest(
    from start: Endpoint, _ metric: CustomizedCCH, _ sweep: SearchLabels, _ backward: SearchLabels,
    _ targetUpward: [Int32: Upward]
  ) -> (duration: Double, distance: Double) {
    var duration = 0.0
    var distance = 0.0
    let turn = walkUpward(from: start, metric, sweep, backward, targetUpward) { e in
      duration += metric.upDuration[Int(e)]
      distance += metric.upDistance[Int(e)]
    }
    return (duration + backward.duration[Int(turn)], distance + backward.distance[Int(turn)])
  }

  /// Labels each node of `order` (descending rank) with the cost of its best way on: leaving
  /// upwards (an upward edge plus the label of its upper end, computed before since it ranks
  /// higher), or the backward search's label when that is lower. The hot loop of every search,
  /// on raw buffers: the arrays are graph-sized, and checked, uniquely-owned access per edge
  /// cost more than the arithmetic. Cost and choice only: carrying seconds and metres along
  /// doubled the memory each improvement touched, for the few sources whose path is read.
  static func sweepDown(
    _ order: [Int32], _ customized: CustomizedCCH, _ sweep: inout SearchLabels, _ backward: SearchLabels,
    _ targetUpward: inout [Int32: Upward]
  ) {
    let cch = customized.cch
    cch.firstUp.withUnsafeBufferPointer { firstUp in
      cch.upTarget.withUnsafeBufferPointer { upTarget in
        customized.up.withUnsafeBufferPointer { up in
          backward.cost.withUnsafeBufferPointer { bCost in
            backward.parent.withUnsafeBufferPointer { bParent in
              sweep.cost.withUnsafeMutableBufferPointer { sCost in
                sweep.parent.withUnsafeMutableBufferPointer { sParent in
                  for v in order {
                    let node = Int(v)
                    var cost = Double.infinity
                    var choice: Int32 = -1
                    for e in Int(firstUp[node])..<Int(firstUp[node + 1]) {
                      let candidate = up[e] + sCost[Int(upTarget[e])]
                      if candidate < cost {
                        cost = candidate
                        choice = Int32(truncatingIfNeeded: e)
                      }
                    }
                    if bParent[node] == -1 { targetUpward[v] = Upward(cost: cost, edge: choice) }
                    if bCost[node] <= cost {
                      sCost[node] = bCost[node]
                      sParent[node] = -1
                    } else {
                      sCost[node] = cost
                      sParent[node] = choice
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  public var count: Int { best.count }

  /// The drive from source `i` in the fan's metric: seconds and metres, nil when there is no route.
  public func estimate(_ i: Int) -> (duration: Double, distance: Double)? {
    best[i].map { ($0.duration, $0.distance) }
  }

  /// Source `i`'s drive as a route leg: its shape and the road edges driven (what learned
  /// traffic is kept per); without `geometry`, the edges only (`RoutingEngine.drivenLegs`).
  public func leg(_ i: Int, geometry: Bool = true) -> RouteLeg? {
    guard let found = best[i], let source = sources[i], let path = path(i, found) else { return nil }
    if paths[i] != nil {
      return engine.leg(of: path, from: source.nearest, to: target.nearest, geometry: geometry, metric: metric)
    }
    // The roads at the source and at the target the drive leaves and arrives on.
    let sourceRoads = Self.roads(source, target)
    let departure = path.directedEdges.first.flatMap { first in
      sourceRoads.first { $0.edge == TurnGraph.edge(of: first) }
    }
    let arrival = path.directedEdges.last.flatMap { last in
      targetRoads.first { $0.edge == TurnGraph.edge(of: last) }
    }
    return engine.leg(
      of: path, from: departure ?? sourceRoads[0], to: arrival ?? bigTarget, geometry: geometry, metric: metric)
  }

  func path(_ i: Int, _ found: Best) -> FoundPath? {
    if let individual = paths[i] { return individual }
    guard let start = found.start else {
      guard let source = sources[i] else { return nil }
      return engine.directPath(from: Self.roads(source, target), to: targetRoads, slowdowns: metric.slowdowns)
    }
    let cch = metric.cch
    var nodes = [start.directed]
    var v = Self.walkUpward(from: start, metric, sweep, backward, targetUpward) { e in
      metric.unpack(Int(e), forward: true, into: &nodes)
    }
    // From here the backward search's path goes down to the target.
    while backward.parent[Int(v)] >= 0 {
      let e = backward.parent[Int(v)]
      metric.unpack(Int(e), forward: false, into: &nodes)
      v = cch.edgeSource(Int(e))
    }
    return CCHSearch(customized: metric, network: engine.network, graph: engine.turns)
      .measure(nodes, sources: [start], targets: targetEnds)
  }
}
