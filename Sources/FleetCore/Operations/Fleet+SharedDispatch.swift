import FleetGeometry
import Foundation

/// One way to serve a group of shared rides with one vehicle: the vehicle, the rides, and the
/// order of every stop it will make (`RideSharing`'s plan).
public struct SharedOption: Sendable, Hashable {
  public var vehicleID: String
  /// Indices of the rides served, into the list the options were made for.
  public var rides: [Int]
  /// The vehicle's stops the plan was made on: applied only if they are unchanged.
  public var plannedStops: [TripWaypoint]
  /// Every stop in order: the planned stops by index, the rides' pickups and drop-offs by their
  /// place in `rides`.
  public var visits: [RideSharing.Visit]
  /// Per ride in `rides`: seconds from now to its pickup and to its drop-off.
  public var pickupSeconds: [Double]
  public var dropoffSeconds: [Double]
  /// Per ride in `rides`: its direct drive, seconds.
  public var directSeconds: [Double]
  /// Where the vehicle was when the option was made.
  public var vehiclePosition: LatLng
  /// What the dispatcher minimises: the seconds the vehicle's route grows by, plus the riders'
  /// waits for their pickups.
  public var cost: Double
}

extension Fleet {
  /// Vehicles a pair of shared rides is tried on, the ones that serve both best alone.
  static let vehiclesPerPair = 8

  /// Whether the dispatcher pools the ride: SHARED, with a drop-off and no stops between.
  public static func isPoolable(_ ride: Ride) -> Bool {
    ride.request.tripType == .shared && ride.request.dropoffPoint != nil
      && ride.request.intermediateDestinations.isEmpty
  }

