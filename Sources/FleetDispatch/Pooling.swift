import FleetCore

/// Which vehicle serves which rides in one round when some rides may share: the assignment step
/// of the request–trip–vehicle method. Groups of two or more shared rides are taken first,
/// largest first and, among groups of one size, cheapest per rider first, each when its vehicle
/// and its riders are still free (Alonso-Mora et al.'s greedy assignment); every ride left is
/// then matched one to one by the policy (batched: exactly) over the vehicles left. Pure.
public enum Pooling {
  public enum Choice: Sendable, Hashable {
    /// Shared rides (one or more) in one vehicle with the option's stop order.
    case shared(SharedOption)
    /// Ride `r` with a one-to-one option.
    case single(Int, DispatchOption)
  }

  /// - Parameters:
  ///   - rides: how many rides the round matches.
  ///   - shared: the shared rides' options, any size (`Fleet.sharedDispatchOptions`).
  ///   - oneToOne: per ride, its options when it does not pool (empty for shared rides).
  ///   - waitCosts: per ride, what serving it now is worth in seconds of pickup when not every
  ///     ride can be served (`Assignment.optimal`); empty: nothing.
  public static func plan(
    rides: Int, shared: [SharedOption], oneToOne: [[DispatchOption]], policy: DispatchPolicy,
    waitCosts: [Double] = []
  ) -> [Choice] {
    var usedVehicles: Set<String> = []
    var served = [Bool](repeating: false, count: rides)
    var choices: [Choice] = []
    if policy == .batched {
      let groups = shared.filter { $0.rides.count > 1 }.sorted { a, b in
        let (keyA, keyB) = (
          (-a.rides.count, a.cost / Double(a.rides.count)), (-b.rides.count, b.cost / Double(b.rides.count))
        )
        if keyA != keyB { return keyA < keyB }
        return a.vehicleID != b.vehicleID ? a.vehicleID < b.vehicleID : a.rides.lexicographicallyPrecedes(b.rides)
      }
      for group in groups where !usedVehicles.contains(group.vehicleID) && group.rides.allSatisfy({ !served[$0] }) {
        usedVehicles.insert(group.vehicleID)
        for r in group.rides { served[r] = true }
        choices.append(.shared(group))
      }
    }
    // One to one: a shared ride alone (maybe among a car's other riders), or any other ride.
    var singles = [[(vehicle: String, choice: Choice, cost: Double)]](repeating: [], count: rides)
    for option in shared where option.rides.count == 1 && !served[option.rides[0]] {
      singles[option.rides[0]].append((option.vehicleID, .shared(option), option.pickupSeconds[0]))
    }
    for (r, options) in oneToOne.enumerated() where !served[r] {
      for option in options { singles[r].append((option.vehicleID, .single(r, option), option.pickupSeconds)) }
    }
    var vehicleIndex: [String: Int] = [:]
    var vehicleIDs: [String] = []
    let candidates = singles.map { list in
      list.compactMap { entry -> (vehicle: Int, cost: Double)? in
        guard !usedVehicles.contains(entry.vehicle) else { return nil }
        if vehicleIndex[entry.vehicle] == nil {
          vehicleIndex[entry.vehicle] = vehicleIDs.count
          vehicleIDs.append(entry.vehicle)
        }
        return (vehicleIndex[entry.vehicle]!, entry.cost)
      }
    }
    let pairs = Assignment.solve(candidates, vehicles: vehicleIDs.count, policy: policy, waitCosts: waitCosts)
    for (r, v) in pairs.enumerated() {
      guard let v, let entry = singles[r].first(where: { $0.vehicle == vehicleIDs[v] }) else { continue }
      choices.append(entry.choice)
    }
    return choices
  }
}
