import FleetCore

/// A point placed on the road network once, so that repeated queries from it need no
/// nearest-road search (vehicles searched again and again from where they stand).
public struct RoadAnchor: Sendable {
  let nearest: RoadPosition
  /// The nearest road in a big component when `nearest` is in a tiny one (a car park, a private
  /// cul-de-sac): drives to or from the rest of the network start there, as OSRM's do.
  let nearestBig: RoadPosition?
  let component: Int32
  /// Where drives from each of the two positions start: computed once, used by every query.
  let nearestStarts: [Endpoint]
  let bigStarts: [Endpoint]?

  /// The point on the road.
  public var snapped: LatLng { LatLng(latitude: nearest.point.latitude, longitude: nearest.point.longitude) }
  /// Metres from the given point to its road.
  public var offRoadMetres: Double { nearest.distance }
}

extension RoutingEngine {
  /// Places `point` on its nearest road (and on the nearest road of a big component, when that
  /// one is in a tiny one).
  public func anchor(_ point: LatLng) throws(RoutingError) -> RoadAnchor {
    try validate(point, "coordinate")
    let fixed = FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
    guard let nearest = index.nearest(fixed, in: network).first else {
      throw RoutingError(.noSegment, "the road network is empty")
    }
    let big = isInBigComponent(nearest.edge) ? nil : index.nearest(fixed, in: network, accept: isInBigComponent).first
    return RoadAnchor(
      nearest: nearest, nearestBig: big, component: componentOf(nearest.edge),
      nearestStarts: endpoints(of: nearest, in: network, asSource: true),
      bigStarts: big.map { endpoints(of: $0, in: network, asSource: true) })
  }

  /// The fastest drives from every source to one target, in one query: a backward upward
  /// search from the target, then one sweep down the hierarchy over the nodes above the sources
  /// (restricted PHAST, Delling et al.), so that a thousand vehicles cost about one search, not
  /// a thousand. A nil source has no estimate.
  public func fan(from sources: [RoadAnchor?], to target: RoadAnchor) -> RoadFan {
    RoadFan(engine: self, sources: sources, target: target)
  }
}

/// The result of `RoutingEngine.fan`: each source's free-flow drive to the target, and its path
/// on demand (for traffic along it). Holds search labels until it is released.
public final class RoadFan {
  struct Best {
    var weight: Double
    var duration: Double
    var distance: Double
    /// The source's turn-graph node the drive starts on, and what leaving the source costs.
    var start: Endpoint?
    /// The whole drive stays on the source's own edge.
    var direct: FoundPath?
    /// Positions the drive was computed between (`nearestBig` when components differ).
    var from: RoadPosition
    var to: RoadPosition
  }

  let engine: RoutingEngine
  public let target: RoadAnchor
  /// Per source: its best drive, nil when there is none.
  let best: [Best?]
  /// Backward labels from the target, and the sweep's labels: the best cost of leaving each
  /// node by an upward edge (`parent` holds that edge).
  var backward: SearchLabels
  var sweep: SearchLabels
  let targetEnds: [Endpoint]
  /// Sources whose drive was computed on its own (they share the target's tiny component).
  var paths: [Int: FoundPath] = [:]