  /// The request–trip–vehicle step of a round for shared rides (Alonso-Mora et al.): each ride
  /// with each candidate vehicle (SearchVehicles' conditions, the nearest `candidatesPerRide`),
  /// then pairs of rides near enough to share, then groups of three whose every pair is
  /// feasible on that vehicle, each fitted among the vehicle's stops by `RideSharing` within
  /// every rider's bounds (the new ones' and those already aboard). The drives come from one
  /// many-to-many query over the vehicles, their stops and the rides' points.
  public func sharedDispatchOptions(for rides: [PendingRide], rules: DispatchRules) -> [SharedOption] {
    let now = now()
    let plans = rides.map { try? SearchPlan(Self.search(for: $0.ride, rules: rules, now: now)) }
    var vehicles: [String: PoolVehicle] = [:]
    let poolable = zip(rides, plans).map { pending, plan in Self.isPoolable(pending.ride) ? plan : nil }
    let found = dispatchCandidates(for: rides, plans: poolable, rules: rules, now: now)
    // The lock once per ride, not for the round (see `dispatchCandidates`).
    let candidates: [[String]] = zip(rides, found).map { pending, nearest in
      guard !nearest.isEmpty else { return [] }
      return state.withLock { s in
        nearest.compactMap { candidate in
          if vehicles[candidate.id] == nil {
            guard let vehicle = PoolVehicle(candidate, provider: pending.ride.provider, in: s, now: now) else {
              return nil
            }
            vehicles[candidate.id] = vehicle
          }
          return candidate.id
        }
      }
    }
    guard !vehicles.isEmpty else { return [] }

    // The points: each vehicle's position and stops, each ride's pickup and drop-off.
    var pointIndex: [LatLng: Int] = [:]
    var points: [LatLng] = []
    func index(_ point: LatLng) -> Int {
      if let known = pointIndex[point] { return known }
      pointIndex[point] = points.count
      points.append(point)
      return points.count - 1
    }
    var targets: Set<Int> = []
    var sharing: [String: RideSharing.Vehicle] = [:]
    for (id, vehicle) in vehicles.sorted(by: { $0.key < $1.key }) {
      let origin = index(vehicle.position)
      let stops = zip(vehicle.stops, vehicle.stopRules).map { stop, rule in
        var ruled = rule
        ruled.point = index(stop.location.point)
        targets.insert(ruled.point)
        return ruled
      }
      sharing[id] = RideSharing.Vehicle(
        origin: origin, capacity: vehicle.capacity, onboard: vehicle.onboard,
        exclusiveOnboard: vehicle.exclusiveOnboard,
        stops: stops, backToBack: vehicle.backToBack)
    }
    let ends = rides.map { pending -> (pickup: Int, dropoff: Int)? in
      guard Self.isPoolable(pending.ride), let pickup = pending.ride.request.pickupPoint?.point,
        let dropoff = pending.ride.request.dropoffPoint?.point
      else { return nil }
      let ends = (index(pickup), index(dropoff))
      targets.insert(ends.0)
      targets.insert(ends.1)
      return ends
    }
    let targetList = targets.sorted()
    let column = Dictionary(uniqueKeysWithValues: targetList.enumerated().map { ($1, $0) })
    let table = (travel ?? StraightLineTravel()).matrix(from: points, to: targetList.map { points[$0] })
    let travel = { (a: Int, b: Int) -> Double? in
      a == b ? 0 : column[b].flatMap { table[a][$0]?.seconds }
    }

    // Each ride's bounds: aboard at most the detour bound times its direct drive; picked up
    // within the wait bound when it shares.
    var riders: [RideSharing.Rider?] = []
    var direct: [Double] = []
    for (r, pending) in rides.enumerated() {
      guard let ends = ends[r], let seconds = travel(ends.pickup, ends.dropoff) else {
        riders.append(nil)
        direct.append(0)
        continue
      }
      let waited = now.timeIntervalSince(pending.ride.waitingSince)
      let bounds = rules.bounds(of: pending.ride)
      riders.append(
        RideSharing.Rider(
          pickup: ends.pickup, dropoff: ends.dropoff, passengers: max(1, pending.ride.request.numberOfPassengers),
          latestPickup: bounds.maximumWait.seconds - waited,
          maximumAboard: max(1, bounds.maximumDetour) * seconds))
      direct.append(seconds)
    }

    func option(_ vehicleID: String, _ group: [Int]) -> SharedOption? {
      guard let vehicle = sharing[vehicleID] else { return nil }
      // A ride alone in an empty car is not held to the wait bound: it shares with nobody.
      let alone = group.count == 1 && vehicle.stops.isEmpty
      let members = group.compactMap { r -> RideSharing.Rider? in
        guard var rider = riders[r] else { return nil }
        if alone { rider.latestPickup = nil } else if rider.latestPickup! <= 0 { return nil }
        return rider
      }
      guard members.count == group.count,
        let plan = RideSharing.bestPlan(vehicle, riders: members, travel: travel)
      else { return nil }
      return SharedOption(
        vehicleID: vehicleID, rides: group, plannedStops: vehicles[vehicleID]!.stops, visits: plan.visits,
        pickupSeconds: plan.pickups, dropoffSeconds: plan.dropoffs, directSeconds: group.map { direct[$0] },
        vehiclePosition: vehicles[vehicleID]!.position,
        cost: plan.addedSeconds + plan.pickups.reduce(0, +))
    }

    var options: [SharedOption] = []
    // Size one: every ride with every candidate.
    var alone: [Int: [String: Double]] = [:]
    for r in rides.indices where riders[r] != nil {
      for id in candidates[r] {
        guard let found = option(id, [r]) else { continue }
        options.append(found)
        alone[r, default: [:]][id] = found.cost
      }
    }
    // Size two: rides whose pickups are within the wait bound of each other (the shareability
    // graph's edges), on the vehicles both can ride in.
    let maximumGroup = max(1, rules.poolMaximumGroup)
    var pairs: [String: Set<[Int]>] = [:]
    if maximumGroup >= 2 {
      for a in rides.indices where riders[a] != nil {
        for b in (a + 1)..<rides.count where riders[b] != nil && rides[a].ride.provider == rides[b].ride.provider {
          let (ra, rb) = (riders[a]!, riders[b]!)
          let near = [travel(ra.pickup, rb.pickup), travel(rb.pickup, ra.pickup)].compactMap { $0 }.min()
          // Within the longer of the two waits: each rider's own bound is checked in the plan.
          let wait = max(rules.bounds(of: rides[a].ride).maximumWait, rules.bounds(of: rides[b].ride).maximumWait)
          guard let near, near <= wait.seconds else { continue }
          // On the cars that serve both best alone: a bound on a round's work in a dense centre.
          let (costA, costB) = (alone[a] ?? [:], alone[b] ?? [:])
          let both = Set(costA.keys).intersection(costB.keys)
          let cheapest = both.sorted { x, y in (costA[x]! + costB[x]!, x) < (costA[y]! + costB[y]!, y) }
          for id in cheapest.prefix(Self.vehiclesPerPair) {
            guard let found = option(id, [a, b]) else { continue }
            options.append(found)
            pairs[id, default: []].insert([a, b])
          }
        }
      }
    }
    // Larger groups: on a vehicle, every smaller group inside them feasible on it.
    if maximumGroup >= 3 {
      for (id, feasiblePairs) in pairs.sorted(by: { $0.key < $1.key }) where feasiblePairs.count >= 2 {
        let members = Set(feasiblePairs.flatMap { $0 }).sorted()
        for (i, a) in members.enumerated() {
          for (j, b) in members.enumerated() where j > i && feasiblePairs.contains([a, b]) {
            for c in members[(j + 1)...] where feasiblePairs.contains([a, c]) && feasiblePairs.contains([b, c]) {
              if let found = option(id, [a, b, c]) { options.append(found) }
            }
          }
        }
      }
    }
    return options
  }

