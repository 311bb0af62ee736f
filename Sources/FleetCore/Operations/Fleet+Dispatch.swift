import FleetGeometry
import Foundation

/// A booked ride that needs a vehicle, with its trip as it is now.
public struct PendingRide: Sendable, Hashable {
  public var ride: Ride
  public var trip: Trip
}

/// A ride assigned but not yet picked up, and the drive its car still has to the pickup.
public struct AssignedRide: Sendable, Hashable {
  public var pending: PendingRide
  public var vehicleID: String
  public var pickupSeconds: Double
}

/// One way to serve a pending ride: a vehicle, its drive to the pickup, and where the ride
/// goes among the vehicle's stops.
public struct DispatchOption: Sendable, Hashable {
  public var vehicleID: String
  /// Driving seconds from now to the pickup, the vehicle's earlier stops included.
  public var pickupSeconds: Double
  /// Straight-line metres from where the vehicle is to the pickup.
  public var straightMetres: Double
  public var matchType: VehicleMatchType
  /// The vehicle's stops the option was planned on: it is assigned only if they are unchanged,
  /// so that no two rides are planned into the same gap.
  public var plannedStops: [TripWaypoint]
  /// For a shared ride: where its pickup and drop-off go among `plannedStops`; others go last.
  public var pickupIndex: Int
  public var dropoffIndex: Int
}

/// The dispatcher's settings that the domain applies when it offers vehicles.
public struct DispatchRules: Sendable, Hashable {
  /// Vehicles farther than this in a straight line from the pickup are not offered to a ride
  /// that has just begun to wait (see `pickupRadiusGrowthPerMinute`).
  public var pickupRadiusMeters: Int32 = 5000
  /// Metres the radius grows by for each minute a ride has waited for a vehicle, up to
  /// SearchVehicles' widest (`widestPickupRadiusMeters`): a ride with no car near enough that
  /// can take it (at a city's edge, or while every car near it is busy) is offered farther
  /// ones rather than waiting until it times out, as production dispatchers widen their
  /// search. A ride booked for later keeps `pickupRadiusMeters` until it is released to wait,
  /// and an assigned one (reassignment) keeps it. 0: the radius never grows.
  public var pickupRadiusGrowthPerMinute: Int32 = 2500
  /// The growths a user may set: from none to the widest radius in a minute.
  public static let radiusGrowthsPerMinute: ClosedRange<Int32> = 0...widestPickupRadiusMeters
  /// SearchVehicles' limit on pickup_radius_meters, which a ride's radius grows to at most.
  public static let widestPickupRadiusMeters = VehicleSearch.pickupRadii.upperBound
  /// A vehicle beyond `pickupRadiusMeters` is offered only once it has stood free (no stops)
  /// this long: a car no rider near it has needed for a while. One that has just freed up in
  /// a busy district is left for the riders there.
  public var freeBeforeOfferedFarther: Duration = .seconds(60)
  /// Vehicles silent for longer are not offered, and a ride whose vehicle falls silent this long
  /// before the pickup is dispatched again (Fleet Engine's search default: five minutes).
  public var maximumStaleness: Duration = .seconds(300)
  /// Each ride is offered at most this many vehicles, the nearest in a straight line: an
  /// optimal assignment hardly ever sends a farther one, and it bounds a round's work.
  public var candidatesPerRide = 30
  /// Shared rides whose product sets no bounds of its own: the longest a rider waits for their
  /// pickup (from the request) when the car also serves others (a ride alone in its car is not
  /// held to it), and time aboard at most so many times the direct drive.
  public var pooling = PoolingBounds()

  /// The radius a ride is offered vehicles within at `now`: wider the longer it has waited.
  public func pickupRadius(for ride: Ride, now: Date) -> Int32 {
    guard ride.dispatchState == .waiting, pickupRadiusGrowthPerMinute > 0 else { return pickupRadiusMeters }
    let waited = max(0, now.timeIntervalSince(ride.waitingSince))
    let grown = Double(pickupRadiusMeters) + Double(pickupRadiusGrowthPerMinute) * waited / 60
    return max(pickupRadiusMeters, Int32(min(grown, Double(Self.widestPickupRadiusMeters))))
  }

