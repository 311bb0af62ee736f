import ArgumentParser
import FleetGeometry
import FleetRouting
import FleetSimulator
import Foundation

/// Learned traffic in routing, per extract: how long re-customizing the hierarchy takes (one
/// core), route latency while it runs beside queries against idle, and the congestion
/// simulation (a stretch of arterial at a fifth of its speed, cars reporting through trip
/// progress, a customization a minute): whether routes avoid the jam and how far ETAs are from
/// the simulated truth, cycle by cycle, with free flow's figures as cycle 0.
@main
struct TrafficBench: AsyncParsableCommand {
  @Argument(help: "OpenStreetMap extracts (.osm.pbf).") var extracts: [String]
  @Option(help: "Customization cycles to simulate.") var cycles = 5
  @Option(help: "Route queries timed, idle and during customizations.") var queries = 2000

  func run() async throws {
    print(
      "| extract | directed roads | customization median / max s | route p50 / p99 ms idle | during customization |")
    print("| --- | ---: | ---: | ---: | ---: |")
    var simulations: [(String, CongestionSimulation.Jam?, Int, [CongestionSimulation.Cycle])] = []
    for path in extracts {
      let name = URL(fileURLWithPath: path).lastPathComponent.replacingOccurrences(of: ".osm.pbf", with: "")
      let engine = try RoutingEngine(osm: path)
      let roads = engine.network.edges.count * 2
      // A fifth of the roads slowed, by up to three times: more than a city's rush hour learns.
      var state: UInt64 = 5
      func next() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) / Double(1 << 53)
      }
      let slowdowns = RoadSlowdowns(factors: (0..<roads).map { _ in next() < 0.2 ? Float(1 + 2 * next()) : 1 })
      var customizations: [Double] = []
      for _ in 0..<5 {
        let began = ContinuousClock.now
        engine.customize(slowdowns)
        customizations.append(Self.seconds(ContinuousClock.now - began))
      }
      let pairs = (0..<queries).map { _ in
        let a = engine.network.points[Int(next() * Double(engine.network.points.count))].latLng
        let b = engine.network.points[Int(next() * Double(engine.network.points.count))].latLng
        return (a, b)
      }
      let idle = Self.latencies(engine, pairs)
      // The same queries while another thread customizes again and again.
      let stop = Flag()
      let customizer = Thread {
        var flip = false
        while !stop.isSet {
          engine.customize(flip ? slowdowns : .freeFlow)
          flip.toggle()
        }
      }
      customizer.start()
      let busy = Self.latencies(engine, pairs)
      stop.set()
      while customizer.isExecuting { usleep(1000) }
      engine.customize(.freeFlow)
      customizations.sort()
      print(
        "| \(name) | \(roads) | \(Self.f(customizations[2], 2)) / \(Self.f(customizations.last!, 2)) | "
          + "\(Self.f(idle.p50, 2)) / \(Self.f(idle.p99, 2)) | \(Self.f(busy.p50, 2)) / \(Self.f(busy.p99, 2)) |")

      let simulation = CongestionSimulation(routing: engine)
      if let jam = simulation.findJam() {
        let probes = simulation.probes(across: jam)
        simulations.append((name, jam, probes.count, simulation.run(jam: jam, probes: probes, cycles: cycles)))
      } else {
        simulations.append((name, nil, 0, []))
      }
    }
    print()
    print(
      "| extract | jam | probes | cycle | slowed roads | customization s | on the best route | jam metres driven | ETA error mean / max |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (name, jam, probes, cycles) in simulations {
      guard let jam else {
        print("| \(name) | no arterial stretch of 300 m | | | | | | | |")
        continue
      }
      let label = "\(jam.name.isEmpty ? "unnamed" : jam.name), \(Int(jam.metres)) m at 1/\(Int(jam.slowdown))"
      for cycle in cycles {
        print(
          "| \(name) | \(label) | \(probes) | \(cycle.index == 0 ? "free flow" : "\(cycle.index)") | \(cycle.slowedRoads) | "
            + "\(Self.f(cycle.customizationSeconds, 2)) | \(cycle.onBestRoute) / \(probes) | "
            + "\(Self.f(cycle.jamShare * 100, 0)) % | \(Self.f(cycle.meanETAError * 100, 1)) / "
            + "\(Self.f(cycle.largestETAError * 100, 1)) % |")
      }
    }
  }

  static func latencies(_ engine: RoutingEngine, _ pairs: [(LatLng, LatLng)]) -> (p50: Double, p99: Double) {
    var times: [Double] = []
    for (a, b) in pairs {
      let began = ContinuousClock.now
      _ = try? engine.route([a, b])
      times.append(seconds(ContinuousClock.now - began) * 1000)
    }
    times.sort()
    return (times[times.count / 2], times[times.count * 99 / 100])
  }

  static func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
  }

  static func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}

/// Set once by the main thread, read by the customizing one.
final class Flag: @unchecked Sendable {
  // A lock guards the one Bool; @unchecked because NSLock is not Sendable-annotated here.
  private let lock = NSLock()
  private var value = false
  var isSet: Bool { lock.withLock { value } }
  func set() { lock.withLock { value = true } }
}
