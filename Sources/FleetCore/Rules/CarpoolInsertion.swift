/// Where a shared trip's pickup and drop-off fit best into a vehicle's remaining stops: every
/// place that keeps the existing stops in their order is tried, and the one that adds the least
/// driving time wins, as long as the riders fit in the car and the new pickup comes after every
/// stop of an EXCLUSIVE trip (see `firstOpenStop`).
public struct CarpoolInsertion: Sendable, Hashable {
  /// A stop the vehicle already has, by what it changes on board.
  public struct Stop: Sendable, Hashable {
    /// Passengers boarding (positive) or leaving (negative).
    public var passengers: Int32
    /// +1 where an EXCLUSIVE trip's rider boards, −1 where they leave.
    public var exclusiveRiders: Int

    public init(passengers: Int32, exclusiveRiders: Int = 0) {
      self.passengers = passengers
      self.exclusiveRiders = exclusiveRiders
    }
  }

  /// The pickup goes before `stops[pickupIndex]`, the drop-off before `stops[dropoffIndex]`
  /// (after the pickup); an index equal to the number of stops means at the end.
  public var pickupIndex: Int
  public var dropoffIndex: Int
  /// The whole route's driving time with the trip in it.
  public var seconds: Double

  public init(pickupIndex: Int, dropoffIndex: Int, seconds: Double) {
    self.pickupIndex = pickupIndex
    self.dropoffIndex = dropoffIndex
    self.seconds = seconds
  }

  /// - Parameters:
  ///   - stops: the vehicle's remaining stops, in order.
  ///   - onboard: passengers in the car now; `exclusiveOnboard`: EXCLUSIVE riders among them.
  ///   - seconds: drive times between points 0 (the vehicle), 1…n (the stops), n+1 (the new
  ///     pickup) and n+2 (the new drop-off); nil where there is no route.
  ///   - allowAfterAll: whether the pickup may come after every stop (a back-to-back match).
  public static func cheapest(
    stops: [Stop], onboard: Int32, exclusiveOnboard: Int, capacity: Int32, passengers: Int32,
    seconds: [[Double?]], allowAfterAll: Bool
  ) -> CarpoolInsertion? {
    let n = stops.count
    let pickup = n + 1
    let dropoff = n + 2
    // Load and exclusive riders after the first k stops.
    var load = [onboard]
    var exclusive = [exclusiveOnboard]
    for stop in stops {
      load.append(load.last! + stop.passengers)
      exclusive.append(exclusive.last! + stop.exclusiveRiders)
    }
    var best: CarpoolInsertion?
    for i in firstOpenStop(stops.map(\.exclusiveRiders))...n where i < n || allowAfterAll {
      // The new rider boards after i stops: the car must have room and carry no EXCLUSIVE rider.
      guard load[i] + passengers <= capacity, exclusive[i] == 0 else { continue }
      for j in i...n {
        if j > i {
          // Still on board after stop j - 1.
          guard load[j] + passengers <= capacity, exclusive[j] == 0 else { break }
        }
        var order: [Int] = [0]
        order.append(contentsOf: (0..<i).map { $0 + 1 })
        order.append(pickup)
        order.append(contentsOf: (i..<j).map { $0 + 1 })
        order.append(dropoff)
        order.append(contentsOf: (j..<n).map { $0 + 1 })
        var total = 0.0
        var reachable = true
        for (a, b) in zip(order, order.dropFirst()) {
          guard let leg = seconds[a][b] else {
            reachable = false
            break
          }
          total += leg
        }
        guard reachable else { continue }
        if total < (best?.seconds ?? .infinity) {
          best = CarpoolInsertion(pickupIndex: i, dropoffIndex: j, seconds: total)
        }
      }
    }
    return best
  }

  /// The stops in their new order: the existing ones as their indices, the new pickup and
  /// drop-off as `pickup` and `dropoff`.
  public func order<T>(_ stops: [T], pickup: T, dropoff: T) -> [T] {
    Array(stops[..<pickupIndex]) + [pickup] + Array(stops[pickupIndex..<dropoffIndex]) + [dropoff]
      + Array(stops[dropoffIndex...])
  }
}

/// How many of a vehicle's stops must come before any new rider's pickup: all up to the last
/// stop of an EXCLUSIVE trip. Its rider rides alone, and a pickup ahead of theirs would make a
/// rider who was promised the car wait on others — round after round, as new riders come.
func firstOpenStop(_ exclusiveRiders: [Int]) -> Int {
  (exclusiveRiders.lastIndex { $0 != 0 }).map { $0 + 1 } ?? 0
}
