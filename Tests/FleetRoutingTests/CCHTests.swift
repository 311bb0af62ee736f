import FleetCore
import FleetGeometry
import Foundation
import Testing

@testable import FleetRouting

@Suite("Customizable contraction hierarchy")
struct CCHTests {
  /// Every one of Monaco's 1,000 benchmark queries: the CCH finds a path exactly as good as
  /// Dijkstra's over the same turn graph, and its duration and distance are that path's; at
  /// free flow and with traffic (a third of the roads slowed by up to five times, as learned
  /// traffic customizes the hierarchy).
  @Test(arguments: [false, true]) func agreesWithDijkstraOnAllMonacoQueries(traffic: Bool) async throws {
    let engine = try await MonacoRoutingTests.engine()
    var random = FanTests.Seeded(state: 11)
    let slowdowns =
      traffic
      ? RoadSlowdowns(
        factors: (0..<engine.network.edges.count * 2).map { _ in
          random.next() < 0.33 ? Float(1 + 4 * random.next()) : 1
        }) : .freeFlow
    // A metric of its own: the shared engine's current one stays at free flow for other tests.
    let metric = CustomizedCCH(
      cch: engine.hierarchy, graph: engine.turns, network: engine.network, slowdowns: slowdowns)
    let lines = try String(contentsOfFile: MonacoData.monacoRequests, encoding: .utf8).split(separator: "\n")
      .map(String.init)
    // Two thousand searches, Dijkstra's among them: seconds of CPU, on a thread of their own
    // rather than one that every other test shares.
    let comparisons = try await onDedicatedThread(named: "cch-vs-dijkstra") {
      try lines.compactMap { line -> (line: String, fast: PathCost?, exact: PathCost?)? in
        guard let start = line.range(of: "/driving/")?.upperBound else { return nil }
        let points = line[start...].prefix { $0 != "?" && $0 != "\"" }.split(separator: ";").map { pair in
          let v = pair.split(separator: ",").map { Double($0)! }
          return LatLng(latitude: v[1], longitude: v[0])
        }
        let positions = try engine.positions(points)
        return (
          line, engine.search(from: positions[0], to: positions[1], metric: metric).map(PathCost.init),
          engine.searchExactly(from: positions[0], to: positions[1], slowdowns: slowdowns).map(PathCost.init)
        )
      }
    }
    var compared = 0
    for (line, fast, exact) in comparisons {
      #expect((fast == nil) == (exact == nil))
      guard let fast, let exact else { continue }
      #expect(abs(fast.weight - exact.weight) < 1e-6, "\(line)")
      if abs(fast.weight - exact.weight) < 1e-6 && fast.edges == exact.edges {
        #expect(abs(fast.duration - exact.duration) < 1e-6)
        #expect(abs(fast.distance - exact.distance) < 1e-6)
      }
      compared += 1
    }
    #expect(compared == 1000)
  }

  /// A metric customized into a spare one (as each traffic customization is made in the metric
  /// it replaced last time) is the metric customized afresh, made in the spare's own memory; a
  /// spare that a query still reads is left as that query sees it.
  @Test func aMetricMadeInASpareIsTheSameAndLeavesReadersAlone() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let slowdowns = Self.randomSlowdowns(engine, seed: 5)
    let make = { (slowdowns: RoadSlowdowns) in
      CustomizedCCH(cch: engine.hierarchy, graph: engine.turns, network: engine.network, slowdowns: slowdowns)
    }
    let address = { (metric: CustomizedCCH) in metric.up.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
    let freeFlow = make(.freeFlow)
    let fresh = make(slowdowns)
    #expect(Self.arrays(fresh) != Self.arrays(freeFlow))

    var spare: CustomizedCCH? = make(.freeFlow)
    let memory = address(spare!)
    let made = Self.customized(engine, slowdowns, spare: &spare).metric
    #expect(spare == nil)
    #expect(address(made) == memory)
    #expect(Self.arrays(made) == Self.arrays(fresh))

    var read: CustomizedCCH? = make(.freeFlow)
    let reader = read!
    let again = Self.customized(engine, slowdowns, spare: &read).metric
    #expect(Self.arrays(reader) == Self.arrays(freeFlow))
    #expect(Self.arrays(again) == Self.arrays(fresh))
  }

