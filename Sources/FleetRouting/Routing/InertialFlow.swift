import Foundation

/// The node order of a CCH by nested dissection with inertial-flow separators (Schild and
/// Sommer 2015, as RoutingKit orders its CCHs): a region is split where the fewest nodes must
/// go, found as a minimum vertex cut between its two ends along a direction, for four directions,
/// keeping the smallest. Query cost grows with the square of the separators near the top of the
/// order, so cuts that follow natural barriers (rivers, railways, parks) make queries several
/// times faster than straight geometric cuts.
struct InertialFlow {
  /// The undirected graph, as adjacency lists: `neighbour[firstNeighbour[v]..<firstNeighbour[v + 1]]`.
  let firstNeighbour: [Int32]
  let neighbour: [Int32]
  /// Each node's position in metres-like units (north, east).
  let position: [(Double, Double)]
  /// The share of the region at each end that a cut must not pass through.
  static let endShare = 0.25
  /// Regions this small are ordered as they come.
  static let smallRegion = 16

  /// Order: the region's parts first, recursively, its separator last. Nodes in different
  /// connected pieces need no separator.
  func order() -> [Int32] {
    var work = Workspace(count: position.count)
    var result: [Int32] = []
    result.reserveCapacity(position.count)
    dissect(Array(0..<Int32(position.count)), &work, &result)
    return result
  }

  /// Scratch arrays sized to the whole graph, reused by every region.
  struct Workspace {
    /// A node's index in the region being cut, or -1.
    var local: [Int32]
    init(count: Int) { local = [Int32](repeating: -1, count: count) }
  }

  func dissect(_ nodes: [Int32], _ work: inout Workspace, _ result: inout [Int32]) {
    guard nodes.count > Self.smallRegion else {
      result.append(contentsOf: nodes)
      return
    }
    for (i, v) in nodes.enumerated() { work.local[Int(v)] = Int32(i) }
    let region = Region(nodes: nodes, graph: self, local: work.local)
    let pieces = region.connectedPieces()
    var cut: Cut?
    if pieces.count == 1 { cut = region.bestCut(graph: self) }
    for v in nodes { work.local[Int(v)] = -1 }

    if pieces.count > 1 {
      for piece in pieces { dissect(piece.map { nodes[Int($0)] }, &work, &result) }
      return
    }
    guard let cut, !cut.left.isEmpty, !cut.right.isEmpty else {
      result.append(contentsOf: nodes)
      return
    }
    dissect(cut.left.map { nodes[Int($0)] }, &work, &result)
    dissect(cut.right.map { nodes[Int($0)] }, &work, &result)
    result.append(contentsOf: cut.separator.map { nodes[Int($0)] })
  }

  /// A region's nodes split in three, by local index: no edge joins `left` and `right`.
  struct Cut {
    var separator: [Int32]
    var left: [Int32]
    var right: [Int32]
  }

  /// One region with its own adjacency lists, by local index.
  struct Region {
    let count: Int
    let first: [Int32]
    let adjacent: [Int32]
    let north: [Double]
    let east: [Double]

    init(nodes: [Int32], graph: InertialFlow, local: [Int32]) {
      count = nodes.count
      var first: [Int32] = [0]
      var adjacent: [Int32] = []
      first.reserveCapacity(nodes.count + 1)
      for v in nodes {
        for k in Int(graph.firstNeighbour[Int(v)])..<Int(graph.firstNeighbour[Int(v) + 1]) {
          let w = local[Int(graph.neighbour[k])]
          if w >= 0 { adjacent.append(w) }
        }
        first.append(Int32(adjacent.count))
      }
      self.first = first
      self.adjacent = adjacent
      north = nodes.map { graph.position[Int($0)].0 }
      east = nodes.map { graph.position[Int($0)].1 }
    }

    func neighbours(_ v: Int) -> Range<Int> { Int(first[v])..<Int(first[v + 1]) }

    func connectedPieces() -> [[Int32]] {
      var seen = [Bool](repeating: false, count: count)
      var pieces: [[Int32]] = []
      for start in 0..<count where !seen[start] {
        seen[start] = true
        var piece: [Int32] = [Int32(start)]
        var next = 0
        while next < piece.count {
          let v = Int(piece[next])
          next += 1
          for k in neighbours(v) where !seen[Int(adjacent[k])] {
            seen[Int(adjacent[k])] = true
            piece.append(adjacent[k])
          }
        }
        pieces.append(piece)
      }
      return pieces
    }

    /// The smallest of the minimum cuts along four directions (north, east, both diagonals);
    /// on a tie, the more balanced.
    func bestCut(graph: InertialFlow) -> Cut? {
      var best: Cut?
      for (a, b) in [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, -1.0)] {
        let projection = (0..<count).map { north[$0] * a + east[$0] * b }
        let sorted = (0..<count).sorted { (projection[$0], $0) < (projection[$1], $1) }
        let ends = max(1, Int(Double(count) * InertialFlow.endShare))
        guard
          let cut = minimumCut(
            sources: sorted.prefix(ends), sinks: sorted.suffix(ends), limit: best?.separator.count ?? .max)
        else { continue }
        if let current = best {
          let balance = { (c: Cut) in min(c.left.count, c.right.count) }
          if cut.separator.count > current.separator.count
            || (cut.separator.count == current.separator.count && balance(cut) <= balance(current))
          {
            continue
          }
        }
        best = cut
      }
      return best
    }

