import FleetCore
import Testing

/// Points on a line, a metre a second: travel is the distance between them.
private func line(_ positions: [Double]) -> (Int, Int) -> Double? {
  { a, b in abs(positions[a] - positions[b]) }
}

/// The plan's stops as seen by the car: load after each, and who is aboard when.
private func replay(_ plan: RideSharing.Plan, _ vehicle: RideSharing.Vehicle, _ riders: [RideSharing.Rider])
  -> (maximumLoad: Int32, exclusiveShared: Bool)
{
  var load = vehicle.onboard
  var exclusive = vehicle.exclusiveOnboard
  var maximum = load
  var shared = false
  var aboard: Set<Int> = []
  for visit in plan.visits {
    switch visit {
    case .existing(let i):
      if vehicle.stops[i].exclusiveRiders > 0, !aboard.isEmpty { shared = true }
      load += vehicle.stops[i].passengers
      exclusive += vehicle.stops[i].exclusiveRiders
    case .pickup(let k):
      if exclusive > 0 { shared = true }
      load += riders[k].passengers
      aboard.insert(k)
    case .dropoff(let k):
      load -= riders[k].passengers
      aboard.remove(k)
    }
    maximum = max(maximum, load)
  }
  return (maximum, shared)
}

/// Every order of the stops, tried one by one: what the planner's search must agree with.
private func bruteForce(
  _ vehicle: RideSharing.Vehicle, _ riders: [RideSharing.Rider], _ travel: (Int, Int) -> Double?
) -> Double? {
  let visits: [RideSharing.Visit] =
    vehicle.stops.indices.map { .existing($0) } + riders.indices.flatMap { [.pickup($0), .dropoff($0)] }
  let baseline = RideSharing.baseline(vehicle, travel: travel)!.arrivals
  var best: Double?
  func permute(_ done: [RideSharing.Visit], _ left: [RideSharing.Visit]) {
    guard !left.isEmpty else {
      if let seconds = evaluate(done) { best = min(best ?? .infinity, seconds) }
      return
    }
    for (i, visit) in left.enumerated() {
      var rest = left
      rest.remove(at: i)
      permute(done + [visit], rest)
    }
  }
  func evaluate(_ order: [RideSharing.Visit]) -> Double? {
    var t = 0.0
    var at = vehicle.origin
    var load = vehicle.onboard
    var exclusive = vehicle.exclusiveOnboard
    var nextExisting = 0
    var pickedAt = [Double?](repeating: nil, count: riders.count)
    var dropped = [Bool](repeating: false, count: riders.count)
    for visit in order {
      switch visit {
      case .existing(let i):
        guard i == nextExisting else { return nil }
        nextExisting += 1
        let stop = vehicle.stops[i]
        t += travel(at, stop.point)!
        if let deadline = stop.deadline, t > max(deadline, baseline[i]) + 1e-6 { return nil }
        if stop.passengers > 0 { t += RideSharing.pickupDwellSeconds }
        guard stop.passengers <= 0 || load + stop.passengers <= vehicle.capacity else { return nil }
        guard stop.exclusiveRiders <= 0 || !pickedAt.indices.contains(where: { pickedAt[$0] != nil && !dropped[$0] })
        else { return nil }
        load += stop.passengers
        exclusive += stop.exclusiveRiders
        at = stop.point
      case .pickup(let k):
        let rider = riders[k]
        if !vehicle.backToBack, !vehicle.stops.isEmpty, nextExisting == vehicle.stops.count { return nil }
        // No new pickup while an EXCLUSIVE trip's stop is still ahead.
        if vehicle.stops[nextExisting...].contains(where: { $0.exclusiveRiders != 0 }) { return nil }
        t += travel(at, rider.pickup)!
        guard exclusive == 0, load + rider.passengers <= vehicle.capacity else { return nil }
        if let latest = rider.latestPickup, t > latest + 1e-6 { return nil }
        pickedAt[k] = t
        t += RideSharing.pickupDwellSeconds
        load += rider.passengers
        at = rider.pickup
      case .dropoff(let k):
        guard let picked = pickedAt[k] else { return nil }
        t += travel(at, riders[k].dropoff)!
        guard t - picked - RideSharing.pickupDwellSeconds <= riders[k].maximumAboard + 1e-6 else { return nil }
        load -= riders[k].passengers
        dropped[k] = true
        at = riders[k].dropoff
      }
    }
    return t
  }
  permute([], visits)
  return best
}

