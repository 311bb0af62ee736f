import Synchronization

/// Labels of one upward search, kept between queries: only the nodes a search touched are reset.
/// Indexed by rank, as everything inside the hierarchy (`CCH`).
struct SearchLabels: Sendable {
  var cost: [Double]
  /// Seconds and metres of the path behind `cost`.
  var duration: [Double]
  var distance: [Double]
  /// The upward edge a node was reached by; -1 at a start (-4 at an approach, `Endpoint.isApproach`),
  /// -2 when not reached, -3 on a chain not reached yet.
  var parent: [Int32]
  var touched: [Int32] = []
  /// A many-to-many's bucket at each node: its first entry, -1 when empty. Searches leave it
  /// alone; the matrix that fills it empties it again.
  var bucketHead: [Int32]

  init(count: Int) {
    cost = [Double](repeating: .infinity, count: count)
    duration = [Double](repeating: 0, count: count)
    distance = [Double](repeating: 0, count: count)
    parent = [Int32](repeating: -2, count: count)
    bucketHead = [Int32](repeating: -1, count: count)
  }

  mutating func set(_ node: Int32, _ value: Double, _ seconds: Double, _ metres: Double, parent edge: Int32) {
    if parent[Int(node)] == -2 { touched.append(node) }
    cost[Int(node)] = value
    duration[Int(node)] = seconds
    distance[Int(node)] = metres
    parent[Int(node)] = edge
  }

  mutating func reset() {
    for node in touched {
      cost[Int(node)] = .infinity
      parent[Int(node)] = -2
    }
    touched.removeAll(keepingCapacity: true)
  }
}

/// A pool of label arrays, so that concurrent queries neither allocate graph-sized arrays each
/// time nor share them.
final class SearchLabelPool: Sendable {
  let nodeCount: Int
  let free = Mutex<[SearchLabels]>([])

  init(nodeCount: Int) { self.nodeCount = nodeCount }

  /// Labels for a caller that holds them beyond one call; `giveBack` returns them.
  func take() -> SearchLabels { free.withLock { $0.popLast() } ?? SearchLabels(count: nodeCount) }

  /// Consumes them: a caller still holding them would make the reset copy graph-sized arrays.
  func giveBack(_ labels: consuming SearchLabels) {
    labels.reset()
    let reset = consume labels
    free.withLock { $0.append(reset) }
  }

  func with<T>(_ body: (inout SearchLabels, inout SearchLabels) -> T) -> T {
    let taken = free.withLock { pool in (pool.popLast(), pool.popLast()) }
    var first = taken.0 ?? SearchLabels(count: nodeCount)
    var second = taken.1 ?? SearchLabels(count: nodeCount)
    defer {
      first.reset()
      second.reset()
      free.withLock { $0.append(contentsOf: [first, second]) }
    }
    return body(&first, &second)
  }
}

/// Shortest paths on a customized CCH: an upward search from the start, an upward search
/// (on reversed weights) from the end, and the best node where they meet.
struct CCHSearch {
  let customized: CustomizedCCH
  let network: RoadNetwork
  let graph: TurnGraph