    /// A minimum vertex cut between the two ends (Dinic's maximum flow on the graph with each
    /// node split in two, joined by capacity one); nil when it would be `limit` nodes or more.
    /// Nodes at the ends may be cut too, so that a cut always exists.
    func minimumCut(sources: ArraySlice<Int>, sinks: ArraySlice<Int>, limit: Int) -> Cut? {
      let infinite: Int32 = 1 << 29
      var role = [UInt8](repeating: 0, count: count)  // 1 source, 2 sink
      for v in sources { role[v] = 1 }
      for v in sinks { role[v] = 2 }
      // Split nodes: 2v enters v, 2v + 1 leaves it; then the super source and sink.
      let s = 2 * count
      let t = 2 * count + 1
      let nodeCount = 2 * count + 2
      var degree = [Int32](repeating: 0, count: nodeCount + 1)
      for v in 0..<count {
        let d = Int32(first[v + 1] - first[v])
        degree[2 * v] += 1 + d + (role[v] == 1 ? 1 : 0)
        degree[2 * v + 1] += 1 + d + (role[v] == 2 ? 1 : 0)
      }
      degree[s] = Int32(sources.count)
      degree[t] = Int32(sinks.count)
      var start = [Int32](repeating: 0, count: nodeCount + 1)
      for i in 0..<nodeCount { start[i + 1] = start[i] + degree[i] }
      let arcCount = Int(start[nodeCount])
      var to = [Int32](repeating: 0, count: arcCount)
      var capacity = [Int32](repeating: 0, count: arcCount)
      var reverse = [Int32](repeating: 0, count: arcCount)
      var fill = Array(start.dropLast())
      func add(_ a: Int, _ b: Int, _ c: Int32) {
        let x = Int(fill[a])
        let y = Int(fill[b])
        fill[a] += 1
        fill[b] += 1
        to[x] = Int32(b)
        capacity[x] = c
        reverse[x] = Int32(y)
        to[y] = Int32(a)
        capacity[y] = 0
        reverse[y] = Int32(x)
      }
      for v in 0..<count {
        // Every node, the ends' too, can be cut: an end next to the other end leaves no other way.
        add(2 * v, 2 * v + 1, 1)
        for k in neighbours(v) { add(2 * v + 1, 2 * Int(adjacent[k]), infinite) }
      }
      for v in sources { add(s, 2 * v, infinite) }
      for v in sinks { add(2 * v + 1, t, infinite) }

      var level = [Int32](repeating: -1, count: nodeCount)
      var next = [Int32](repeating: 0, count: nodeCount)
      var queue: [Int32] = []
      queue.reserveCapacity(nodeCount)
      var flow = 0
      func levels() -> Bool {
        for i in 0..<nodeCount { level[i] = -1 }
        queue.removeAll(keepingCapacity: true)
        level[s] = 0
        queue.append(Int32(s))
        var head = 0
        while head < queue.count {
          let u = Int(queue[head])
          head += 1
          for a in Int(start[u])..<Int(start[u + 1]) where capacity[a] > 0 && level[Int(to[a])] < 0 {
            level[Int(to[a])] = level[u] + 1
            queue.append(to[a])
          }
        }
        return level[t] >= 0
      }
      var path: [Int32] = []
      var arcs: [Int32] = []
      func augment() -> Bool {
        path.removeAll(keepingCapacity: true)
        path.append(Int32(s))
        arcs.removeAll(keepingCapacity: true)
        while let u = path.last.map(Int.init) {
          if u == t {
            for a in arcs {
              capacity[Int(a)] -= 1
              capacity[Int(reverse[Int(a)])] += 1
            }
            return true
          }
          var advanced = false
          while next[u] < start[u + 1] {
            let a = Int(next[u])
            let w = Int(to[a])
            if capacity[a] > 0 && level[w] == level[u] + 1 {
              path.append(Int32(w))
              arcs.append(Int32(a))
              advanced = true
              break
            }
            next[u] += 1
          }
          if !advanced {
            level[u] = -1
            path.removeLast()
            if arcs.popLast() != nil, let previous = path.last { next[Int(previous)] += 1 }
          }
        }
        return false
      }
      while levels() {
        for i in 0..<nodeCount { next[i] = start[i] }
        while augment() {
          flow += 1
          if flow >= limit { return nil }
        }
      }
      // What the source still reaches: in and out → left; in only → separator; neither → right.
      var reached = [Bool](repeating: false, count: nodeCount)
      reached[s] = true
      queue.removeAll(keepingCapacity: true)
      queue.append(Int32(s))
      var head = 0
      while head < queue.count {
        let u = Int(queue[head])
        head += 1
        for a in Int(start[u])..<Int(start[u + 1]) where capacity[a] > 0 && !reached[Int(to[a])] {
          reached[Int(to[a])] = true
          queue.append(to[a])
        }
      }
      var cut = Cut(separator: [], left: [], right: [])
      for v in 0..<count {
        if reached[2 * v + 1] {
          cut.left.append(Int32(v))
        } else if reached[2 * v] {
          cut.separator.append(Int32(v))
        } else {
          cut.right.append(Int32(v))
        }
      }
      return cut
    }
  }
}