  init(engine: RoutingEngine, sources: [RoadAnchor?], target: RoadAnchor) {
    self.engine = engine
    self.target = target
    let network = engine.network
    let cch = engine.customized.cch
    let search = CCHSearch(customized: engine.customized, network: network, graph: engine.turns)
    backward = engine.labels.take()
    sweep = engine.labels.take()
    // Where each source's drive goes: the target's nearest road when both are in one
    // component; else both nearest roads in big components.
    let bigTarget = target.nearestBig ?? target.nearest
    let sharedTiny = { (source: RoadAnchor) in target.nearestBig != nil && source.component == target.component }
    targetEnds = endpoints(of: bigTarget, in: network, asSource: false)
    search.upward(from: search.backwardStarts(targetEnds), forward: false, into: &backward)

    // The nodes above every source (their upward closure). When the sources are many, that is
    // most of the graph: sweeping all of it costs less than finding which part.
    var starts: [[Endpoint]] = []
    var froms: [RoadPosition?] = []
    starts.reserveCapacity(sources.count)
    froms.reserveCapacity(sources.count)
    for source in sources {
      guard let source, !sharedTiny(source) else {
        starts.append([])
        froms.append(nil)
        continue
      }
      let sameComponent = source.component == target.component || source.nearestBig == nil
      starts.append(sameComponent ? source.nearestStarts : source.bigStarts!)
      froms.append(sameComponent ? source.nearest : source.nearestBig!)
    }
    let nodeCount = cch.rank.count
    if sources.count * 4 >= nodeCount {
      for r in stride(from: nodeCount - 1, through: 0, by: -1) { Self.relax(cch.byRank[r], engine, &sweep, backward) }
      sweep.touched = Array(0..<Int32(nodeCount))
    } else {
      var stack: [Int32] = []
      for ends in starts {
        for end in ends where sweep.parent[Int(end.directed)] == -2 {
          sweep.set(end.directed, .infinity, 0, 0, parent: -1)
          stack.append(end.directed)
        }
      }
      while let v = stack.popLast() {
        for e in cch.upEdges(v) {
          let w = cch.upTarget[e]
          if sweep.parent[Int(w)] == -2 {
            sweep.set(w, .infinity, 0, 0, parent: -1)
            stack.append(w)
          }
        }
      }
      // In descending rank: a bit per rank, read from the top.
      var ranks = [UInt64](repeating: 0, count: (nodeCount + 63) / 64)
      for v in sweep.touched {
        let r = Int(cch.rank[Int(v)])
        ranks[r >> 6] |= 1 << UInt64(r & 63)
      }
      for word in stride(from: ranks.count - 1, through: 0, by: -1) {
        var bits = ranks[word]
        while bits != 0 {
          let bit = 63 - bits.leadingZeroBitCount
          bits &= ~(1 << UInt64(bit))
          Self.relax(cch.byRank[word * 64 + bit], engine, &sweep, backward)
        }
      }
    }

    var best: [Best?] = []
    var individual: [Int: FoundPath] = [:]
    for (i, source) in sources.enumerated() {
      guard let source else {
        best.append(nil)
        continue
      }
      if sharedTiny(source) {
        // Rare: the pickup is in a car park and so is the vehicle. One search of its own.
        if let path = engine.search(from: source.nearest, to: target.nearest) {
          individual[i] = path
          best.append(
            Best(
              weight: path.weight, duration: path.duration, distance: path.distance, start: nil, direct: nil,
              from: source.nearest, to: target.nearest))
        } else {
          best.append(nil)
        }
        continue
      }
      let from = froms[i]!
      var found = Best(
        weight: .infinity, duration: 0, distance: 0, start: nil, direct: nil, from: from, to: bigTarget)
      if let direct = engine.directPath(from: from, to: bigTarget) {
        found.weight = direct.weight
        found.duration = direct.duration
        found.distance = direct.distance
        found.direct = direct
      }
      for end in starts[i] {
        let n = Int(end.directed)
        // On the target's own edge, the rest of the way must leave the edge first: the
        // backward start there only stands for arriving on it.
        let isTargetStart = backward.parent[n] == -1
        let viaBackward = !isTargetStart && backward.cost[n] <= sweep.cost[n]
        let rest = viaBackward ? backward.cost[n] : sweep.cost[n]
        let total = end.weight + rest
        if total < found.weight {
          found.weight = total
          found.duration = end.duration + (viaBackward ? backward.duration[n] : sweep.duration[n])
          found.distance = end.distance + (viaBackward ? backward.distance[n] : sweep.distance[n])
          found.start = end
          found.direct = nil
        }
      }
      best.append(found.weight.isFinite ? found : nil)
    }
    self.best = best
    self.paths = individual
  }

  deinit {
    engine.labels.giveBack(backward)
    engine.labels.giveBack(sweep)
  }

  /// The best way to leave `v` upwards: an upward edge plus the best from its upper end (the
  /// backward search's label there, or the sweep's, computed before since it ranks higher).
  static func relax(_ v: Int32, _ engine: RoutingEngine, _ sweep: inout SearchLabels, _ backward: SearchLabels) {
    let customized = engine.customized
    let cch = customized.cch
    var cost = Double.infinity
    var seconds = 0.0
    var metres = 0.0
    var choice: Int32 = -1
    for e in cch.upEdges(v) {
      let w = Int(cch.upTarget[e])
      let viaBackward = backward.cost[w] <= sweep.cost[w]
      let candidate = customized.up[e] + (viaBackward ? backward.cost[w] : sweep.cost[w])
      if candidate < cost {
        cost = candidate
        seconds = customized.upDuration[e] + (viaBackward ? backward.duration[w] : sweep.duration[w])
        metres = customized.upDistance[e] + (viaBackward ? backward.distance[w] : sweep.distance[w])
        choice = Int32(e)
      }
    }
    sweep.cost[Int(v)] = cost
    sweep.duration[Int(v)] = seconds
    sweep.distance[Int(v)] = metres
    sweep.parent[Int(v)] = choice
  }

  public var count: Int { best.count }

  /// The free-flow drive from source `i`: seconds and metres, nil when there is no route.
  public func estimate(_ i: Int) -> (duration: Double, distance: Double)? {
    best[i].map { ($0.duration, $0.distance) }
  }

  /// Source `i`'s drive as a route leg: its shape and the road edges driven (what learned
  /// traffic is kept per).
  public func leg(_ i: Int) -> RouteLeg? {
    guard let found = best[i], let path = path(i, found) else { return nil }
    return engine.leg(of: path, from: found.from, to: found.to)
  }

  func path(_ i: Int, _ found: Best) -> FoundPath? {
    if let individual = paths[i] { return individual }
    if let direct = found.direct { return direct }
    guard let start = found.start else { return nil }
    let cch = engine.customized.cch
    var nodes = [start.directed]
    var v = start.directed
    var first = true
    while true {
      let isTargetStart = backward.parent[Int(v)] == -1
      let up = (first && isTargetStart) || sweep.cost[Int(v)] < backward.cost[Int(v)]
      first = false
      if up {
        let e = sweep.parent[Int(v)]
        guard e >= 0 else { return nil }
        engine.customized.unpack(Int(e), forward: true, into: &nodes)
        v = cch.upTarget[Int(e)]
      } else {
        while backward.parent[Int(v)] >= 0 {
          let e = backward.parent[Int(v)]
          engine.customized.unpack(Int(e), forward: false, into: &nodes)
          v = cch.edgeSource(Int(e))
        }
        break
      }
    }
    return CCHSearch(customized: engine.customized, network: engine.network, graph: engine.turns)
      .measure(nodes, sources: [start], targets: targetEnds)
  }
}