  /// Everything above the starts, by the elimination tree: the starts' paths to the root relaxed
  /// bottom-up, without a queue (a node's upper neighbours are all its ancestors). Nodes of the
  /// path that no start reaches keep an infinite cost (parent -3).
  func upwardByTree(from starts: [Endpoint], forward: Bool, into labels: inout SearchLabels) {
    let nodes = chain(from: starts, into: &labels)
    // `chain` labels the starts' costs (the first of the cheapest per node); their seconds and
    // metres go with them.
    let cch = customized.cch
    var labelled: Set<Int32> = []
    for s in starts {
      let start = cch.rank[Int(s.directed)]
      guard labels.cost[Int(start)] == s.weight, labelled.insert(start).inserted else { continue }
      labels.duration[Int(start)] = s.duration
      labels.distance[Int(start)] = s.distance
    }
    let (weights, durations, distances) =
      forward
      ? (customized.up, customized.upDuration, customized.upDistance)
      : (customized.down, customized.downDuration, customized.downDistance)
    // On raw buffers, as `scan`: the labels are graph-sized and this runs for every search.
    cch.firstUp.withUnsafeBufferPointer { firstUp in
      cch.upTarget.withUnsafeBufferPointer { upTarget in
        labels.cost.withUnsafeMutableBufferPointer { costs in
          labels.duration.withUnsafeMutableBufferPointer { seconds in
            labels.distance.withUnsafeMutableBufferPointer { metres in
              labels.parent.withUnsafeMutableBufferPointer { parents in
                for v in nodes {
                  let node = Int(v)
                  let cost = costs[node]
                  guard cost < .infinity else { continue }
                  for e in Int(firstUp[node])..<Int(firstUp[node + 1]) {
                    let w = Int(upTarget[e])
                    let candidate = cost + weights[e]
                    if candidate < costs[w] {
                      costs[w] = candidate
                      seconds[w] = seconds[node] + durations[e]
                      metres[w] = metres[node] + distances[e]
                      parents[w] = Int32(truncatingIfNeeded: e)
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

  /// Point to point by elimination-tree search (Bauer, Columbus, Rutter, Wagner 2016): each side's
  /// search space is the path from its starts to the root, scanned bottom-up without a queue, both
  /// sides in one pass by rank; a side stops relaxing from nodes no better than the best meeting.
  /// Only costs and parents are kept: the path's seconds and metres are measured once unpacked.
  func shortestPath(
    from sources: [Endpoint], to targets: [Endpoint], sameEdge: FoundPath?, pool: SearchLabelPool
  ) -> FoundPath? {
    pool.with { forward, backward in
      let up = chain(from: sources, into: &forward)
      let down = chain(from: backwardStarts(targets), into: &backward)
      let (best, meeting) = scan(up, down, &forward, &backward, best: sameEdge?.weight ?? .infinity)
      guard meeting >= 0, best < sameEdge?.weight ?? .infinity else { return sameEdge }
      return path(through: meeting, forward: forward, backward: backward, sources: sources, targets: targets)
    }
  }

  /// Both chains bottom-up in one pass by rank: the best meeting node and its cost. The hot loop
  /// of every query, on raw buffers: each upward edge's target is an ancestor, on the chain.
  func scan(
    _ up: [Int32], _ down: [Int32], _ forward: inout SearchLabels, _ backward: inout SearchLabels, best: Double
  ) -> (Double, Int32) {
    let cch = customized.cch
    var best = best
    var meeting: Int32 = -1
    cch.firstUp.withUnsafeBufferPointer { firstUp in
      cch.upTarget.withUnsafeBufferPointer { targets in
        customized.up.withUnsafeBufferPointer { upWeights in
          customized.down.withUnsafeBufferPointer { downWeights in
            forward.cost.withUnsafeMutableBufferPointer { fCost in
              forward.parent.withUnsafeMutableBufferPointer { fParent in
                backward.cost.withUnsafeMutableBufferPointer { bCost in
                  backward.parent.withUnsafeMutableBufferPointer { bParent in
                    @inline(__always)
                    func relax(
                      _ v: Int, _ cost: Double, _ weights: UnsafeBufferPointer<Double>,
                      _ costs: UnsafeMutableBufferPointer<Double>, _ parents: UnsafeMutableBufferPointer<Int32>
                    ) {
                      for e in Int(firstUp[v])..<Int(firstUp[v + 1]) {
                        let w = Int(targets[e])
                        let candidate = cost + weights[e]
                        if candidate < costs[w] {
                          costs[w] = candidate
                          parents[w] = Int32(truncatingIfNeeded: e)
                        }
                      }
                    }
                    var i = 0
                    var j = 0
                    while i < up.count || j < down.count {
                      let f = i < up.count ? Int(up[i]) : -1
                      let b = j < down.count ? Int(down[j]) : -1
                      let v = b < 0 || (f >= 0 && f <= b) ? f : b
                      let inForward = v == f
                      let inBackward = v == b
                      if inForward { i += 1 }
                      if inBackward { j += 1 }
                      let forwardCost = inForward ? fCost[v] : .infinity
                      let backwardCost = inBackward ? bCost[v] : .infinity
                      // A start and an end on the same directed edge cannot meet there: that
                      // is the caller's same-edge path.
                      if forwardCost + backwardCost < best && !(fParent[v] == -1 && bParent[v] == -1) {
                        best = forwardCost + backwardCost
                        meeting = Int32(v)
                      }
                      if forwardCost < best { relax(v, forwardCost, upWeights, fCost, fParent) }
                      if backwardCost < best { relax(v, backwardCost, downWeights, bCost, bParent) }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    return (best, meeting)
  }

  /// Marks the starts' elimination-tree ancestors (parent -3: on the path, not reached yet) and
  /// labels the starts; returns the ancestors in rank order.
  func chain(from starts: [Endpoint], into labels: inout SearchLabels) -> [Int32] {
    let cch = customized.cch
    var nodes: [Int32] = []
    for s in starts {
      var v = cch.rank[Int(s.directed)]
      var branch: [Int32] = []
      while v >= 0, labels.parent[Int(v)] == -2 {
        labels.parent[Int(v)] = -3
        labels.touched.append(v)
        branch.append(v)
        v = cch.treeParent[Int(v)]
      }
      // Each branch is in rank order; the second joins the first's path where it stops.
      nodes = nodes.isEmpty ? branch : Self.merged(nodes, branch)
    }
    for s in starts {
      let start = Int(cch.rank[Int(s.directed)])
      guard s.weight < labels.cost[start] else { continue }
      labels.cost[start] = s.weight
      labels.parent[start] = s.startMark
    }
    return nodes
  }

  /// Two ascending lists of ranks as one.
  static func merged(_ a: [Int32], _ b: [Int32]) -> [Int32] {
    var result: [Int32] = []
    result.reserveCapacity(a.count + b.count)
    var i = 0
    var j = 0
    while i < a.count || j < b.count {
      if j == b.count || (i < a.count && a[i] < b[j]) {
        result.append(a[i])
        i += 1
      } else {
        result.append(b[j])
        j += 1
      }
    }
    return result
  }

  /// The backward search's starts: arriving on an end's directed edge pays only the part of it
  /// up to the point, where arcs into it charge the whole edge.
  func backwardStarts(_ targets: [Endpoint]) -> [Endpoint] {
    targets.map { t in
      let edge = network.edges[TurnGraph.edge(of: graph.original(t.directed))]
      let full = customized.cost(network, graph, node: t.directed)!
      return Endpoint(
        directed: t.directed, weight: t.weight - full.weight, duration: t.duration - full.duration,
        distance: t.distance - edge.length, isApproach: t.isApproach)
    }
  }

  /// Unpacks start → meeting (forward edges, walked back) and meeting → end into turn-graph nodes.
  func path(
    through meeting: Int32, forward: SearchLabels, backward: SearchLabels, sources: [Endpoint], targets: [Endpoint]
  ) -> FoundPath? {
    path(
      through: meeting, forward: forward, backwardParent: { backward.parent[Int($0)] }, sources: sources,
      targets: targets)
  }

  func path(
    through meeting: Int32, forward: SearchLabels, backwardParent: (Int32) -> Int32, sources: [Endpoint],
    targets: [Endpoint]
  ) -> FoundPath? {
    var upEdges: [Int32] = []
    var node = meeting
    while forward.parent[Int(node)] >= 0 {
      let e = forward.parent[Int(node)]
      upEdges.append(e)
      node = customized.cch.edgeSource(Int(e))
    }
    var path = [customized.cch.byRank[Int(node)]]
    for e in upEdges.reversed() { customized.unpack(Int(e), forward: true, into: &path) }
    node = meeting
    while backwardParent(node) >= 0 {
      let e = backwardParent(node)
      customized.unpack(Int(e), forward: false, into: &path)
      node = customized.cch.edgeSource(Int(e))
    }
    return measure(path, sources: sources, targets: targets)
  }

  /// Duration and distance of a turn-graph path from a start to an end.
  func measure(_ path: [Int32], sources: [Endpoint], targets: [Endpoint]) -> FoundPath? {
    guard let first = sources.first(where: { $0.directed == path.first }),
      let last = targets.first(where: { $0.directed == path.last })
    else { return nil }
    var weight = first.weight
    var duration = first.duration
    var distance = first.distance
    // Starting on the edge an approach leads off: the rest of it, then the approach beyond it.
    if path.count == 1, last.isApproach {
      let edge = network.edges[TurnGraph.edge(of: graph.original(last.directed))]
      let full = customized.cost(network, graph, node: last.directed)!
      weight += last.weight - full.weight
      duration += last.duration - full.duration
      distance += last.distance - edge.length
    }
    for (i, (x, y)) in zip(path, path.dropFirst()).enumerated() {
      guard let arc = graph.arcs(from: x).first(where: { graph.arcTarget[$0] == y }) else { return nil }
      weight += Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc])
      duration += Double(graph.arcTurnCost[arc])
      if i == path.count - 2 {
        weight += last.weight
        duration += last.duration
        distance += last.distance
      } else {
        let edge = network.edges[TurnGraph.edge(of: graph.original(y))]
        let cost = customized.cost(network, graph, node: y)!
        weight += cost.weight
        duration += cost.duration
        distance += edge.length
      }
    }
    // Copies of roads (via-way restrictions) are reported as the roads they copy.
    return FoundPath(directedEdges: path.map(graph.original), weight: weight, duration: duration, distance: distance)
  }
}

extension CCHSearch {
  /// One end's label at a node, in that node's bucket.
  struct BucketEntry {
    var target: Int32
    var isStart: Bool
    var cost: Double
    var duration: Double
    var distance: Double
    /// The node's next entry, -1 at the last.
    var next: Int32
  }

  /// Many-to-many with buckets: one backward search per end leaves (end, cost) at every node it
  /// reaches; one forward search per start then reads the buckets of the nodes it reaches. The
  /// buckets are lists threaded through one array, headed at each node (`bucketHead`), so that
  /// filling and reading them allocates nothing per node.
  func matrix(
    sources: [[Endpoint]], targets: [[Endpoint]], direct: (Int, Int) -> FoundPath?, pool: SearchLabelPool
  ) -> [[FoundPath?]] {
    pool.with { search, buckets in
      var entries: [BucketEntry] = []
      var filled: [Int32] = []
      defer {
        for node in filled { buckets.bucketHead[Int(node)] = -1 }
      }
      for (t, ends) in targets.enumerated() {
        upwardByTree(from: backwardStarts(ends), forward: false, into: &search)
        for node in search.touched where search.cost[Int(node)] < .infinity {
          let head = buckets.bucketHead[Int(node)]
          if head == -1 { filled.append(node) }
          buckets.bucketHead[Int(node)] = Int32(entries.count)
          entries.append(
            BucketEntry(
              target: Int32(t), isStart: search.parent[Int(node)] == -1, cost: search.cost[Int(node)],
              duration: search.duration[Int(node)], distance: search.distance[Int(node)], next: head))
        }
        search.reset()
      }
      var rows: [[FoundPath?]] = []
      rows.reserveCapacity(sources.count)
      for (s, starts) in sources.enumerated() {
        upwardByTree(from: starts, forward: true, into: &search)
        var best = (0..<targets.count).map { direct(s, $0) }
        for node in search.touched where search.cost[Int(node)] < .infinity {
          var index = buckets.bucketHead[Int(node)]
          guard index != -1 else { continue }
          let f = search.cost[Int(node)]
          let startsHere = search.parent[Int(node)] == -1
          while index != -1 {
            let entry = entries[Int(index)]
            index = entry.next
            let target = Int(entry.target)
            // A start and an end on the same directed edge cannot meet there.
            guard f + entry.cost < (best[target]?.weight ?? .infinity), !(startsHere && entry.isStart) else { continue }
            best[target] = FoundPath(
              directedEdges: [], weight: f + entry.cost, duration: search.duration[Int(node)] + entry.duration,
              distance: search.distance[Int(node)] + entry.distance)
          }
        }
        rows.append(best)
        search.reset()
      }
      return rows
    }
  }
}
