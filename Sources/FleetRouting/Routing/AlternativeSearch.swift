/// Alternative routes by the via-node method (Abraham, Delling, Goldberg, Werneck), with OSRM's
/// limits for contraction hierarchies: an alternative goes through some road the fastest route
/// does not take, is at most `stretch` slower, shares at most `sharing` of the fastest route's
/// weight, and is locally optimal: every stretch of it `localOptimality` of the fastest route's
/// weight long around its via road is itself a fastest path.
///
/// Both searches are plain Dijkstra over the turn graph, bounded by the stretch; they run only
/// when alternatives are asked for.
struct AlternativeSearch {
  let network: RoadNetwork
  let graph: TurnGraph
  let incoming: IncomingArcs
  /// Road classes the routes may not use.
  let excluding: RoadClasses
  /// The traffic the fastest route was timed with.
  let slowdowns: RoadSlowdowns
  /// Exact point-to-point costs for the local-optimality test.
  let fastest: (_ sources: [Endpoint], _ targets: [Endpoint]) -> FoundPath?

  /// OSRM's `VIAPATH_EPSILON`, `VIAPATH_GAMMA` and `VIAPATH_ALPHA`.
  static let stretch = 0.15
  static let sharing = 0.75
  static let localOptimality = 0.25
  /// Candidates tested for local optimality, best ranked first, before giving up; distinct
  /// paths ranked at most (the fastest first), which bounds the work on a city-sized search.
  static let testedCandidates = 40
  static let rankedPaths = 200

  /// Up to `count` alternatives to `best` from `sources` to `targets`, best first, as paths of
  /// directed edges.
  func alternatives(to best: FoundPath, from sources: [Endpoint], to targets: [Endpoint], count: Int) -> [[Int32]] {
    let bound = best.weight * (1 + Self.stretch)
    let forward = tree(from: sources, bound: bound, backward: false)
    let backward = tree(from: targets, bound: bound, backward: true)
    let onBest = Set(best.directedEdges)
    let endpoints = Set(sources.map(\.directed)).intersection(targets.map(\.directed))

    // Every road reached from both sides whose path through it is short enough, by OSRM's rank.
    var candidates: [(node: Int32, weight: Double, shared: Double, rank: Double)] = []
    for (node, f) in forward.cost where !onBest.contains(graph.original(node)) && !endpoints.contains(node) {
      guard let b = backward.cost[node] else { continue }
      let total = f - fullWeight(node) + b
      guard total <= bound else { continue }
      candidates.append((node, total, 0, 0))
    }
    var chosen: [[Int32]] = []
    var chosenEdges: [Set<Int32>] = []
    var covered = Set<Int32>()
    var ranked: [(path: [Int32], via: Int, rank: Double)] = []
    for candidate in candidates.sorted(by: { ($0.weight, $0.node) < ($1.weight, $1.node) }) {
      guard ranked.count < Self.rankedPaths else { break }
      guard !covered.contains(candidate.node) else { continue }
      let (path, via) = self.path(through: candidate.node, forward: forward, backward: backward)
      covered.formUnion(path)
      let shared = path.reduce(0.0) { $0 + (onBest.contains(graph.original($1)) ? fullWeight($1) : 0) }
      guard shared <= Self.sharing * best.weight else { continue }
      ranked.append((path, via, 2 * candidate.weight + shared))
    }
    var tested = 0
    for candidate in ranked.sorted(by: { $0.rank < $1.rank }) {
      guard chosen.count < count, tested < Self.testedCandidates else { break }
      // Not too much like an alternative already chosen either.
      let overlapsChosen = chosenEdges.contains { edges in
        candidate.path.reduce(0.0) { $0 + (edges.contains($1) ? fullWeight($1) : 0) } > Self.sharing * best.weight
      }
      guard !overlapsChosen else { continue }
      tested += 1
      guard isLocallyOptimal(candidate.path, around: candidate.via, window: Self.localOptimality * best.weight) else {
        continue
      }
      chosen.append(candidate.path)
      chosenEdges.append(Set(candidate.path))
    }
    return chosen
  }

  /// Costs from the starts (forward: to the end of each directed edge) or to the ends
  /// (backward: from the start of each directed edge), and each node's neighbour on the way.
  struct Tree {
    var cost: [Int32: Double] = [:]
    var next: [Int32: Int32] = [:]
  }