  /// A shared ride's bounds: its own (its product's), else these rules'.
  public func bounds(of ride: Ride) -> PoolingBounds { ride.pooling ?? pooling }
  /// Shared rides matched into one car in one round at most (the groups of the
  /// request–trip–vehicle method); the car's seats bound them too.
  public var poolMaximumGroup = 3

  public init() {}
}

/// The hooks fleetd's dispatcher (FleetDispatch) works through: which rides wait, which
/// vehicles could serve them and how soon, and assignment that checks nothing changed since.
extension Fleet {
  /// Rides whose vehicle went offline, fell silent or was deleted before the pickup go back to
  /// WAITING. Returns them.
  public func releaseStrandedRides(rules: DispatchRules) async throws(FleetError) -> [ResourceName] {
    try await write { s, now throws(FleetError) in
      var released: [ResourceName] = []
      var changes: [StoredChange] = []
      let cutoff = now.addingTimeInterval(-rules.maximumStaleness.seconds)
      for name in s.ridesInDispatch {
        guard var ride = s.rides[name.provider]?[name.id], let trip = s.trips[name.provider]?[name.id] else { continue }
        guard ride.dispatchState == .assigned, trip.status == .new || trip.status == .enrouteToPickup else { continue }
        let vehicle = s.vehicles[name.provider]?[trip.vehicleID]
        let gone =
          vehicle == nil || vehicle!.state != .online || (vehicle!.lastLocation?.serverTime ?? .distantPast) < cutoff
        guard gone else { continue }
        ride.dispatchState = .waiting
        ride.releasedFrom = trip.vehicleID
        ride.vehicleID = ""
        ride.waitingSince = now
        ride.updateTime = now
        changes.append(s.put(ride))
        released.append(name)
      }
      return (released, changes)
    }
  }

  /// Rides that wait for a vehicle, longest waiting first.
  public func pendingRides() -> [PendingRide] {
    state.withLock { s in
      s.ridesInDispatch.compactMap { name -> PendingRide? in
        guard let ride = s.rides[name.provider]?[name.id], ride.dispatchState == .waiting,
          let trip = s.trips[name.provider]?[name.id], !trip.status.isTerminal
        else { return nil }
        return PendingRide(ride: ride, trip: trip)
      }.sorted {
        ($0.ride.waitingSince, $0.ride.provider, $0.ride.id) < ($1.ride.waitingSince, $1.ride.provider, $1.ride.id)
      }
    }
  }

  /// Scheduled rides become WAITING once the nearest vehicle the dispatcher would offer, plus
  /// `lead`, would reach the pickup by its pickup time (or `lead` before it when none can
  /// reach it yet); rides further ahead than `lookahead` are not looked at. Returns them.
  public func releaseScheduledRides(rules: DispatchRules, lead: Duration, lookahead: Duration)
    async throws(FleetError) -> [ResourceName]
  {
    let now = now()
    let due = state.withLock { s in
      s.ridesInDispatch.compactMap { name -> PendingRide? in
        guard let ride = s.rides[name.provider]?[name.id], ride.dispatchState == .scheduled,
          let pickupTime = ride.request.pickupTime, pickupTime.timeIntervalSince(now) <= lookahead.seconds,
          s.scheduledChecks[name].map({ $0 <= now }) ?? true,
          let trip = s.trips[name.provider]?[name.id], !trip.status.isTerminal
        else { return nil }
        return PendingRide(ride: ride, trip: trip)
      }
    }
    guard !due.isEmpty else { return [] }
    let options = dispatchOptions(for: due, rules: rules)
    var checks: [(ResourceName, Date)] = []
    let release = zip(due, options).compactMap { pending, found -> ResourceName? in
      let pickupTime = pending.ride.request.pickupTime!
      let drive = found.map(\.pickupSeconds).min() ?? 0
      let slack = pickupTime.timeIntervalSince(now) - drive - lead.seconds
      guard slack > 0 else { return pending.ride.name }
      // Looked at again halfway to its release as things stand, and within 5 minutes (the cars
      // near it may move away meanwhile): a few looks per ride, not one every round.
      checks.append((pending.ride.name, now.addingTimeInterval(min(slack / 2, 300))))
      return nil
    }
    state.withLock { s in
      for (name, at) in checks { s.scheduledChecks[name] = at }
      for name in release { s.scheduledChecks[name] = nil }
      s.scheduledChecks = s.scheduledChecks.filter { name, _ in
        s.ridesInDispatch.contains(name) && s.rides[name.provider]?[name.id]?.dispatchState == .scheduled
      }
    }
    guard !release.isEmpty else { return [] }
    return try await write { s, now throws(FleetError) in
      var released: [ResourceName] = []
      var changes: [StoredChange] = []
      for name in release {
        guard var ride = s.rides[name.provider]?[name.id], ride.dispatchState == .scheduled else { continue }
        ride.dispatchState = .waiting
        ride.waitingSince = now
        ride.updateTime = now
        changes.append(s.put(ride))
        released.append(name)
      }
      return (released, changes)
    }
  }

