import Foundation

/// Orders a delivery vehicle's stops: one route from where the vehicle is through every stop,
/// each with its time at the stop and its time window, as short as the windows allow.
///
/// The cost of an order is its driving seconds plus `latenessWeight` times the seconds each stop
/// is reached after its window closes; reaching a stop before its window opens means waiting
/// there (time passes, no cost). The heuristic: cheapest insertion (each stop, in the order of its
/// window's end, put where it adds least), then local search until no move improves the order:
/// moving one stop or a run of two or three elsewhere, reversed or not (or-opt), two stops
/// trading places, and reversing a stretch (2-opt).
/// Every move is evaluated on the whole order, so the windows are always respected exactly.
public struct StopOrdering: Sendable {
  public struct Stop: Sendable, Hashable {
    /// Seconds spent at the stop (its tasks' durations).
    public var service: Double
    /// The window, in seconds from the start; nil ends are open.
    public var windowStart: Double?
    public var windowEnd: Double?

    public init(service: Double, windowStart: Double? = nil, windowEnd: Double? = nil) {
      self.service = service
      self.windowStart = windowStart
      self.windowEnd = windowEnd
    }
  }

  /// What an order costs and does.
  public struct Measures: Sendable, Hashable {
    public var driveSeconds: Double
    public var driveMetres: Double
    /// Stops reached after their window closed, and by how many seconds in all.
    public var violations: Int
    public var lateSeconds: Double
    /// Seconds from the start until the last stop's work is done.
    public var finishSeconds: Double
    /// Drive seconds plus the lateness penalty: what the search minimises.
    public var cost: Double
  }

  public var stops: [Stop]
  /// Drives in seconds and metres between the vehicle (index 0) and the stops (index i + 1);
  /// `.infinity` where there is no route.
  public var seconds: [[Double]]
  public var metres: [[Double]]
  /// Stops that keep their places at the front (the one under way or reached).
  public var fixedPrefix: [Int]
  /// Seconds of penalty per second late: lateness costs far more than driving.
  public var latenessWeight: Double = 10
  /// How long the local search may run; past it, the best order found so far is the answer
  /// (every order it holds keeps all the stops). nil: until no move improves.
  public var timeLimit: Duration?

  public init(stops: [Stop], seconds: [[Double]], metres: [[Double]], fixedPrefix: [Int] = []) {
    self.stops = stops
    self.seconds = seconds
    self.metres = metres
    self.fixedPrefix = fixedPrefix
  }

  /// What visiting the stops in `order` (stop indices) costs.
  public func measure(_ order: [Int]) -> Measures {
    var time = 0.0
    var drive = 0.0
    var distance = 0.0
    var late = 0.0
    var violations = 0
    var at = 0
    for stop in order {
      let node = stop + 1
      time += seconds[at][node]
      drive += seconds[at][node]
      distance += metres[at][node]
      let s = stops[stop]
      if let opens = s.windowStart, time < opens { time = opens }
      if let closes = s.windowEnd, time > closes {
        late += time - closes
        violations += 1
      }
      time += s.service
      at = node
    }
    return Measures(
      driveSeconds: drive, driveMetres: distance, violations: violations, lateSeconds: late, finishSeconds: time,
      cost: drive + latenessWeight * late)
  }

  /// The heuristic's order of every stop, the fixed ones first.
  public func solve() -> [Int] {
    let fixed = Set(fixedPrefix)
    let free = stops.indices.filter { !fixed.contains($0) }
    // Cheapest insertion, the stops whose windows close first placed first.
    let byDeadline = free.sorted { (stops[$0].windowEnd ?? .infinity, $0) < (stops[$1].windowEnd ?? .infinity, $1) }
    var order = fixedPrefix
    for stop in byDeadline {
      var best = (cost: Double.infinity, at: order.count)
      for at in fixedPrefix.count...order.count {
        var candidate = order
        candidate.insert(stop, at: at)
        let cost = measure(candidate).cost
        if cost < best.cost { best = (cost, at) }
      }
      order.insert(stop, at: best.at)
    }
    return improve(order)
  }

