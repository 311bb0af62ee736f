import FleetDispatch
import Testing

@Suite("Assignment")
struct AssignmentTests {
  struct Seeded {
    var state: UInt64
    mutating func next(_ n: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(n))
    }
  }

  /// Every assignment of rides to distinct vehicles (or to none): the most rides served, then
  /// the least total cost, where a ride left unserved costs its wait cost.
  func bruteForce(_ costs: [[Double?]], waitCosts: [Double] = []) -> (served: Int, total: Double) {
    let vehicles = costs.first?.count ?? 0
    var best = (served: 0, total: Double.infinity)
    func visit(_ ride: Int, _ used: Set<Int>, _ served: Int, _ total: Double) {
      if ride == costs.count {
        if served > best.served || (served == best.served && total < best.total) { best = (served, total) }
        return
      }
      visit(ride + 1, used, served, total + (waitCosts.isEmpty ? 0 : waitCosts[ride]))
      for v in 0..<vehicles where !used.contains(v) {
        if let cost = costs[ride][v] { visit(ride + 1, used.union([v]), served + 1, total + cost) }
      }
    }
    visit(0, [], 0, 0)
    return best
  }

  func evaluate(_ costs: [[Double?]], _ chosen: [Int?], waitCosts: [Double] = []) -> (served: Int, total: Double) {
    #expect(Set(chosen.compactMap { $0 }).count == chosen.compactMap { $0 }.count, "a vehicle used twice")
    var total = 0.0
    for (r, v) in chosen.enumerated() {
      guard let v else {
        total += waitCosts.isEmpty ? 0 : waitCosts[r]
        continue
      }
      let cost = costs[r][v]
      #expect(cost != nil, "ride \(r) given vehicle \(v) that cannot serve it")
      total += cost ?? 0
    }
    return (chosen.compactMap { $0 }.count, total)
  }

  /// Up to `rides` × `vehicles` costs of 1-600 s, a quarter of the pairs unable to serve.
  func randomCosts(_ random: inout Seeded, rides: Int, vehicles: Int) -> [[Double?]] {
    let (rides, vehicles) = (1 + random.next(rides), 1 + random.next(vehicles))
    return (0..<rides).map { _ in
      (0..<vehicles).map { _ -> Double? in random.next(4) == 0 ? nil : Double(1 + random.next(600)) }
    }
  }

  @Test func theHungarianMethodFindsTheBestAssignmentOnRandomInstances() {
    var random = Seeded(state: 7)
    for _ in 0..<300 {
      let costs = randomCosts(&random, rides: 6, vehicles: 6)
      let optimal = evaluate(costs, Assignment.optimal(costs))
      let best = bruteForce(costs)
      #expect(optimal.served == best.served, "\(costs)")
      #expect(abs(optimal.total - best.total) < 1e-9, "\(costs)")
      let greedy = evaluate(costs, Assignment.greedy(costs))
      #expect(greedy.served <= best.served)
    }
  }

  @Test func ridesLeftWaitingCostTheirWaitsAndTheMostRidesAreStillServed() {
    var random = Seeded(state: 11)
    for _ in 0..<300 {
      let costs = randomCosts(&random, rides: 6, vehicles: 4)
      let waits = costs.map { _ in Double(random.next(900)) }
      let chosen = evaluate(costs, Assignment.optimal(costs, waitCosts: waits), waitCosts: waits)
      let best = bruteForce(costs, waitCosts: waits)
      #expect(chosen.served == best.served, "\(costs) \(waits)")
      #expect(abs(chosen.total - best.total) < 1e-9, "\(costs) \(waits)")
    }
  }

  @Test func oneCarGoesToTheRideThatWaitedLongestUnlessAnotherIsNearerByMore() {
    // One car: ride 0 has waited 100 s and is 50 s away; ride 1 just came and is 10 s away.
    let costs: [[Double?]] = [[50], [10]]
    #expect(Assignment.optimal(costs) == [nil, 0])
    #expect(Assignment.optimal(costs, waitCosts: [100, 0]) == [0, nil])
    // Nearer by more than the difference in waits: the new ride still gets it.
    #expect(Assignment.optimal(costs, waitCosts: [30, 0]) == [nil, 0])
    let lists: [Assignment.Candidates] = [[(vehicle: 0, cost: 50)], [(vehicle: 0, cost: 10)]]
    #expect(Assignment.solve(lists, vehicles: 1, policy: .batched, waitCosts: [100, 0]) == [0, nil])
    // Greedy takes the rides in their order (longest waiting first) and ignores the costs.
    #expect(Assignment.solve(lists, vehicles: 1, policy: .greedy, waitCosts: [0, 100]) == [0, nil])
  }

  @Test func greedyTakesTheNearestForTheFirstRideBatchedLooksAtAll() {
    // Ride 0 (waiting longest) is 100 s from A and 120 s from B; ride 1 is 100 s from A only.
    let costs: [[Double?]] = [[100, 120], [100, nil]]
    #expect(Assignment.greedy(costs) == [0, nil])
    #expect(Assignment.optimal(costs) == [1, 0])
    #expect(Assignment.solve(costs, policy: .batched) == [1, 0])
    #expect(Assignment.solve(costs, policy: .greedy) == [0, nil])
    #expect(Assignment.optimal([]) == [])
    #expect(Assignment.optimal([[nil, nil]]) == [nil])
  }
}