  @Test func aPacedCustomizationMakesTheSameMetricAndRestsBetweenSlices() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let slowdowns = Self.randomSlowdowns(engine, seed: 7)
    let unpaced = CustomizedCCH(
      cch: engine.hierarchy, graph: engine.turns, network: engine.network, slowdowns: slowdowns)
    let made = { (pace: CustomizationPace?, spare: CustomizedCCH?) in
      var spare = spare
      return Self.customized(engine, slowdowns, spare: &spare, pace: pace)
    }
    // Monaco's customization takes milliseconds: slices of 20 µs make it rest many times.
    let pace = CustomizationPace(share: 0.5, slice: .microseconds(20))
    let (fresh, freshRun) = made(pace, nil)
    #expect(Self.arrays(fresh) == Self.arrays(unpaced))
    #expect(freshRun.rests > 10)
    #expect(freshRun.rested > .zero)
    let (inSpare, spareRun) = made(pace, unpaced)
    #expect(Self.arrays(inSpare) == Self.arrays(unpaced))
    #expect(spareRun.rests > 10)
    // A whole core never rests, nor does a customization told to hurry (fleetd stopping waits
    // for it); without a pace, nothing is checked.
    #expect(made(CustomizationPace(share: 1, slice: .microseconds(20)), nil).1.rests == 0)
    let hurried = made(CustomizationPace(share: 0.5, slice: .microseconds(20)) { true }, unpaced)
    #expect(Self.arrays(hurried.0) == Self.arrays(unpaced))
    #expect(hurried.1.rests == 0)
    let (_, free) = made(nil, nil)
    #expect(free.rests == 0)
    #expect(free.rested == .zero)
    #expect(free.worked > .zero)
  }

  /// A metric customized into `spare` (if any) at `pace`, and what its pacer measured.
  static func customized(
    _ engine: RoutingEngine, _ slowdowns: RoadSlowdowns, spare: inout CustomizedCCH?, pace: CustomizationPace? = nil
  ) -> (metric: CustomizedCCH, run: CustomizationRun) {
    var pacer = Pacer(pace)
    let metric = CustomizedCCH(
      cch: engine.hierarchy, graph: engine.turns, network: engine.network, slowdowns: slowdowns, spare: &spare,
      pacer: &pacer)
    return (metric, pacer.finish())
  }

  /// About half the roads, picked at random, slowed by a random factor of 1 to 5.
  static func randomSlowdowns(_ engine: RoutingEngine, seed: UInt64) -> RoadSlowdowns {
    var random = FanTests.Seeded(state: seed)
    return RoadSlowdowns(
      factors: (0..<engine.network.edges.count * 2).map { _ in
        random.next() < 0.5 ? Float(1 + 4 * random.next()) : 1
      })
  }

  /// A metric's arrays, to compare two metrics whole.
  static func arrays(_ m: CustomizedCCH) -> [[Double]] {
    [m.up, m.down, m.upDuration, m.downDuration, m.upDistance, m.downDistance]
      + [m.upFirst, m.upSecond, m.downFirst, m.downSecond, m.upArc, m.downArc].map { $0.map(Double.init) }
  }

  @Test func matricesAgreeWithDijkstra() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let points = (0..<12).map { i in
      LatLng(latitude: 43.726 + Double(i % 4) * 0.006, longitude: 7.412 + Double(i / 4) * 0.012)
    }
    let matrix = try engine.matrix(sources: points, destinations: points)
    let positions = try engine.positions(points)
    for i in points.indices {
      for j in points.indices {
        let exact = engine.searchExactly(from: positions[i], to: positions[j])
        #expect((matrix.durations[i][j] == nil) == (exact == nil))
        if let exact, let duration = matrix.durations[i][j] {
          #expect(abs(duration - exact.duration) < 1e-6 || i == j, "\(i) → \(j)")
        }
      }
    }
  }

  @Test func theOrderIsAPermutationAndTheTopologyIsChordal() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let cch = engine.customized.cch
    #expect(Set(cch.rank).count == cch.rank.count)
    #expect((0..<cch.rank.count).allSatisfy { cch.byRank[Int(cch.rank[$0])] == $0 })
    // Inside the hierarchy nodes are ranks: every upward edge points to a higher one, the
    // parent is the lowest, and the upper neighbours of a node are pairwise connected.
    for v in 0..<cch.rank.count {
      let ups = cch.upEdges(Int32(v)).map { cch.upTarget[$0] }
      #expect(ups.allSatisfy { Int($0) > v })
      #expect(cch.treeParent[v] == ups.min() ?? -1)
      for u in ups {
        for w in ups where u < w {
          #expect(cch.edge(u, w) != nil)
        }
      }
    }
  }
}

/// What the comparison needs of a found path.
struct PathCost: Sendable {
  var weight: Double
  var duration: Double
  var distance: Double
  var edges: [Int32]

  init(_ path: FoundPath) {
    weight = path.weight
    duration = path.duration
    distance = path.distance
    edges = path.directedEdges
  }
}
