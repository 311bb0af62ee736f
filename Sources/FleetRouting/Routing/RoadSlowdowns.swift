/// How many times its free-flow time each directed road takes at present (1 or more): what
/// learned traffic customizes the hierarchy with. Indexed by directed road edge
/// (`TurnGraph.directed`); an edge past the end of `factors` drives at free flow.
public struct RoadSlowdowns: Sendable, Hashable {
  public let factors: [Float]

  public init(factors: [Float]) { self.factors = factors }

  /// The slowdowns of `roads` directed roads from those learned slow: each one's factor where
  /// it is beyond `resolution`, 1 elsewhere; free flow when none is.
  public init(roads: Int, slowed: some Sequence<(road: Int, factor: Float)>) {
    var factors: [Float] = []
    for (road, factor) in slowed where road >= 0 && road < roads && factor > 1 + Self.resolution {
      if factors.isEmpty { factors = [Float](repeating: 1, count: roads) }
      factors[road] = factor
    }
    self.factors = factors
  }

  /// Every road at its free-flow speed.
  public static let freeFlow = RoadSlowdowns(factors: [])

  public var isFreeFlow: Bool { factors.isEmpty }

  /// Slowdowns closer than this to 1 are left at free flow: a road that has nearly recovered
  /// changes no route, and leaving it out keeps customization and the stored profile small.
  public static let resolution: Float = 0.02

  /// How many roads are slowed.
  public var slowedRoads: Int { factors.count { $0 > 1 } }

  /// The factor for directed road edge `directed`.
  @inline(__always)
  func factor(_ directed: Int32) -> Double {
    Int(directed) < factors.count ? Double(factors[Int(directed)]) : 1
  }

  /// A road's cost in one direction with its slowdown: more seconds, and a weight that grows
  /// with them (the car profile's weight is its duration with penalties).
  @inline(__always)
  func cost(_ edge: RoadEdge, _ directed: Int32) -> EdgeCost? {
    guard var cost = edge.cost(reversed: TurnGraph.isReversed(directed)) else { return nil }
    let f = factor(directed)
    if f != 1 {
      cost.duration *= f
      cost.weight *= f
    }
    return cost
  }

  /// A search's start or end on a road, with its road's slowdown (`endpoints` are measured at
  /// free flow, and kept so by `RoadAnchor`).
  @inline(__always)
  func slowed(_ end: Endpoint) -> Endpoint {
    let f = factor(end.directed)
    guard f != 1 else { return end }
    var slowed = end
    slowed.weight *= f
    slowed.duration *= f
    return slowed
  }
}
