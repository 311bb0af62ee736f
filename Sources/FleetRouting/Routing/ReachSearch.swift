/// What a reach is measured in along the fastest paths: seconds or metres driven.
public enum ReachMetric: String, Sendable, Hashable {
  case duration
  case distance
}

/// How far a drive from one point gets along every road: one search from the start to all
/// roads (Dijkstra over the turn graph by routing weight, so each road is reached by the path a
/// route there would take), stopped where the measured drive passes a limit.
struct ReachSearch {
  let network: RoadNetwork
  let graph: TurnGraph
  /// The traffic the roads are timed with.
  let slowdowns: RoadSlowdowns

  /// Per directed road edge (`TurnGraph.directed`), the measure of the drive at its end, and
  /// where on it the drive begins: 0 at its start, or the share of the edge behind the start
  /// point for the start's own edges. `reentered` is the measure at a start edge's end when it is
  /// driven again from its beginning (a loop back to the part behind the start).
  struct Labels {
    var end: [Double]
    var begins: [Double]
    var reentered: [Double]

    /// The measure at `share` of the way along directed edge `d` (whose whole length measures
    /// `cost`), or infinity where the drive does not pass.
    func value(_ d: Int, at share: Double, cost: Double) -> Double {
      if share >= begins[d], end[d].isFinite { return end[d] - cost * (1 - share) }
      return reentered[d].isFinite ? reentered[d] - cost * (1 - share) : .infinity
    }
  }

  /// Every road the drive enters within `limit` (its measure where it enters at most the limit;
  /// the rest of that road carries on past it). Roads of an `excluding` class are not driven.
  func run(from sources: [Endpoint], metric: ReachMetric, limit: Double, excluding: RoadClasses) -> Labels {
    let count = graph.directedEdgeCount
    let roads = network.edges.count * 2
    var labels = Labels(
      end: [Double](repeating: .infinity, count: roads), begins: [Double](repeating: 0, count: roads),
      reentered: [Double](repeating: .infinity, count: roads))
    var weight = [Double](repeating: .infinity, count: count)
    var measure = [Double](repeating: .infinity, count: count)
    var isSource = [Bool](repeating: false, count: roads)
    var heap = MinHeap()
    for s in sources where s.weight < weight[Int(s.directed)] {
      let d = Int(s.directed)
      let cost = self.cost(d, metric)
      weight[d] = s.weight
      measure[d] = metric == .duration ? s.duration : s.distance
      isSource[d] = true
      labels.begins[d] = cost > 0 ? 1 - measure[d] / cost : 0
      heap.push(s.weight, s.directed)
    }
    while !heap.isEmpty {
      let (key, node) = heap.pop()
      if key > weight[Int(node)] { continue }
      // Settled: the measure of the path a route would take.
      let original = Int(graph.original(node))
      labels.end[original] = min(labels.end[original], measure[Int(node)])
      for arc in graph.arcs(from: node) {
        let next = graph.arcTarget[arc]
        let driven = Int(graph.original(next))
        let edge = network.edges[TurnGraph.edge(of: Int32(driven))]
        guard let cost = slowdowns.cost(edge, Int32(driven)), cost.classes.isDisjoint(with: excluding)
        else { continue }
        let entered = measure[Int(node)] + (metric == .duration ? Double(graph.arcTurnCost[arc]) : 0)
        guard entered <= limit else { continue }
        let atEnd = entered + (metric == .duration ? cost.duration : edge.length)
        let candidate = key + Double(graph.arcTurnCost[arc] + graph.arcPenalty[arc]) + cost.weight
        if isSource[driven] {
          labels.reentered[driven] = min(labels.reentered[driven], atEnd)
          continue
        }
        if candidate < weight[Int(next)] {
          weight[Int(next)] = candidate
          measure[Int(next)] = atEnd
          heap.push(candidate, next)
        }
      }
    }
    return labels
  }

  /// What driving all of directed edge `d` measures.
  func cost(_ d: Int, _ metric: ReachMetric) -> Double {
    let edge = network.edges[TurnGraph.edge(of: Int32(d))]
    guard let cost = slowdowns.cost(edge, Int32(d)) else { return .infinity }
    return metric == .duration ? cost.duration : edge.length
  }
}