  func tree(from ends: [Endpoint], bound: Double, backward: Bool) -> Tree {
    var tree = Tree()
    var heap = MinHeap()
    for end in ends where end.weight < tree.cost[end.directed] ?? .infinity {
      tree.cost[end.directed] = end.weight
      heap.push(end.weight, end.directed)
    }
    while !heap.isEmpty {
      let (key, node) = heap.pop()
      if key > tree.cost[node] ?? .infinity { continue }
      if key > bound { break }
      let relax = { (other: Int32, turn: Double) in
        let candidate = key + turn + fullWeight(other)
        if candidate < tree.cost[other] ?? .infinity {
          tree.cost[other] = candidate
          tree.next[other] = node
          heap.push(candidate, other)
        }
      }
      if backward {
        for i in incoming.arcs(into: node) {
          let arc = Int(incoming.arc[i])
          relax(incoming.source[i], Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc]))
        }
      } else {
        for arc in graph.arcs(from: node) {
          relax(graph.arcTarget[arc], Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc]))
        }
      }
    }
    return tree
  }

  /// Start → node along the forward tree, then node → end along the backward tree; and the
  /// node's index in it.
  func path(through node: Int32, forward: Tree, backward: Tree) -> ([Int32], Int) {
    var head: [Int32] = [node]
    var current = node
    while let previous = forward.next[current] {
      head.append(previous)
      current = previous
    }
    var path = Array(head.reversed())
    current = node
    while let following = backward.next[current] {
      path.append(following)
      current = following
    }
    return (path, head.count - 1)
  }

  /// The T-test: the stretch of `path` around its via node, `window` long, is a fastest path.
  func isLocallyOptimal(_ path: [Int32], around via: Int, window: Double) -> Bool {
    guard path.count >= 3 else { return true }
    // Weight driven up to the end of each node, from the end of the first.
    var reached = [0.0]
    for (a, b) in zip(path, path.dropFirst()) {
      reached.append(reached.last! + turnWeight(a, b) + fullWeight(b))
    }
    let middle = reached[via]
    let first = reached.lastIndex { $0 <= middle - window / 2 } ?? 0
    let last = reached.firstIndex { $0 >= middle + window / 2 } ?? path.count - 1
    guard last > first else { return true }
    let along = reached[last] - reached[first]
    let from = Endpoint(directed: path[first], weight: 0, duration: 0, distance: 0)
    let to = Endpoint(directed: path[last], weight: fullWeight(path[last]), duration: 0, distance: 0)
    guard let shortest = fastest([from], [to]) else { return false }
    return shortest.weight >= along - 1e-6 * max(1, along)
  }

  func fullWeight(_ node: Int32) -> Double {
    let driven = graph.original(node)
    guard let cost = slowdowns.cost(network.edges[TurnGraph.edge(of: driven)], driven),
      cost.classes.isDisjoint(with: excluding)
    else { return .infinity }
    return cost.weight
  }

  func turnWeight(_ from: Int32, _ to: Int32) -> Double {
    guard let arc = graph.arcs(from: from).first(where: { graph.arcTarget[$0] == to }) else { return .infinity }
    return Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc])
  }
}

/// The turn graph's arcs by target: what a backward search walks.
struct IncomingArcs: Sendable {
  /// Arcs into node v: `first[v]..<first[v + 1]`, each with its source and its index in the graph.
  let first: [Int32]
  let source: [Int32]
  let arc: [Int32]

  init(_ graph: TurnGraph) {
    let n = graph.directedEdgeCount
    var counts = [Int32](repeating: 0, count: n + 1)
    for target in graph.arcTarget { counts[Int(target) + 1] += 1 }
    for v in 0..<n { counts[v + 1] += counts[v] }
    var next = counts
    var source = [Int32](repeating: 0, count: graph.arcTarget.count)
    var arc = [Int32](repeating: 0, count: graph.arcTarget.count)
    for v in 0..<n {
      for a in graph.arcs(from: Int32(v)) {
        let target = Int(graph.arcTarget[a])
        source[Int(next[target])] = Int32(v)
        arc[Int(next[target])] = Int32(a)
        next[target] += 1
      }
    }
    first = counts
    self.source = source
    self.arc = arc
  }

  func arcs(into node: Int32) -> Range<Int> { Int(first[Int(node)])..<Int(first[Int(node) + 1]) }
}