  /// Rides that have waited longer than `timeout` (a scheduled ride: since its pickup time)
  /// become NO_VEHICLE_FOUND and their trips CANCELED. Returns them.
  public func expireRides(waitingLongerThan timeout: Duration) async throws(FleetError) -> [ResourceName] {
    try await write { s, now throws(FleetError) in
      var expired: [ResourceName] = []
      var changes: [StoredChange] = []
      for name in s.ridesInDispatch {
        guard var ride = s.rides[name.provider]?[name.id], ride.dispatchState == .waiting,
          now.timeIntervalSince(max(ride.waitingSince, ride.request.pickupTime ?? .distantPast)) > timeout.seconds
        else { continue }
        if var trip = s.trips[name.provider]?[name.id], !trip.status.isTerminal {
          changes += try Self.cancel(&trip, in: &s, now: now)
        }
        ride.dispatchState = .noVehicleFound
        ride.updateTime = now
        changes.append(s.put(ride))
        expired.append(name)
      }
      return (expired, changes)
    }
  }

  /// The vehicles that could serve each ride, found by SearchVehicles' own conditions, with
  /// their pickup ETAs: one matrix query from every candidate's starting point to every
  /// pickup (a vehicle finishing its trip first starts from its last stop, and the time to get
  /// there counts); a shared ride's place among a vehicle's stops is fitted as in SearchVehicles.
  public func dispatchOptions(for rides: [PendingRide], rules: DispatchRules) -> [[DispatchOption]] {
    let now = now()
    let plans = rides.map { try? SearchPlan(Self.search(for: $0.ride, rules: rules, now: now)) }
    let candidates = dispatchCandidates(for: rides, plans: plans, rules: rules, now: now)
    let estimator = travel ?? StraightLineTravel()
    var originIndex: [LatLng: Int] = [:]
    var origins: [LatLng] = []
    for list in candidates {
      for candidate in list where originIndex[candidate.origin] == nil {
        if case .pooled = candidate.plan { continue }
        originIndex[candidate.origin] = origins.count
        origins.append(candidate.origin)
      }
    }
    let pickups = rides.map { $0.ride.request.pickupPoint!.point }
    let table = origins.isEmpty ? [] : estimator.matrix(from: origins, to: pickups)
    var finishes: [String: [TravelEstimate]?] = [:]
    return rides.indices.map { r -> [DispatchOption] in
      guard let plan = plans[r] else { return [] }
      return candidates[r].compactMap { candidate -> DispatchOption? in
        let stops = candidate.stops
        var option = DispatchOption(
          vehicleID: candidate.id, pickupSeconds: 0, straightMetres: candidate.straightMetres, matchType: .exclusive,
          plannedStops: stops,
          pickupIndex: stops.count, dropoffIndex: stops.count)
        switch candidate.plan {
        case .free:
          guard let drive = table[originIndex[candidate.origin]!][r] else { return nil }
          option.pickupSeconds = drive.seconds
        case .after(let stops, let finish):
          let key = rides[r].ride.provider + "/" + candidate.id
          if finishes[key] == nil {
            let legs = finish ?? estimator.legs(through: [candidate.position] + stops.map(\.location.point), now: now)
            finishes[key] = .some(legs)
          }
          guard let legs = finishes[key] ?? nil, let drive = table[originIndex[candidate.origin]!][r] else {
            return nil
          }
          option.pickupSeconds = legs.reduce(0) { $0 + $1.seconds } + drive.seconds
          option.matchType = .backToBack
        case .pooled:
          guard let pooled = Self.pooledRoute(candidate, plan: plan, estimator: estimator, now: now) else { return nil }
          option.pickupSeconds = pooled.pickup.seconds
          option.pickupIndex = pooled.insertion.pickupIndex
          option.dropoffIndex = pooled.insertion.dropoffIndex
          option.matchType = pooled.insertion.pickupIndex == stops.count ? .carpoolBackToBack : .carpool
        }
        return option
      }
    }
  }

