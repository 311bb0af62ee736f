/// Which vehicle serves which ride in one round. Pure: costs in, pairs out.
public enum Assignment {
  /// One ride's candidates: each vehicle that can serve it and its cost (seconds to the pickup).
  public typealias Candidates = [(vehicle: Int, cost: Double)]

  /// `costs[ride][vehicle]`: seconds to the pickup, nil where the vehicle cannot serve the ride.
  /// Returns the vehicle chosen for each ride, nil where none is.
  public static func solve(_ costs: [[Double?]], policy: DispatchPolicy) -> [Int?] {
    solve(sparse(costs), vehicles: costs.map(\.count).max() ?? 0, policy: policy)
  }

  /// The same over each ride's candidates alone: a round's cost follows the candidates found,
  /// not rides × fleet. `waitCosts` (batched only): per ride, the seconds of pickup drive that
  /// serving it this round is worth over serving another, when not every ride can be served.
  public static func solve(
    _ candidates: [Candidates], vehicles: Int, policy: DispatchPolicy, waitCosts: [Double] = []
  ) -> [Int?] {
    switch policy {
    case .batched: optimal(candidates, vehicles: vehicles, waitCosts: waitCosts)
    case .greedy: greedy(candidates, vehicles: vehicles)
    }
  }

  static func sparse(_ costs: [[Double?]]) -> [Candidates] {
    costs.map { row in row.indices.compactMap { v in row[v].map { (vehicle: v, cost: $0) } } }
  }

  public static func greedy(_ costs: [[Double?]]) -> [Int?] {
    greedy(sparse(costs), vehicles: costs.map(\.count).max() ?? 0)
  }

  /// Rides in order, each taking the cheapest vehicle still free.
  public static func greedy(_ candidates: [Candidates], vehicles: Int) -> [Int?] {
    var taken = [Bool](repeating: false, count: vehicles)
    return candidates.map { row in
      let best = row.filter { !taken[$0.vehicle] }.min { ($0.cost, $0.vehicle) < ($1.cost, $1.vehicle) }
      if let best { taken[best.vehicle] = true }
      return best?.vehicle
    }
  }

  public static func optimal(_ costs: [[Double?]], waitCosts: [Double] = []) -> [Int?] {
    optimal(sparse(costs), vehicles: costs.map(\.count).max() ?? 0, waitCosts: waitCosts)
  }

  /// The most rides served and, among such assignments, the least total cost: the assignment
  /// problem solved exactly by successive shortest paths with potentials (the Hungarian method
  /// on a sparse graph, Dijkstra over only the candidate edges). Every ride also has a column of
  /// its own meaning "unserved", priced above any whole assignment's cost, so serving one more
  /// ride always beats saving time on the others. O(rides · E log E) for E candidate pairs,
  /// whatever the fleet's size.
  ///
  /// `waitCosts[r]` (non-negative; none: all 0) raises ride r's "unserved" price above the
  /// others': when there are more rides than cars, those that waited longest are served first
  /// unless another is more than the difference nearer, so that no ride waits for ever behind
  /// newer ones that happen to be closer to where cars free up.
  public static func optimal(_ candidates: [Candidates], vehicles: Int, waitCosts: [Double] = []) -> [Int?] {
    let rides = candidates.count
    guard rides > 0 else { return [] }
    precondition(waitCosts.isEmpty || waitCosts.count == rides, "one wait cost per ride")
    let worst = candidates.lazy.flatMap { $0.map(\.cost) }.max() ?? 0
    let waitCost = { (ride: Int) in waitCosts.isEmpty ? 0 : max(0, waitCosts[ride]) }
    // Above any difference the served rides' costs and the other unserved rides' wait costs
    // can make, so that serving one more ride still always wins.
    let unserved = (worst + max(0, waitCosts.max() ?? 0) + 1) * Double(rides + 1)
    // Columns: the vehicles, then one "unserved" column per ride.
    let columns = vehicles + rides
    var rowPotential = [Double](repeating: 0, count: rides)
    var columnPotential = [Double](repeating: 0, count: columns)
    var rowOf = [Int](repeating: -1, count: columns)
    var columnOf = [Int](repeating: -1, count: rides)
    // Per search, reset through the columns it touched.
    var distance = [Double](repeating: .infinity, count: columns)
    var settled = [Bool](repeating: false, count: columns)
    var reachedFrom = [Int](repeating: -1, count: columns)
    var touched: [Int] = []
    var heap = MinHeap()

    for start in 0..<rides {
      var settledOrder: [Int] = []
      var row = start
      var base = 0.0
      var found = -1
      while true {
        func relax(_ column: Int, _ cost: Double) {
          guard !settled[column] else { return }
          let d = base + cost - rowPotential[row] - columnPotential[column]
          if d < distance[column] {
            if distance[column] == .infinity { touched.append(column) }
            distance[column] = d
            reachedFrom[column] = row
            heap.push(d, column)
          }
        }
        for candidate in candidates[row] { relax(candidate.vehicle, candidate.cost) }
        relax(vehicles + row, unserved + waitCost(row))
        var next = -1
        while let (d, column) = heap.pop() {
          if settled[column] || d > distance[column] { continue }
          next = column
          break
        }
        // The ride's own "unserved" column is always free, so a search always ends.
        guard next >= 0 else { break }
        settled[next] = true
        settledOrder.append(next)
        if rowOf[next] < 0 {
          found = next
          break
        }
        row = rowOf[next]
        base = distance[next]
      }
      let total = distance[found]
      // Potentials: each column settled before the end, and the row matched to it, move by how
      // much sooner it was reached; the reduced cost of every edge stays non-negative.
      for column in settledOrder where column != found {
        let slack = total - distance[column]
        columnPotential[column] -= slack
        rowPotential[rowOf[column]] += slack
      }
      rowPotential[start] += total
      // Augment along the path back to the start.
      var column = found
      while column >= 0 {
        let from = reachedFrom[column]
        let previous = columnOf[from]
        rowOf[column] = from
        columnOf[from] = column
        column = from == start ? -1 : previous
      }
      for column in touched {
        distance[column] = .infinity
        settled[column] = false
        reachedFrom[column] = -1
      }
      touched.removeAll(keepingCapacity: true)
      heap.removeAll()
    }
    return columnOf.map { $0 >= 0 && $0 < vehicles ? $0 : nil }
  }
}

/// A binary min-heap of (distance, column).
struct MinHeap {
  private var items: [(Double, Int)] = []

  mutating func push(_ key: Double, _ value: Int) {
    items.append((key, value))
    var i = items.count - 1
    while i > 0 {
      let parent = (i - 1) / 2
      guard items[i].0 < items[parent].0 else { break }
      items.swapAt(i, parent)
      i = parent
    }
  }

  mutating func pop() -> (Double, Int)? {
    guard let top = items.first else { return nil }
    let last = items.removeLast()
    if !items.isEmpty {
      items[0] = last
      var i = 0
      while true {
        let left = 2 * i + 1
        let right = left + 1
        var smallest = i
        if left < items.count, items[left].0 < items[smallest].0 { smallest = left }
        if right < items.count, items[right].0 < items[smallest].0 { smallest = right }
        guard smallest != i else { break }
        items.swapAt(i, smallest)
        i = smallest
      }
    }
    return top
  }

  mutating func removeAll() { items.removeAll(keepingCapacity: true) }
}
