import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Testing

@testable import FleetSimulator

@Suite("Congestion simulation")
struct CongestionSimulationTests {
  /// A stretch of arterial at a fifth of its speed, learned from cars reporting through trip
  /// progress and customized into routing once a simulated minute: at free flow every probe
  /// across the jam drives it; within three cycles nine in ten take a route as fast in truth as
  /// the best there is, the probes drive under a tenth of the jam, and ETAs are within 10 % of
  /// the truth, where free flow's were off by far more.
  @Test func routesAvoidAnInjectedJamAndETAsFollowIt() async throws {
    let graph = try await monacoGraph()
    // Tens of seconds of CPU in a debug build: on a thread of its own, not one that every test
    // in the process shares. An engine of its own: the simulation customizes its current metric.
    let outcome = try await onDedicatedThread(named: "congestion-test") {
      () throws -> (probes: Int, cycles: [CongestionSimulation.Cycle])? in
      let simulation = CongestionSimulation(routing: try RoutingEngine(graph: graph))
      guard let jam = simulation.findJam() else { return nil }
      let probes = simulation.probes(across: jam)
      return (probes.count, simulation.run(jam: jam, probes: probes, cycles: 3))
    }
    let (probes, cycles) = try #require(outcome, "a jam to inject")
    #expect(probes >= 5)
    #expect(cycles.count == 4)
    let freeFlow = try #require(cycles.first)
    #expect(freeFlow.meanETAError > 0.25)
    #expect(freeFlow.jamShare == 1)
    let learned = try #require(cycles.last)
    #expect(Double(learned.onBestRoute) >= 0.9 * Double(probes))
    #expect(learned.jamShare < 0.1)
    #expect(learned.meanETAError < 0.10)
    #expect(learned.slowedRoads > 0)
  }
}