  /// Each ride's candidate vehicles by its search (the nearest `candidatesPerRide`), within the
  /// radius its wait has grown to; but a vehicle beyond `pickupRadiusMeters` of the pickup only
  /// when it has stood free for `freeBeforeOfferedFarther` and no ride among `rides` has it
  /// within that radius. A car that riders near it need is not sent across the city to one who
  /// waited longer (the "wild goose chase" of a busy city: measured on Adelaide, widening
  /// without these made waits longer and served no more).
  func dispatchCandidates(for rides: [PendingRide], plans: [SearchPlan?], rules: DispatchRules, now: Date)
    -> [[SearchCandidate]]
  {
    let radius = Double(rules.pickupRadiusMeters)
    let freeSince = now.addingTimeInterval(-rules.freeBeforeOfferedFarther.seconds)
    // The lock once per ride, not for the round: a round's scans in a metro's dense centre
    // would hold up every report for their whole length.
    let found: [[SearchCandidate]] = zip(rides, plans).map { pending, plan in
      guard let plan else { return [] }
      let provider = pending.ride.provider
      // The vehicle a ride was taken from is offline or silent, so the conditions leave it
      // out; should it come back, it may serve the ride again.
      return state.withLock { s in
        Self.searchCandidates(plan, provider: provider, in: s, now: now, nearest: rules.candidatesPerRide).filter {
          guard $0.straightMetres > radius else { return true }
          // Its stops last changed (the last one done) that long ago; none ever: since it was made.
          guard let vehicle = s.vehicles[provider]?[$0.id], vehicle.waypoints.isEmpty else { return false }
          return (vehicle.waypointsVersion ?? vehicle.createTime) <= freeSince
        }
      }
    }
    var wantedNearby = Set<String>()
    for (pending, list) in zip(rides, found) {
      for candidate in list where candidate.straightMetres <= radius {
        wantedNearby.insert(pending.ride.provider + "/" + candidate.id)
      }
    }
    return zip(rides, found).map { pending, list in
      list.filter { $0.straightMetres <= radius || !wantedNearby.contains(pending.ride.provider + "/" + $0.id) }
    }
  }

  /// The SearchVehicles request a ride amounts to: its trip type, passengers and attributes,
  /// its product's vehicle type (any without one), within the radius its wait has grown to;
  /// EXCLUSIVE rides may go back-to-back, SHARED ones into any car with room.
  static func search(for ride: Ride, rules: DispatchRules, now: Date) -> VehicleSearch {
    var search = VehicleSearch()
    search.pickupPoint = ride.request.pickupPoint
    search.dropoffPoint = ride.request.dropoffPoint
    search.pickupRadiusMeters = rules.pickupRadius(for: ride, now: now)
    search.count = 50
    search.minimumCapacity = max(1, ride.request.numberOfPassengers)
    search.tripTypes = [ride.request.tripType]
    search.maximumStaleness = rules.maximumStaleness
    search.vehicleTypes = ride.vehicleCategory.map { [$0] } ?? VehicleCategory.allCases.filter { $0 != .unknown }
    search.requiredAttributes = ride.request.requiredAttributes
    search.filter = ride.request.filter
    search.orderBy = .pickupPointETA
    search.tripID = ride.id
    if ride.request.tripType == .shared {
      search.currentTripsPresent = .any
    } else {
      search.includeBackToBack = true
    }
    return search
  }

  /// Assigns the ride's trip to the option's vehicle, as a Fleet Engine backend would (the
  /// trip's vehicle_id and the vehicle's waypoints), with the ride, in one durable write. False,
  /// and nothing written, when things changed since the option was made: the ride no longer
  /// waits, the trip is past its pickup, or the vehicle went offline or has other stops now.
  public func assign(_ pending: PendingRide, _ option: DispatchOption) async throws(FleetError) -> Bool {
    try await place(pending, option, from: nil)
  }

