import FleetTestSupport
import Testing

@testable import FleetRouting

/// The metrics customized on demand (excluded classes, free flow while traffic is learned, the
/// usual traffic of a departure's time): kept for reuse, at most `onDemandMetricLimit`, and
/// dropped when the metric they were made from is replaced.
@Suite struct TrafficMetricsTests {
  typealias Key = TrafficMetrics.Key

  @Test func onDemandMetricsAreKeptUntilTheirRulesDropThem() throws {
    var map = MapFixture("a       b       c")
    map.way("abc", ["highway": "residential", "name": "Street"])
    let engine = try map.engine()
    func kept() -> Set<Key> { engine.metrics.withLock { Set($0.onDemand.keys) } }
    let slowed = RoadSlowdowns(factors: [Float](repeating: 2, count: engine.network.edges.count * 2))

    // Made on first use and used again.
    let first = engine.metric(.current, excluding: .motorway)
    let again = engine.metric(.current, excluding: .motorway)
    #expect(first.up == again.up)
    #expect(kept() == [Key(base: .current(generation: 0), excluding: .motorway)])
    // At most two: the oldest goes.
    _ = engine.metric(.current, excluding: .toll)
    _ = engine.metric(.current, excluding: .ferry)
    #expect(
      kept() == [
        Key(base: .current(generation: 0), excluding: .toll), Key(base: .current(generation: 0), excluding: .ferry),
      ])

    // Customizing replaces the metric they were made from: they go. Free flow is now a metric
    // of its own while the roads are slowed, kept until traffic is back to free flow.
    engine.customize(slowed)
    #expect(kept().isEmpty)
    let freeFlow = engine.metric(.freeFlow)
    #expect(freeFlow.slowdowns.isFreeFlow)
    _ = engine.metric(.current, excluding: .toll)
    #expect(kept() == [Key(base: .freeFlow, excluding: []), Key(base: .current(generation: 1), excluding: .toll)])
    engine.customize(slowed)
    #expect(kept() == [Key(base: .freeFlow, excluding: [])])
    engine.customize(.freeFlow)
    #expect(kept().isEmpty)
  }
}
