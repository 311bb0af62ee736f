/// What the graph made of one OSM way: for tools that explain why a route goes where it goes.
public struct WayFacts: Sendable, Hashable {
  public var wayID: Int64
  /// Road edges the way became (a way is split at every junction and at the extract's border).
  public var edges: Int
  public var metres: Double
  /// Free-flow seconds over the whole way in each direction, nil where a car may not drive it.
  public var forwardSeconds: Double?
  public var backwardSeconds: Double?
  /// Only for starting or ending there (private, destination, …).
  public var restricted: Bool
  /// The smallest strongly connected component any of its drivable directions is in (directed
  /// edges): below `RoutingEngine.smallComponentSize` a route only starts or ends there when the
  /// other waypoints share it, as in OSRM.
  public var smallestComponent: Int
}

extension RoutingEngine {
  /// The graph's facts about an OSM way, nil when it holds none of it.
  public func facts(ofWay wayID: Int64) -> WayFacts? {
    let indices = network.edges.indices.filter { network.edges[$0].wayID == wayID }
    guard !indices.isEmpty else { return nil }
    var facts = WayFacts(
      wayID: wayID, edges: indices.count, metres: 0, forwardSeconds: 0, backwardSeconds: 0, restricted: false,
      smallestComponent: Int.max)
    for i in indices {
      let edge = network.edges[i]
      facts.metres += edge.length
      facts.forwardSeconds = edge.forward.flatMap { cost in facts.forwardSeconds.map { $0 + cost.duration } }
      facts.backwardSeconds = edge.backward.flatMap { cost in facts.backwardSeconds.map { $0 + cost.duration } }
      facts.restricted = facts.restricted || edge.forward?.restricted == true || edge.backward?.restricted == true
      for reversed in [false, true] where edge.cost(reversed: reversed) != nil {
        let directed = Int(TurnGraph.directed(i, reversed: reversed))
        let size = Int(components.size[Int(components.component[directed])])
        facts.smallestComponent = min(facts.smallestComponent, size)
      }
    }
    if facts.smallestComponent == Int.max { facts.smallestComponent = 0 }
    return facts
  }

  /// The OSM way a road edge (a route span's `edge`) comes from.
  public func wayID(ofEdge edge: Int32) -> Int64 { network.edges[Int(edge)].wayID }
}
