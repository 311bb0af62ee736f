/// Which vehicle serves which ride in one round. Pure: costs in, pairs out.
public enum Assignment {
  /// `costs[ride][vehicle]`: seconds to the pickup, nil where the vehicle cannot serve the ride.
  /// Returns the vehicle chosen for each ride, nil where none is.
  public static func solve(_ costs: [[Double?]], policy: DispatchPolicy) -> [Int?] {
    switch policy {
    case .batched: optimal(costs)
    case .greedy: greedy(costs)
    }
  }

  /// Rides in order, each taking the cheapest vehicle still free.
  public static func greedy(_ costs: [[Double?]]) -> [Int?] {
    var taken = Set<Int>()
    return costs.map { row in
      let best = row.indices.filter { row[$0] != nil && !taken.contains($0) }.min {
        (row[$0]!, $0) < (row[$1]!, $1)
      }
      if let best { taken.insert(best) }
      return best
    }
  }

  /// The most rides served and, among such assignments, the least total cost: the assignment
  /// problem solved exactly by the Hungarian method with potentials (Kuhn–Munkres, O(n²m)).
  /// Every ride also gets a column of its own meaning "unserved", priced above any whole
  /// assignment's cost, so serving one more ride always beats saving time on the others.
  public static func optimal(_ costs: [[Double?]]) -> [Int?] {
    let rides = costs.count
    guard rides > 0 else { return [] }
    let vehicles = costs.map(\.count).max() ?? 0
    let worst = costs.flatMap { $0.compactMap { $0 } }.max() ?? 0
    let unserved = (worst + 1) * Double(rides + 1)
    let forbidden = unserved * 4
    let columns = vehicles + rides
    func cost(_ r: Int, _ c: Int) -> Double {
      if c < vehicles { return c < costs[r].count ? (costs[r][c] ?? forbidden) : forbidden }
      return unserved
    }
    // 1-based arrays as in the classic formulation; column 0 is the virtual start.
    var u = [Double](repeating: 0, count: rides + 1)
    var v = [Double](repeating: 0, count: columns + 1)
    var rowOf = [Int](repeating: 0, count: columns + 1)
    var way = [Int](repeating: 0, count: columns + 1)
    for r in 1...rides {
      rowOf[0] = r
      var column = 0
      var least = [Double](repeating: .infinity, count: columns + 1)
      var used = [Bool](repeating: false, count: columns + 1)
      repeat {
        used[column] = true
        let row = rowOf[column]
        var delta = Double.infinity
        var next = 0
        for c in 1...columns where !used[c] {
          let reduced = cost(row - 1, c - 1) - u[row] - v[c]
          if reduced < least[c] {
            least[c] = reduced
            way[c] = column
          }
          if least[c] < delta {
            delta = least[c]
            next = c
          }
        }
        for c in 0...columns {
          if used[c] {
            u[rowOf[c]] += delta
            v[c] -= delta
          } else {
            least[c] -= delta
          }
        }
        column = next
      } while rowOf[column] != 0
      repeat {
        let previous = way[column]
        rowOf[column] = rowOf[previous]
        column = previous
      } while column != 0
    }
    var chosen = [Int?](repeating: nil, count: rides)
    for c in 1...columns where rowOf[c] != 0 && c - 1 < vehicles {
      let r = rowOf[c] - 1
      if c - 1 < costs[r].count, costs[r][c - 1] != nil { chosen[r] = c - 1 }
    }
    return chosen
  }
}