  /// Local search: or-opt moves of runs of one to three stops, exchanges and 2-opt reversals,
  /// until none improves (or a bound on passes, or the time limit, is reached).
  func improve(_ start: [Int]) -> [Int] {
    var order = start
    var cost = measure(order).cost
    let first = fixedPrefix.count
    let n = order.count
    guard n - first >= 2 else { return order }
    let deadline = timeLimit.map { ContinuousClock.now + $0 }
    let outOfTime = { deadline.map { ContinuousClock.now >= $0 } ?? false }
    for _ in 0..<50 where !outOfTime() {
      var improved = false
      // Or-opt: a run [i, i + length) moved to before position j of what is left.
      for length in 1...3 where n - first > length {
        var i = first
        while i + length <= n, !outOfTime() {
          let run = Array(order[i..<(i + length)])
          var rest = order
          rest.removeSubrange(i..<(i + length))
          search: for j in first...rest.count {
            // The run as it was, or reversed.
            for piece in length > 1 ? [run, run.reversed()] : [run] where j != i || piece != run {
              var candidate = rest
              candidate.insert(contentsOf: piece, at: j)
              let c = measure(candidate).cost
              if c < cost - 1e-9 {
                order = candidate
                cost = c
                improved = true
                break search
              }
            }
          }
          i += 1
        }
      }
      // Exchange: two stops trade places.
      for i in first..<(n - 1) where !outOfTime() {
        for j in (i + 1)..<n {
          var candidate = order
          candidate.swapAt(i, j)
          let c = measure(candidate).cost
          if c < cost - 1e-9 {
            order = candidate
            cost = c
            improved = true
          }
        }
      }
      // 2-opt: the stretch [i, j] reversed.
      for i in first..<(n - 1) where !outOfTime() {
        for j in (i + 1)..<n {
          var candidate = order
          candidate[i...j].reverse()
          let c = measure(candidate).cost
          if c < cost - 1e-9 {
            order = candidate
            cost = c
            improved = true
          }
        }
      }
      if !improved { break }
    }
    return order
  }

  /// A lower bound on the driving seconds of any order, the better of two: each stop is driven
  /// to once, so no order drives less than the cheapest way into each stop; and an order is a
  /// path through the vehicle and every stop, so it drives no less than a minimum spanning tree
  /// over them, each pair at its cheaper direction. The fixed stops count in their places.
  public func driveLowerBound() -> Double {
    let fixed = Set(fixedPrefix)
    var prefix = 0.0
    var at = 0
    for stop in fixedPrefix {
      prefix += seconds[at][stop + 1]
      at = stop + 1
    }
    let free = stops.indices.filter { !fixed.contains($0) }.map { $0 + 1 }
    // Cheapest way into each free stop: from where the fixed ones end, or another free stop.
    var cheapestIn = 0.0
    for node in free {
      var cheapest = seconds[at][node]
      for other in free where other != node { cheapest = min(cheapest, seconds[other][node]) }
      cheapestIn += cheapest
    }
    // Prim's tree over `at` and the free stops.
    let nodes = [at] + free
    var inTree = [Bool](repeating: false, count: nodes.count)
    var reach = [Double](repeating: .infinity, count: nodes.count)
    reach[0] = 0
    var tree = 0.0
    for _ in nodes.indices {
      var next = -1
      for i in nodes.indices where !inTree[i] && (next < 0 || reach[i] < reach[next]) { next = i }
      inTree[next] = true
      tree += reach[next]
      for i in nodes.indices where !inTree[i] {
        reach[i] = min(reach[i], seconds[nodes[next]][nodes[i]], seconds[nodes[i]][nodes[next]])
      }
    }
    return prefix + max(cheapestIn, tree)
  }
}
