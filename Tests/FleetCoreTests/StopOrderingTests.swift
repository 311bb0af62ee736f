import FleetCore
import FleetGeometry
import Foundation
import Testing

@Suite("Stop ordering")
struct StopOrderingTests {
  /// A random instance: stops on a plane (seconds = metres / 10), some with windows.
  static func instance(stops n: Int, seed: UInt64, windows: Bool) -> StopOrdering {
    var random = SeededRandom(seed: seed)
    let points = (0...n).map { _ in
      (Double.random(in: 0...5000, using: &random), Double.random(in: 0...5000, using: &random))
    }
    let metres = points.map { a in points.map { b in hypot(a.0 - b.0, a.1 - b.1) } }
    let stops = (0..<n).map { _ -> StopOrdering.Stop in
      guard windows, Bool.random(using: &random) else { return StopOrdering.Stop(service: 60) }
      let start = Double.random(in: 0...1500, using: &random)
      return StopOrdering.Stop(
        service: 60, windowStart: start, windowEnd: start + Double.random(in: 300...900, using: &random))
    }
    return StopOrdering(stops: stops, seconds: metres.map { $0.map { $0 / 10 } }, metres: metres)
  }

  static func permutations(_ items: [Int]) -> [[Int]] {
    guard items.count > 1 else { return [items] }
    return items.indices.flatMap { i in
      permutations(items.enumerated().filter { $0.offset != i }.map(\.element)).map { [items[i]] + $0 }
    }
  }

  /// On small days, every order can be tried: the heuristic's cost is within 5 % of the best on
  /// each, the best on most, and never below what a lower bound allows.
  @Test func theHeuristicIsCloseToTheBestOrderOnSmallDays() {
    var exact = 0
    for seed in UInt64(1)...40 {
      let problem = Self.instance(stops: 6, seed: seed, windows: seed % 2 == 0)
      let best = Self.permutations(Array(0..<6)).map { problem.measure($0).cost }.min()!
      let found = problem.measure(problem.solve())
      #expect(found.cost <= best * 1.05 + 1e-6, "seed \(seed): \(found.cost) against the best \(best)")
      #expect(problem.driveLowerBound() <= found.driveSeconds + 1e-6)
      if abs(found.cost - best) < 1e-6 { exact += 1 }
    }
    #expect(exact >= 30, "the best order on only \(exact) of 40 days")
  }

  @Test func everyStopOnceAndTheFixedOneFirst() {
    var problem = Self.instance(stops: 30, seed: 7, windows: true)
    problem.fixedPrefix = [12]
    let order = problem.solve()
    #expect(order.first == 12)
    #expect(order.sorted() == Array(0..<30))
    #expect(
      problem.measure(order).cost
        <= problem.measure(Array(0..<30).sorted { $0 == 12 ? true : $1 == 12 ? false : $0 < $1 }).cost)
  }

  /// The time limit cuts the local search short, never the stops: with none left the answer is
  /// the insertion's order, still every stop once; with time, the search only improves on it.
  @Test func theTimeLimitKeepsEveryStop() async {
    var limited = Self.instance(stops: 120, seed: 3, windows: true)
    limited.fixedPrefix = [5]
    limited.timeLimit = .zero
    let rushed = limited.solve()
    #expect(rushed.first == 5)
    #expect(rushed.sorted() == Array(0..<120))
    var unlimited = limited
    unlimited.timeLimit = nil
    // Seconds of CPU in a debug build: on a thread of its own, not one every test shares.
    let searched = await onDedicatedThread(named: "stop-ordering-test") { [unlimited] in unlimited.solve() }
    #expect(searched.sorted() == Array(0..<120))
    #expect(unlimited.measure(searched).cost < limited.measure(rushed).cost, "the search improved nothing")
  }

  /// A window is kept at the price of driving more: a stop due soon is made first even when it is
  /// the far one.
  @Test func aWindowComesBeforeDistance() {
    // The vehicle at 0; stop 0 at 100 s, stop 1 at 1000 s the other way, due within 1100 s.
    let seconds: [[Double]] = [[0, 100, 1000], [100, 0, 1100], [1000, 1100, 0]]
    var problem = StopOrdering(
      stops: [.init(service: 0), .init(service: 0, windowEnd: 1050)], seconds: seconds, metres: seconds)
    #expect(problem.solve() == [1, 0])
    #expect(problem.measure([0, 1]).violations == 1)
    #expect(problem.measure([1, 0]).violations == 0)
    // Reaching a stop before its window opens means waiting for it.
    problem.stops[0].windowStart = 2500
    #expect(problem.measure([1, 0]).finishSeconds == 2500)
  }
}