  /// Moves an assigned ride not yet picked up to the option's vehicle, as a backend does by
  /// changing the trip's vehicle_id: its car loses its stops, the new one gets them, in one
  /// durable write. False, and nothing written, when things changed since the option was made:
  /// the ride was picked up, canceled or moved meanwhile, or the new vehicle has other stops.
  public func reassign(_ assigned: AssignedRide, to option: DispatchOption) async throws(FleetError) -> Bool {
    try await place(assigned.pending, option, from: assigned.vehicleID)
  }

  /// The trip and ride onto the option's vehicle: from no vehicle (a waiting ride) or from the
  /// vehicle `from` (an assigned one), checking each is as the option was planned on.
  func place(_ pending: PendingRide, _ option: DispatchOption, from: String?) async throws(FleetError) -> Bool {
    let provider = pending.ride.provider
    let id = pending.ride.id
    return try await write { s, now throws(FleetError) in
      guard var ride = s.rides[provider]?[id], ride.assignments == pending.ride.assignments,
        from.map({ ride.dispatchState == .assigned && ride.vehicleID == $0 }) ?? (ride.dispatchState == .waiting),
        var trip = s.trips[provider]?[id], trip.status == .new || trip.status == .enrouteToPickup,
        from.map({ trip.vehicleID == $0 }) ?? true,
        let vehicle = s.vehicles[provider]?[option.vehicleID], vehicle.state == .online, vehicle.id != from,
        vehicle.waypoints.filter({ $0.tripID != id }) == option.plannedStops
      else { return (false, []) }
      let old = trip
      trip.vehicleID = vehicle.id
      trip.updateTime = now
      trip.remainingWaypointsVersion = now
      let own = trip.ownRemainingWaypoints
      var order = option.plannedStops
      if own.count == 2, option.matchType == .carpool || option.matchType == .carpoolBackToBack {
        order.insert(own[1], at: option.dropoffIndex)
        order.insert(own[0], at: option.pickupIndex)
      } else {
        order += own
      }
      let vehicles = try Self.syncVehicles(old: old, new: trip, order: order, state: s, now: now)
      ride.assign(to: vehicle.id, pickupETA: now.addingTimeInterval(option.pickupSeconds), now: now)
      return (true, [s.put(trip)] + vehicles.map { s.put($0) } + [s.put(ride)])
    }
  }

  /// EXCLUSIVE rides assigned and not yet picked up that a free car might reach sooner: assigned
  /// at most `maximumAssignments` times so far, and planned at assignment to need at least
  /// `minimumSeconds` more to their pickup (no car can save more than the drive left). Each with
  /// its car's drive to the pickup from where the car is now, through its earlier stops.
  public func reassignableRides(minimumSeconds: Double, maximumAssignments: Int) -> [AssignedRide] {
    let now = now()
    let found: [(PendingRide, Vehicle)] = state.withLock { s in
      s.ridesInDispatch.compactMap { name in
        guard let ride = s.rides[name.provider]?[name.id], ride.dispatchState == .assigned,
          ride.assignments <= maximumAssignments,
          let planned = ride.assignedPickupETA, planned.timeIntervalSince(now) >= minimumSeconds,
          let trip = s.trips[name.provider]?[name.id], trip.type == .exclusive,
          trip.status == .new || trip.status == .enrouteToPickup,
          let vehicle = s.vehicles[name.provider]?[trip.vehicleID], vehicle.state == .online
        else { return nil }
        return (PendingRide(ride: ride, trip: trip), vehicle)
      }
    }
    let estimator = travel ?? StraightLineTravel()
    return found.compactMap { pending, vehicle in
      guard let position = vehicle.lastLocation?.location,
        let pickup = vehicle.waypoints.firstIndex(where: { $0.tripID == pending.ride.id && $0.waypointType == .pickup }
        ),
        let legs = estimator.legs(
          through: [position] + vehicle.waypoints[...pickup].map(\.location.point), now: now)
      else { return nil }
      return AssignedRide(pending: pending, vehicleID: vehicle.id, pickupSeconds: legs.reduce(0) { $0 + $1.seconds })
    }
  }
}
