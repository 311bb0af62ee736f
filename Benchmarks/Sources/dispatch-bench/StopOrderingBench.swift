import ArgumentParser
import BenchSupport
import FleetCore
import FleetProgress
import FleetRouting
import Foundation

/// Stop ordering (issue 36, `:optimizeStops`): delivery days of 50 and 200 stops on a city's
/// roads, each stop two minutes of work and a third of them with a two-hour window, in the
/// order the tasks were created against `StopOrdering`'s order and a lower bound on the driving.
struct StopOrderingBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "stops")

  @Option(help: "The road graph (from `fleetd graph build`).") var graph: String
  @Option(help: "Stops per day, comma-separated.") var stops = "50,200"
  @Option(help: "Days per size.") var days = 5
  @Option(help: "Share of stops with a time window.") var windowed = 0.33

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    let travel = RoadTravelEstimator(routing: routing)
    print(
      "| stops | created order: drive min | late stops | ordered: drive min | late stops | late min | lower bound min | ordered ÷ bound | created ÷ ordered | solve ms |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size in stops.split(separator: ",").compactMap({ Int($0) }) {
      for day in 0..<days {
        var random = Seeded(UInt64(1000 * size + day))
        let points = roadPoints(routing, count: size + 1, random: &random)
        let table = travel.matrix(points)
        let seconds = table.map { $0.map { $0?.seconds ?? .infinity } }
        let metres = table.map { $0.map { $0?.metres ?? .infinity } }
        // The day's length by the nearest-neighbour tour (drives and work) sets where windows
        // fall: each window two hours, placed at random within the day.
        var dayLength = 0.0
        var left = Set(1...size)
        var at = 0
        while let next = left.min(by: { seconds[at][$0] < seconds[at][$1] }) {
          dayLength += (seconds[at][next].isFinite ? seconds[at][next] : 0) + 120
          left.remove(next)
          at = next
        }
        let stopsOfDay = (0..<size).map { _ -> StopOrdering.Stop in
          guard random.next() < windowed else { return StopOrdering.Stop(service: 120) }
          let start = random.next() * max(0, dayLength - 7200)
          return StopOrdering.Stop(service: 120, windowStart: start, windowEnd: start + 7200)
        }
        let problem = StopOrdering(stops: stopsOfDay, seconds: seconds, metres: metres)
        let created = problem.measure(Array(0..<size))
        let clock = ContinuousClock()
        let started = clock.now
        let order = problem.solve()
        let took = clock.now - started
        let ordered = problem.measure(order)
        let bound = problem.driveLowerBound()
        let (s, atto) = took.components
        print(
          "| \(size) | \(f(created.driveSeconds / 60)) | \(created.violations) | \(f(ordered.driveSeconds / 60)) | \(ordered.violations) | \(f(ordered.lateSeconds / 60)) | \(f(bound / 60)) | \(String(format: "%.2f", ordered.driveSeconds / bound)) | \(String(format: "%.2f", created.driveSeconds / ordered.driveSeconds)) | \(String(format: "%.0f", Double(s) * 1000 + Double(atto) / 1e15)) |"
        )
      }
    }
  }

  func f(_ value: Double) -> String { String(format: "%.1f", value) }
}