@Suite("Ride sharing: one vehicle's plan for a group of shared rides")
struct RideSharingTests {
  @Test func thePlanAgreesWithTryingEveryOrderOnRandomInstances() {
    var random = SystemRandomNumberGenerator()
    var pooled = 0
    for _ in 0..<300 {
      // Point 0 is the car; then its stops; then each rider's pickup and drop-off.
      let existing = Int.random(in: 0...2, using: &random)
      let riderCount = Int.random(in: 1...2, using: &random)
      var positions = [Double.random(in: 0...1000, using: &random)]
      var stops: [RideSharing.Stop] = []
      var onboard: Int32 = 0
      for i in 0..<existing {
        positions.append(Double.random(in: 0...3000, using: &random))
        // The car's own riders: some aboard (a drop-off), some still to pick up and drop.
        let boarding = i == 0 && existing == 2 && Bool.random(using: &random)
        let deadline = Bool.random(using: &random) ? Double.random(in: 100...4000, using: &random) : nil
        // Now and then an EXCLUSIVE rider still to be picked up (its pickup and drop-off together).
        let exclusive = boarding && Int.random(in: 0..<4, using: &random) == 0 ? 1 : 0
        if boarding {
          stops.append(
            RideSharing.Stop(point: positions.count - 1, passengers: 1, exclusiveRiders: exclusive, deadline: deadline))
        } else {
          let boardedBefore = i == 1 && stops[0].passengers > 0
          stops.append(
            RideSharing.Stop(
              point: positions.count - 1, passengers: -1,
              exclusiveRiders: boardedBefore ? -stops[0].exclusiveRiders : 0,
              deadline: deadline))
          // A drop-off whose rider boards at the stop before is not aboard yet.
          if !boardedBefore { onboard += 1 }
        }
      }
      var riders: [RideSharing.Rider] = []
      for _ in 0..<riderCount {
        positions.append(Double.random(in: 0...3000, using: &random))
        positions.append(Double.random(in: 0...3000, using: &random))
        let direct = abs(positions[positions.count - 1] - positions[positions.count - 2])
        riders.append(
          RideSharing.Rider(
            pickup: positions.count - 2, dropoff: positions.count - 1,
            passengers: Int32.random(in: 1...2, using: &random),
            latestPickup: Bool.random(using: &random) ? Double.random(in: 200...3000, using: &random) : nil,
            maximumAboard: direct * Double.random(in: 1...2, using: &random)))
      }
      let vehicle = RideSharing.Vehicle(
        origin: 0, capacity: Int32.random(in: 2...4, using: &random), onboard: onboard, stops: stops,
        backToBack: Bool.random(using: &random))
      let travel = line(positions)
      let plan = RideSharing.bestPlan(vehicle, riders: riders, travel: travel)
      let brute = bruteForce(vehicle, riders, travel)
      #expect(
        plan?.seconds.rounded() == brute?.rounded(), "positions \(positions), vehicle \(vehicle), riders \(riders)")
      if let plan {
        let replayed = replay(plan, vehicle, riders)
        #expect(replayed.maximumLoad <= vehicle.capacity)
        #expect(!replayed.exclusiveShared)
        for (k, rider) in riders.enumerated() {
          #expect(plan.dropoffs[k] - plan.pickups[k] - RideSharing.pickupDwellSeconds <= rider.maximumAboard + 1e-6)
          if let latest = rider.latestPickup { #expect(plan.pickups[k] <= latest + 1e-6) }
        }
        if riders.count == 2 { pooled += 1 }
      }
    }
    // The instances are not all infeasible: the comparison says something.
    #expect(pooled > 20)
  }

  @Test func nobodyBoardsBesideAnExclusiveRider() {
    // An EXCLUSIVE rider aboard, dropped at 1000; a new rider from 100 to 900 waits for that.
    let travel = line([0, 1000, 100, 900])
    let vehicle = RideSharing.Vehicle(
      origin: 0, capacity: 4, onboard: 1, exclusiveOnboard: 1,
      stops: [RideSharing.Stop(point: 1, passengers: -1, exclusiveRiders: -1)])
    let rider = RideSharing.Rider(pickup: 2, dropoff: 3, passengers: 1, latestPickup: nil, maximumAboard: 2000)
    let plan = RideSharing.bestPlan(vehicle, riders: [rider], travel: travel)
    #expect(plan?.visits == [.existing(0), .pickup(0), .dropoff(0)])
    // Without back-to-back the new rider cannot come after everything: no plan.
    var closed = vehicle
    closed.backToBack = false
    #expect(RideSharing.bestPlan(closed, riders: [rider], travel: travel) == nil)
  }