  /// Assigns a group of shared rides to one vehicle with the stops in the option's order, in one
  /// durable write, and records each ride's bounds so that later riders keep them. False, and
  /// nothing written, when things changed since the option was made.
  public func assign(_ rides: [PendingRide], _ option: SharedOption, rules: DispatchRules) async throws(FleetError)
    -> Bool
  {
    guard let provider = rides.first?.ride.provider else { return false }
    let ids = Set(rides.map(\.ride.id))
    return try await write { s, now throws(FleetError) in
      guard let vehicle = s.vehicles[provider]?[option.vehicleID], vehicle.state == .online,
        vehicle.waypoints.filter({ !ids.contains($0.tripID) }) == option.plannedStops
      else { return (false, []) }
      var trips: [Trip] = []
      for pending in rides {
        guard let ride = s.rides[provider]?[pending.ride.id], ride.dispatchState == .waiting,
          let trip = s.trips[provider]?[pending.ride.id], trip.status == .new || trip.status == .enrouteToPickup,
          trip.ownRemainingWaypoints.count == 2
        else { return (false, []) }
        trips.append(trip)
      }
      let order = option.visits.map { visit -> TripWaypoint in
        switch visit {
        case .existing(let i): option.plannedStops[i]
        case .pickup(let k): trips[k].ownRemainingWaypoints[0]
        case .dropoff(let k): trips[k].ownRemainingWaypoints[1]
        }
      }
      var changes: [StoredChange] = []
      // One change per vehicle: the last (a trip leaving a vehicle it was released from too).
      var vehicleChanges: [String: StoredChange] = [:]
      for (k, old) in trips.enumerated() {
        var trip = old
        trip.vehicleID = vehicle.id
        trip.updateTime = now
        trip.remainingWaypointsVersion = now
        // The last trip joins with the whole order; the ones before it join at the end for now.
        let joined = try Self.syncVehicles(
          old: old, new: trip, order: k == trips.count - 1 ? order : [], state: s, now: now)
        changes.append(s.put(trip))
        for changed in joined { vehicleChanges[changed.id] = s.put(changed) }
      }
      for (k, pending) in rides.enumerated() {
        var ride = s.rides[provider]![pending.ride.id]!
        let pickup = now.addingTimeInterval(option.pickupSeconds[k])
        let dropoff = now.addingTimeInterval(option.dropoffSeconds[k])
        ride.assign(to: vehicle.id, pickupETA: pickup, now: now)
        // Never tighter than the plan itself: a ride alone may be later than the wait bound.
        let bounds = rules.bounds(of: ride)
        ride.latestPickup = max(ride.waitingSince.addingTimeInterval(bounds.maximumWait.seconds), pickup)
        ride.latestDropoff = max(
          pickup.addingTimeInterval(max(1, bounds.maximumDetour) * option.directSeconds[k]), dropoff)
        ride.directSeconds = option.directSeconds[k]
        changes.append(s.put(ride))
      }
      return (true, changes + vehicleChanges.sorted { $0.key < $1.key }.map(\.value))
    }
  }
}

/// A candidate vehicle for shared rides, as the plans need it.
struct PoolVehicle {
  var position: LatLng
  var capacity: Int32
  var onboard: Int32
  var exclusiveOnboard: Int
  var backToBack: Bool
  var stops: [TripWaypoint]
  /// Per stop: what it changes aboard and its deadline (seconds from now); points are filled in
  /// later.
  var stopRules: [RideSharing.Stop]

  init?(_ candidate: Fleet.SearchCandidate, provider: String, in s: Fleet.State, now: Date) {
    position = candidate.position
    capacity = candidate.maximumCapacity
    backToBack = candidate.backToBackAllowed
    switch candidate.plan {
    case .free:
      onboard = 0
      exclusiveOnboard = 0
      stops = []
      stopRules = []
    case .pooled(let stops, let changes, let onboard, let exclusiveOnboard):
      self.onboard = onboard
      self.exclusiveOnboard = exclusiveOnboard
      self.stops = stops
      stopRules = zip(stops, changes).map { stop, change in
        // A trip made through the Trips API has no ride, so no bounds of its own: its stops are
        // due now, which a plan may keep as late as they are but never make later.
        guard let ride = s.rides[provider]?[stop.tripID] else {
          return RideSharing.Stop(
            point: -1, passengers: change.passengers, exclusiveRiders: change.exclusiveRiders, deadline: 0)
        }
        let deadline: Date? =
          switch stop.waypointType {
          case .pickup: ride.latestPickup
          case .dropOff: ride.latestDropoff
          default: nil
          }
        return RideSharing.Stop(
          point: -1, passengers: change.passengers, exclusiveRiders: change.exclusiveRiders,
          deadline: deadline.map { $0.timeIntervalSince(now) })
      }
    case .after:
      return nil
    }
  }
}
