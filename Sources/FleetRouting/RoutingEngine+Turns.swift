extension RoutingEngine {
  /// One allowed turn and what it costs: from the road's other end, through a junction, to the
  /// next road's other end (all by coordinates, so another router's turns can be matched).
  public struct TurnRecord: Sendable, Hashable {
    public var from: FixedCoordinate
    public var via: FixedCoordinate
    public var to: FixedCoordinate
    public var seconds: Double
  }

  /// Every turn of the graph with its cost, for comparing the cost model with another router's
  /// (`dev/compare-turns.sh`).
  public func turnTable() -> [TurnRecord] {
    var records: [TurnRecord] = []
    for arriving in 0..<turns.firstDuplicate {
      let inEdge = network.edges[TurnGraph.edge(of: arriving)]
      let inReversed = TurnGraph.isReversed(arriving)
      let via = inReversed ? inEdge.from : inEdge.to
      let from = inReversed ? inEdge.to : inEdge.from
      for arc in turns.arcs(from: arriving) {
        let leaving = turns.original(turns.arcTarget[arc])
        let outEdge = network.edges[TurnGraph.edge(of: leaving)]
        let to = TurnGraph.isReversed(leaving) ? outEdge.from : outEdge.to
        records.append(
          TurnRecord(
            from: network.coordinate(ofJunction: from), via: network.coordinate(ofJunction: via),
            to: network.coordinate(ofJunction: to), seconds: Double(turns.arcTurnCost[arc])))
      }
    }
    return records
  }
}
