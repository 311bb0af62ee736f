/// Where a search starts or ends on one drivable direction of an edge, and what the part of
/// the edge between the point and the edge's end (for a start) or start (for an end) costs.
struct Endpoint: Sendable {
  var directed: Int32
  var weight: Double
  var duration: Double
  var distance: Double
  /// An end reached by driving on into the next edge (`RoutingEngine.aiming`), not an end on
  /// this one: a start on the same edge may meet it there.
  var isApproach = false

  /// The label a search's start gets as its parent: -1, or -4 for an approach.
  var startMark: Int32 { isApproach ? -4 : -1 }
}

/// A path found by a search: the directed edges driven, in order, and its totals.
struct FoundPath {
  var directedEdges: [Int32]
  var weight: Double
  var duration: Double
  var distance: Double
}

/// A leg's path and the roads it drives from and to (of the roads at each of its waypoints).
struct FoundLeg {
  var path: FoundPath
  var from: RoadPosition
  var to: RoadPosition
}

/// The endpoints of a road position, one per direction a car may drive there, their costs
/// at free flow unless `slowdowns` time them.
func endpoints(
  of position: RoadPosition, in network: RoadNetwork, asSource: Bool, slowdowns: RoadSlowdowns = .freeFlow
) -> [Endpoint] {
  let edge = network.edges[position.edge]
  let along = edge.length > 0 ? position.offset / edge.length : 0
  var result: [Endpoint] = []
  for reversed in [false, true] where position.directions.contains(.along(reversed: reversed)) {
    guard let cost = slowdowns.cost(edge, TurnGraph.directed(position.edge, reversed: reversed)) else { continue }
    // Share of the edge between the point and the end a start leaves by (or the start an end comes from).
    let share = asSource != reversed ? 1 - along : along
    result.append(
      Endpoint(
        directed: TurnGraph.directed(position.edge, reversed: reversed), weight: cost.weight * share,
        duration: cost.duration * share, distance: edge.length * share))
  }
  return result
}

/// A binary min-heap of (key, node).
struct MinHeap {
  var keys: [Double] = []
  var nodes: [Int32] = []

  var isEmpty: Bool { keys.isEmpty }
  var minimum: Double { keys.first ?? .infinity }

  mutating func push(_ key: Double, _ node: Int32) {
    keys.append(key)
    nodes.append(node)
    var i = keys.count - 1
    while i > 0 {
      let parent = (i - 1) / 2
      guard keys[parent] > keys[i] else { break }
      keys.swapAt(parent, i)
      nodes.swapAt(parent, i)
      i = parent
    }
  }

  mutating func pop() -> (key: Double, node: Int32) {
    let top = (keys[0], nodes[0])
    let lastKey = keys.removeLast()
    let lastNode = nodes.removeLast()
    if !keys.isEmpty {
      keys[0] = lastKey
      nodes[0] = lastNode
      var i = 0
      while true {
        let left = 2 * i + 1
        let right = left + 1
        var smallest = i
        if left < keys.count && keys[left] < keys[smallest] { smallest = left }
        if right < keys.count && keys[right] < keys[smallest] { smallest = right }
        if smallest == i { break }
        keys.swapAt(smallest, i)
        nodes.swapAt(smallest, i)
        i = smallest
      }
    }
    return top
  }
}

/// Dijkstra over the turn graph from start endpoints to end endpoints (exact; the reference the
/// faster searches are checked against).
struct DijkstraSearch {
  let network: RoadNetwork
  let graph: TurnGraph
  var slowdowns = RoadSlowdowns.freeFlow

  func shortestPath(from sources: [Endpoint], to targets: [Endpoint], sameEdge: FoundPath?) -> FoundPath? {
    let count = graph.directedEdgeCount
    var weight = [Double](repeating: .infinity, count: count)
    var duration = [Double](repeating: 0, count: count)
    var distance = [Double](repeating: 0, count: count)
    var parent = [Int32](repeating: -1, count: count)
    var heap = MinHeap()
    for s in sources where s.weight < weight[Int(s.directed)] {
      weight[Int(s.directed)] = s.weight
      duration[Int(s.directed)] = s.duration
      distance[Int(s.directed)] = s.distance
      heap.push(s.weight, s.directed)
    }
    var targetsByEdge: [Int32: Endpoint] = [:]
    for t in targets { targetsByEdge[t.directed] = t }
    var best = sameEdge
    var bestLast: Int32 = -1
    var bestTarget: Endpoint?

    while !heap.isEmpty {
      let (key, node) = heap.pop()
      if key > weight[Int(node)] { continue }
      if key >= (best?.weight ?? .infinity) { break }
      for arc in graph.arcs(from: node) {
        let next = graph.arcTarget[arc]
        let turnWeight = Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc])
        let turnDuration = Double(graph.arcTurnCost[arc])
        if let target = targetsByEdge[next] {
          let total = key + turnWeight + target.weight
          if total < (best?.weight ?? .infinity) {
            best = FoundPath(
              directedEdges: [], weight: total, duration: duration[Int(node)] + turnDuration + target.duration,
              distance: distance[Int(node)] + target.distance)
            bestLast = node
            bestTarget = target
          }
        }
        let driven = graph.original(next)
        let edge = network.edges[TurnGraph.edge(of: driven)]
        guard let cost = slowdowns.cost(edge, driven) else { continue }
        let candidate = key + turnWeight + cost.weight
        if candidate < weight[Int(next)] {
          weight[Int(next)] = candidate
          duration[Int(next)] = duration[Int(node)] + turnDuration + cost.duration
          distance[Int(next)] = distance[Int(node)] + edge.length
          parent[Int(next)] = node
          heap.push(candidate, next)
        }
      }
    }
    guard var path = best else { return nil }
    if let bestTarget {
      var edges = [bestTarget.directed]
      var node = bestLast
      while node >= 0 {
        edges.append(node)
        node = parent[Int(node)]
      }
      path.directedEdges = edges.reversed().map(graph.original)
    }
    return path
  }
}
