import ArgumentParser
import BenchSupport
import FleetDispatch
import Foundation

/// The assignment solver alone, on one core: RIDES waiting rides × VEHICLES free cars, each ride
/// with CANDIDATES of them (the ones a grid and the dispatch radius leave) at random pickup
/// times; the optimal solver next to greedy, the served rides and total pickup time of each.
struct SolverLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "solver")

  @Option var rides = 1000
  @Option var vehicles = 5000
  @Option var candidates = 20

  func run() async throws {
    var random = Seeded(11)
    // Rides and cars on a line of neighbourhoods: a ride's candidates are cars near it, so that
    // neighbouring rides compete for the same cars as in a city.
    let lists: [Assignment.Candidates] = (0..<rides).map { r in
      let centre = Int(Double(r) / Double(rides) * Double(vehicles))
      var seen = Set<Int>()
      var list: Assignment.Candidates = []
      while list.count < min(candidates, vehicles) {
        let v = max(0, min(vehicles - 1, centre + Int((random.next() - 0.5) * Double(candidates) * 4)))
        if seen.insert(v).inserted { list.append((vehicle: v, cost: 30 + random.next() * 900)) }
      }
      return list
    }
    print("\(rides) rides × \(vehicles) vehicles, \(candidates) candidates each (\(rides * candidates) pairs)")
    print()
    print("| solver | ms | rides served | total pickup s |")
    print("| --- | ---: | ---: | ---: |")
    for policy in [DispatchPolicy.batched, .greedy] {
      let clock = ContinuousClock()
      let started = clock.now
      let chosen = Assignment.solve(lists, vehicles: vehicles, policy: policy)
      let elapsed = clock.now - started
      var total = 0.0
      for (r, v) in chosen.enumerated() {
        if let v { total += lists[r].first { $0.vehicle == v }!.cost }
      }
      let (s, atto) = elapsed.components
      print(
        "| \(policy.rawValue) | \(String(format: "%.1f", Double(s) * 1000 + Double(atto) / 1e15)) | \(chosen.compactMap { $0 }.count) | \(Int(total)) |"
      )
    }
  }
}