  @Test func nobodyIsPickedUpAheadOfAnExclusiveRiderStillToBoard() {
    // The car at 0 bound for an EXCLUSIVE rider at 500 going to 3000. A new rider from 100 to
    // 200 would end the route sooner first (the plan that ends soonest), but the EXCLUSIVE rider
    // was promised the car: the new one comes after, or not at all without back-to-back.
    let travel = line([0, 500, 3000, 100, 200])
    let vehicle = RideSharing.Vehicle(
      origin: 0, capacity: 4,
      stops: [
        RideSharing.Stop(point: 1, passengers: 1, exclusiveRiders: 1),
        RideSharing.Stop(point: 2, passengers: -1, exclusiveRiders: -1),
      ])
    let rider = RideSharing.Rider(pickup: 3, dropoff: 4, passengers: 1, latestPickup: nil, maximumAboard: 10_000)
    #expect(
      RideSharing.bestPlan(vehicle, riders: [rider], travel: travel)?.visits == [
        .existing(0), .existing(1), .pickup(0), .dropoff(0),
      ])
    var closed = vehicle
    closed.backToBack = false
    #expect(RideSharing.bestPlan(closed, riders: [rider], travel: travel) == nil)
    // The same for the one-rider insertion SearchVehicles uses.
    let seconds: [[Double?]] = (0..<5).map { a in (0..<5).map { b in travel(a, b) } }
    let insertion = CarpoolInsertion.cheapest(
      stops: [.init(passengers: 1, exclusiveRiders: 1), .init(passengers: -1, exclusiveRiders: -1)], onboard: 0,
      exclusiveOnboard: 0, capacity: 4, passengers: 1, seconds: seconds, allowAfterAll: true)
    #expect(insertion?.pickupIndex == 2 && insertion?.dropoffIndex == 2)
  }

  @Test func aRiderAboardIsNotDroppedLaterThanPromisedForANewPickup() {
    // Aboard: drop-off at 1000, due by 1050. A new rider at 600 going to 2000: picking them up
    // on the way costs the dwell (30 s), so the drop-off would be at 1030: allowed. Due by
    // 1010, the new rider is picked up after the drop-off.
    let travel = line([0, 1000, 600, 2000])
    let rider = RideSharing.Rider(pickup: 2, dropoff: 3, passengers: 1, latestPickup: nil, maximumAboard: 5000)
    for (deadline, expected) in [
      (1050.0, [RideSharing.Visit.pickup(0), .existing(0), .dropoff(0)]),
      (1010, [.existing(0), .pickup(0), .dropoff(0)]),
    ] {
      let vehicle = RideSharing.Vehicle(
        origin: 0, capacity: 4, onboard: 1, stops: [RideSharing.Stop(point: 1, passengers: -1, deadline: deadline)])
      #expect(RideSharing.bestPlan(vehicle, riders: [rider], travel: travel)?.visits == expected)
    }
    // A drop-off already late may stay as late but no later: nothing is picked up before it.
    let late = RideSharing.Vehicle(
      origin: 0, capacity: 4, onboard: 1, stops: [RideSharing.Stop(point: 1, passengers: -1, deadline: 500)])
    #expect(
      RideSharing.bestPlan(late, riders: [rider], travel: travel)?.visits == [.existing(0), .pickup(0), .dropoff(0)])
  }

  @Test func theCarsSeatsAndTheDetourBoundHold() {
    // Two riders of three each in a four-seat car: one after the other.
    let travel = line([0, 100, 1000, 200, 1100])
    let riders = [
      RideSharing.Rider(pickup: 1, dropoff: 2, passengers: 3, latestPickup: nil, maximumAboard: 5000),
      RideSharing.Rider(pickup: 3, dropoff: 4, passengers: 3, latestPickup: nil, maximumAboard: 5000),
    ]
    let vehicle = RideSharing.Vehicle(origin: 0, capacity: 4)
    let plan = RideSharing.bestPlan(vehicle, riders: riders, travel: travel)
    #expect(plan?.visits == [.pickup(0), .dropoff(0), .pickup(1), .dropoff(1)])
    // Two of one each, the first's direct drive 900 s. Picking the second up on the way costs
    // it 30 s (the second's dwell): within a bound of 950 s aboard.
    func pair(_ bound: Double) -> [RideSharing.Rider] {
      [
        RideSharing.Rider(pickup: 1, dropoff: 2, passengers: 1, latestPickup: nil, maximumAboard: bound),
        RideSharing.Rider(pickup: 3, dropoff: 4, passengers: 1, latestPickup: nil, maximumAboard: 5000),
      ]
    }
    let fitted = RideSharing.bestPlan(vehicle, riders: pair(950), travel: travel)
    #expect(fitted?.visits == [.pickup(0), .pickup(1), .dropoff(0), .dropoff(1)])
    #expect(fitted.map { $0.dropoffs[0] - $0.pickups[0] - RideSharing.pickupDwellSeconds } == 930)
    // Within 920 s the second is picked up first, so that the first rides direct.
    let first = RideSharing.bestPlan(vehicle, riders: pair(920), travel: travel)
    #expect(first?.visits == [.pickup(1), .pickup(0), .dropoff(0), .dropoff(1)])
    #expect(first.map { $0.dropoffs[0] - $0.pickups[0] - RideSharing.pickupDwellSeconds } == 900)
    // Less than the direct drive: no plan at all.
    #expect(RideSharing.bestPlan(vehicle, riders: pair(899), travel: travel) == nil)
  }
}
