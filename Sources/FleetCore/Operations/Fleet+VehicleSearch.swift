import FleetGeometry
import Foundation

extension Fleet {
  /// What a search found, before it is ranked: the vehicle and how it would reach the pickup.
  struct SearchCandidate {
    enum Plan {
      /// No trips: straight to the pickup.
      case free
      /// Finishes `stops` first, then drives from the last one to the pickup. `finish` is how
      /// long and far that is, from the live progress when it is current.
      case after(stops: [TripWaypoint], finish: [TravelEstimate]?)
      /// Takes the rider between its other riders' stops.
      case pooled(stops: [TripWaypoint], changes: [CarpoolInsertion.Stop], onboard: Int32, exclusiveOnboard: Int)
    }

    var id: String
    var position: LatLng
    /// Straight-line metres to the pickup, from a flat projection: within 0.2 % of the great
    /// circle at a search's distances (the ranking's bounds allow for it); the great-circle
    /// distance is computed for the vehicles returned.
    var straightMetres: Double
    var plan: Plan
    var maximumCapacity: Int32
    /// Whether the pickup may come after all of the vehicle's stops (back_to_back_enabled).
    var backToBackAllowed: Bool
    /// The vehicle's stops, but for the searched trip's own: what an assignment plans on.
    var stops: [TripWaypoint]

    /// Where its drive to the pickup starts.
    var origin: LatLng {
      if case .after(let stops, _) = plan, let last = stops.last { return last.location.point }
      return position
    }
  }

  /// How far a flat distance may be from the great circle's at a search's distances (10 km).
  static let flatError = 0.002

  /// A candidate with its estimates, as it would be returned.
  struct EvaluatedMatch {
    var match: VehicleMatch
    /// The value it is ordered by (lower first).
    var key: Double
  }

  /// Fleet Engine's SearchVehicles rules, checked in the order Fleet Engine documents them.
  struct SearchPlan {
    var pickup: LatLng
    var dropoff: LatLng?
    var radius: Double
    var count: Int
    var passengers: Int32
    var tripType: TripType
    var staleness: Duration
    /// Bit n set: vehicle category with raw value n is wanted.
    var categories: UInt8
    var attributes: AttributeQuery
    var order: VehicleMatchOrder
    var includeBackToBack: Bool
    var tripID: String
    var currentTrips: CurrentTripsPresent
    /// For flat distances around the pickup: metres per degree of latitude and of longitude.
    var metresPerDegree: (latitude: Double, longitude: Double)

    /// An equirectangular distance from the pickup: no trigonometry per vehicle.
    func flatDistance(to point: LatLng) -> Double {
      let y = (point.latitude - pickup.latitude) * metresPerDegree.latitude
      var dLongitude = abs(point.longitude - pickup.longitude)
      if dLongitude > 180 { dLongitude = 360 - dLongitude }
      let x = dLongitude * metresPerDegree.longitude
      return (x * x + y * y).squareRoot()
    }

    init(_ search: VehicleSearch) throws(FleetError) {
      guard let pickup = search.pickupPoint else { throw .invalid("pickup_point is required") }
      try pickup.point.validate("pickup_point.point")
      try search.dropoffPoint?.point.validate("dropoff_point.point")
      let radii = VehicleSearch.pickupRadii
      guard radii.contains(search.pickupRadiusMeters) else {
        throw .invalid(
          "pickup_radius_meters must be between \(radii.lowerBound) and \(radii.upperBound) (inclusive), got \(search.pickupRadiusMeters)"
        )
      }
      guard (1...50).contains(search.count) else {
        throw .invalid("count must be between 1 and 50 (inclusive), got \(search.count)")
      }
      guard search.minimumCapacity >= 1 else {
        throw .invalid(
          "minimum_capacity must be at least 1 (the passengers, not counting the driver), got \(search.minimumCapacity)"
        )
      }
      guard search.tripTypes.count == 1 else {
        throw .invalid("trip_types must hold exactly one trip type, got \(search.tripTypes.count)")
      }
      guard search.tripTypes[0] != .unknown else { throw .invalid("trip_types must not contain UNKNOWN_TRIP_TYPE") }
      guard !search.vehicleTypes.isEmpty else {
        throw .invalid("vehicle_types is required: give at least one vehicle type")
      }
      if let i = search.vehicleTypes.firstIndex(of: .unknown) {
        throw .invalid("vehicle_types[\(i)].category must not be UNKNOWN")
      }
      guard search.orderBy != .unknown else {
        throw .invalid(
          "order_by is required: PICKUP_POINT_ETA, PICKUP_POINT_DISTANCE, DROPOFF_POINT_ETA, PICKUP_POINT_STRAIGHT_DISTANCE or COST"
        )
      }
      if search.tripTypes[0] == .shared && search.dropoffPoint == nil {
        throw .invalid("dropoff_point is required when trip_types is SHARED")
      }
      if search.orderBy == .dropoffPointETA && search.dropoffPoint == nil {
        throw .invalid("dropoff_point is required when order_by is DROPOFF_POINT_ETA")
      }
      if let staleness = search.maximumStaleness, staleness <= .zero {
        throw .invalid("maximum_staleness must be a positive duration")
      }
      if search.includeBackToBack && search.currentTripsPresent != .unspecified {
        throw .invalid(
          "include_back_to_back can only be true when current_trips_present is CURRENT_TRIPS_PRESENT_UNSPECIFIED")
      }
      if search.tripTypes[0] == .shared && search.currentTripsPresent == .unspecified {
        throw .invalid("current_trips_present must be NONE or ANY when trip_types is SHARED")
      }
      if !search.tripID.isEmpty { try ResourceID.validate(search.tripID, field: "trip_id") }
      let requiredGiven =
        !search.requiredAttributes.isEmpty || !search.requiredOneOfAttributes.isEmpty
        || !search.requiredOneOfAttributeSets.isEmpty
      try AttributeQuery.checkExclusive(filter: search.filter, requiredGiven: requiredGiven)
      try AttributeQuery.checkSizes(
        all: search.requiredAttributes.count, oneOf: search.requiredOneOfAttributes.map(\.count),
        sets: search.requiredOneOfAttributeSets.map(\.count))
      func terms(_ list: [Attribute], _ field: String) throws(FleetError) -> [AttributeTerm] {
        try list.enumerated().map { (i, a) throws(FleetError) in
          guard !a.key.isEmpty, !a.key.contains(":") else {
            throw .invalid("\(field)[\(i)].key is required and must not contain ':'")
          }
          return AttributeTerm(key: a.key, value: a.value.description)
        }
      }
      var attributes = AttributeQuery()
      attributes.all = try terms(search.requiredAttributes, "required_attributes")
      attributes.oneOf = try search.requiredOneOfAttributes.enumerated().map { (i, list) throws(FleetError) in
        try terms(list, "required_one_of_attributes[\(i)].attributes")
      }
      attributes.sets = try search.requiredOneOfAttributeSets.enumerated().map { (i, list) throws(FleetError) in
        try terms(list, "required_one_of_attribute_sets[\(i)].attributes")
      }
      if !search.filter.isEmpty { attributes.filter = try AttributeFilter(parsing: search.filter) }

      self.pickup = pickup.point
      dropoff = search.dropoffPoint?.point
      radius = Double(search.pickupRadiusMeters)
      count = Int(search.count)
      passengers = search.minimumCapacity
      tripType = search.tripTypes[0]
      // Fleet Engine: five minutes when not set.
      staleness = search.maximumStaleness ?? .seconds(300)
      categories = search.vehicleTypes.reduce(0) { $0 | (1 << UInt8($1.rawValue)) }
      self.attributes = attributes
      order = search.orderBy
      includeBackToBack = search.includeBackToBack
      tripID = search.tripID
      currentTrips = search.currentTripsPresent
      let metres = LatLng.earthRadius * .pi / 180
      metresPerDegree = (metres, metres * cos(pickup.point.latitude * .pi / 180))
    }
  }

  // MARK: - SearchVehicles

  /// Fleet Engine SearchVehicles: the vehicles that can serve a trip from `pickup_point`, best
  /// first by `order_by`, with driving ETAs and distances from the travel estimator (road
  /// graph and current traffic; straight lines without a graph, and then `ordered_by` says so).
  public func searchVehicles(caller: Caller, provider: String, search: VehicleSearch) throws(FleetError)
    -> [VehicleMatch]
  {
    try caller.mayCall(.searchVehicles)
    try caller.checkProvider(provider)
    let plan = try SearchPlan(search)
    let now = now()
    let candidates = state.withLock { s in
      Self.searchCandidates(
        plan, provider: provider, in: s, now: now, nearest: max(Self.minimumRouted, Self.routedPerResult * plan.count))
    }
    let estimator = travel ?? StraightLineTravel()
    var matches = Self.rank(
      candidates, provider: provider, plan: plan, weights: configuration.costWeights(for: provider),
      estimator: estimator, now: now)
    // As responses show vehicles: with their live progress (a vehicle deleted meanwhile is
    // left out); riders see less.
    matches = state.withLock { s in
      matches.compactMap { match in
        guard let current = s.vehicles[provider]?[match.vehicle.id] else { return nil }
        var shown = match
        shown.vehicle = Self.decorated(current, in: s)
        return shown
      }
    }
    if caller.role == .consumer { matches = matches.map { $0.forRiders() } }
    return matches
  }

  /// Candidates routed per vehicle asked for, at least `minimumRouted`: the nearest in a
  /// straight line. A car farther than the nearest eight times the count asked hardly ever
  /// reaches the pickup sooner by road, and routing every car within the radius made a search's
  /// cost follow the fleet there (thousands in a metro's centre), not the answer asked for.
  static let routedPerResult = 8
  static let minimumRouted = 64

  /// Searches that route at most this many candidates, without a filter expression, are light.
  static let lightRouted = 128

  /// Whether a search's work is small and bounded: it asks for at most 16 vehicles (128 routed
  /// candidates) and has no AIP-160 `filter`, which is evaluated on every vehicle within the
  /// radius that meets the rest. On Adelaide's 10,000 cars, such a search takes 0.6 ms on one
  /// core at a 10-km radius, 1.6 ms at its p99 (`dispatch-bench search-cpu --count 16`).
  public static func isLight(_ search: VehicleSearch) -> Bool {
    Int(search.count) * routedPerResult <= lightRouted && search.filter.isEmpty
  }

  /// At most `limit` candidates: all of them when few, else the nearest in a straight line (ties
  /// by ID, so that the choice never depends on the grid's order).
  static func nearest(_ candidates: [SearchCandidate], limit: Int) -> [SearchCandidate] {
    guard candidates.count > limit else { return candidates }
    // Only the nearest are put in order: a heap of positions, popped `limit` times (sorting
    // every candidate within the radius moved hundreds of them per search).
    var heap = Heap(Array(candidates.indices)) { a, b in
      (candidates[a].straightMetres, candidates[a].id) < (candidates[b].straightMetres, candidates[b].id)
    }
    return (0..<limit).compactMap { _ in heap.pop().map { candidates[$0] } }
  }

  /// The vehicles that meet every condition of the search, found through the position grid.
  /// Runs under the fleet's lock: the common case (a vehicle without trips) reads only the
  /// grid's summary of it.
  /// Of those, only the `limit` nearest are kept (`nearest`); the grid is read from the
  /// pickup outwards until no farther cell can hold one nearer than the `limit`-th found.
  static func searchCandidates(_ plan: SearchPlan, provider: String, in s: State, now: Date, nearest limit: Int)
    -> [SearchCandidate]
  {
    guard let grid = s.grids[provider], limit > 0 else { return [] }
    let cutoff = now.addingTimeInterval(-plan.staleness.seconds)
    var found: [SearchCandidate] = []
    // The `limit` smallest distances found so far, the largest on top.
    var nearestDistances = Heap<Double>([], less: >)
    func keep(_ candidate: SearchCandidate) {
      found.append(candidate)
      if nearestDistances.items.count < limit {
        nearestDistances.push(candidate.straightMetres)
      } else if candidate.straightMetres < nearestDistances.items[0] {
        nearestDistances.replaceTop(candidate.straightMetres)
      }
    }
    // A candidate's distance may be exact rather than flat (near the radius): bounds are
    // lowered by the flat measure's error so that they stay below it.
    func more(_ bound: Double) -> Bool {
      nearestDistances.items.count < limit || nearestDistances.items[0] >= bound * (1 - Self.flatError)
    }
    grid.forEach(near: plan.pickup, radius: plan.radius, nearestFirst: plan.metresPerDegree, while: more) { v in
      guard v.isOnline, v.supports(plan.tripType), plan.categories & (1 << UInt8(v.category.rawValue)) != 0,
        v.serverTime >= cutoff
      else { return }
      var straight = plan.flatDistance(to: v.position)
      if straight > plan.radius * (1 - Self.flatError) {
        // Near the edge of the circle the exact distance decides.
        straight = v.position.distance(to: plan.pickup)
        guard straight <= plan.radius else { return }
      }
      guard plan.attributes.matches(v.attributes) else { return }
      let candidate = SearchCandidate(
        id: v.id, position: v.position, straightMetres: straight, plan: .free, maximumCapacity: v.maximumCapacity,
        backToBackAllowed: v.backToBackEnabled, stops: [])
      if !v.hasTrips {
        if v.maximumCapacity >= plan.passengers { keep(candidate) }
      } else if mayKeep(v, plan), let vehicle = s.vehicles[provider]?[v.id],
        let planned = withTrips(candidate, vehicle, plan, in: s)
      {
        keep(planned)
      }
    }
    return nearest(found, limit: limit)
  }

  /// Whether `withTrips` could keep a vehicle with trips, as far as its summary tells: most
  /// vehicles on a trip are refused here, without reading the vehicle and its trips under the
  /// lock (a metro's centre has thousands of them within a search's radius).
  static func mayKeep(_ v: VehicleSummary, _ plan: SearchPlan) -> Bool {
    // Its only trip is the one searched for (a reassignment): `withTrips` decides.
    if v.trips.count == 1, v.trips[0] == plan.tripID { return true }
    switch plan.currentTrips {
    case .none: return false
    case .unspecified: return plan.includeBackToBack && v.backToBackEnabled && v.maximumCapacity >= plan.passengers
    case .any: return true
    }
  }

  /// A vehicle with trips as a candidate, by Fleet Engine's rules on current trips and room
  /// for the passengers; nil when they leave it out.
  static func withTrips(_ candidate: SearchCandidate, _ v: Vehicle, _ plan: SearchPlan, in s: State)
    -> SearchCandidate?
  {
    var candidate = candidate
    let tripIDs = v.currentTrips.filter { $0 != plan.tripID }
    let stops = v.waypoints.filter { $0.tripID != plan.tripID }
    candidate.stops = stops
    if tripIDs.isEmpty {
      return v.maximumCapacity >= plan.passengers ? candidate : nil
    }
    let trips = tripIDs.compactMap { s.trips[v.provider]?[$0] }
    switch plan.currentTrips {
    case .none:
      return nil
    case .unspecified:
      // Fleet Engine: with include_back_to_back, a vehicle whose one active trip is
      // ENROUTE_TO_DROPOFF, when its back_to_back_enabled is set.
      guard plan.includeBackToBack, v.backToBackEnabled, trips.count == 1, trips[0].status == .enrouteToDropoff,
        v.maximumCapacity >= plan.passengers
      else { return nil }
      candidate.plan = .after(stops: stops, finish: progressLegs(of: v, stops: stops, in: s))
      return candidate
    case .any:
      // Fleet Engine: at most 5 current trips and 10 waypoints.
      guard trips.count <= 5, stops.count <= 10 else { return nil }
      if plan.tripType == .exclusive {
        // An EXCLUSIVE rider shares the car with nobody: after everyone else.
        guard v.backToBackEnabled, v.maximumCapacity >= plan.passengers else { return nil }
        candidate.plan = .after(stops: stops, finish: progressLegs(of: v, stops: stops, in: s))
        return candidate
      }
      let byID = Dictionary(trips.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
      var onboard: Int32 = 0
      var exclusiveOnboard = 0
      for trip in trips where !trip.ownRemainingWaypoints.contains(where: { $0.waypointType == .pickup }) {
        onboard += max(1, trip.numberOfPassengers)
        if trip.type == .exclusive { exclusiveOnboard += 1 }
      }
      let changes = stops.map { stop -> CarpoolInsertion.Stop in
        let trip = byID[stop.tripID]
        let riders = max(1, trip?.numberOfPassengers ?? 1)
        let exclusive = trip?.type == .exclusive ? 1 : 0
        switch stop.waypointType {
        case .pickup: return .init(passengers: riders, exclusiveRiders: exclusive)
        case .dropOff: return .init(passengers: -riders, exclusiveRiders: -exclusive)
        default: return .init(passengers: 0)
        }
      }
      candidate.plan = .pooled(
        stops: stops, changes: changes, onboard: onboard, exclusiveOnboard: exclusiveOnboard)
      return candidate
    }
  }

  /// The legs to a vehicle's stops from its live progress, when that is current for them.
  static func progressLegs(of v: Vehicle, stops: [TripWaypoint], in s: State) -> [TravelEstimate]? {
    guard let progress = s.progress[v.provider]?[v.id], progress.legs.map(\.waypoint) == stops else { return nil }
    return progress.legs.map { TravelEstimate(seconds: $0.duration, metres: $0.distanceMeters) }
  }

  /// Orders the candidates and keeps the best `count`. Every candidate's drive to the pickup
  /// is estimated in one query, a bound that a shared ride's detour through other riders' stops
  /// only raises; the candidates are then evaluated exactly in the order of their bounds until
  /// no bound can beat the `count`-th best, so that detours are computed for few of them.
  static func rank(
    _ candidates: [SearchCandidate], provider: String, plan: SearchPlan, weights: MatchCostWeights,
    estimator: any TravelEstimator, now: Date
  ) -> [VehicleMatch] {
    guard !candidates.isEmpty else { return [] }
    let order = estimator.followsRoads ? plan.order : .pickupPointStraightDistance
    let fan = estimator.fan(to: plan.pickup, from: candidates.map(\.origin), now: now)
    let pickupToDropoff = plan.dropoff.flatMap { estimator.legs(through: [plan.pickup, $0], now: now)?.first }
    var finishes: [Int: [TravelEstimate]] = [:]
    var bounded: [(bound: Double, index: Int)] = []
    var unrouted: [Int] = []
    for (i, candidate) in candidates.enumerated() {
      guard let direct = fan.drive(i) else {
        unrouted.append(i)
        continue
      }
      var before = TravelEstimate.zero
      if case .after(let stops, let finish) = candidate.plan {
        guard let legs = finish ?? estimator.legs(through: [candidate.position] + stops.map(\.location.point), now: now)
        else {
          unrouted.append(i)
          continue
        }
        finishes[i] = legs
        before = legs.reduce(.zero, +)
      }
      let eta = before.seconds + direct.seconds
      // Never above the great-circle distance, whatever the flat projection's error.
      let straight = candidate.straightMetres * (1 - Self.flatError)
      let bound: Double
      switch order {
      case .pickupPointETA, .unknown: bound = eta
      case .dropoffPointETA:
        if case .pooled = candidate.plan { bound = eta } else { bound = eta + (pickupToDropoff?.seconds ?? 0) }
      case .pickupPointDistance:
        if case .pooled = candidate.plan { bound = straight } else { bound = before.metres + direct.metres }
      case .pickupPointStraightDistance: bound = straight
      case .cost: bound = weights.secondsOfETA * eta + weights.metresOfStraightLine * straight
      }
      bounded.append((bound, i))
    }
    // Taken in the order of their bounds from a heap: the search usually stops after a few.
    var byBound = Heap(bounded) { a, b in
      a.bound < b.bound || (a.bound == b.bound && candidates[a.index].id < candidates[b.index].id)
    }
    var best: [EvaluatedMatch] = []
    while let (bound, i) = byBound.pop() {
      if best.count == plan.count, let worst = best.last, bound > worst.key { break }
      guard
        let evaluated = evaluate(
          candidates[i], provider: provider, index: i, fan: fan, finish: finishes[i], pickupToDropoff: pickupToDropoff,
          plan: plan,
          order: order, weights: weights, estimator: estimator, now: now)
      else { continue }
      let position =
        best.firstIndex {
          ($0.key, $0.match.vehicle.id) > (evaluated.key, evaluated.match.vehicle.id)
        } ?? best.count
      best.insert(evaluated, at: position)
      if best.count > plan.count { best.removeLast() }
    }
    var matches = best.map(\.match)
    // Vehicles with no route to the pickup come last, by straight-line distance: what they
    // were ordered by (Fleet Engine leaves their ETAs empty).
    if matches.count < plan.count {
      let rest = unrouted.filter { if case .pooled = candidates[$0].plan { false } else { true } }
        .sorted {
          (candidates[$0].straightMetres, candidates[$0].id) < (candidates[$1].straightMetres, candidates[$1].id)
        }
      for i in rest.prefix(plan.count - matches.count) {
        var match = VehicleMatch(
          vehicle: Vehicle(provider: provider, id: candidates[i].id),
          pickupStraightLineDistanceMeters: Int32(candidates[i].position.distance(to: plan.pickup).rounded()),
          tripType: plan.tripType, matchType: candidates[i].stops.isEmpty ? .exclusive : .backToBack,
          requestedOrderedBy: plan.order, orderedBy: .pickupPointStraightDistance)
        match.waypoints = [MatchWaypoint(location: candidates[i].position, eta: now)]
        matches.append(match)
      }
    }
    return matches
  }

  /// One candidate's estimates with current traffic and, for a shared ride, the best place for
  /// the rider among its stops; nil when it cannot take the rider after all.
  static func evaluate(
    _ candidate: SearchCandidate, provider: String, index: Int, fan: any TravelFan, finish: [TravelEstimate]?,
    pickupToDropoff: TravelEstimate?, plan: SearchPlan, order: VehicleMatchOrder, weights: MatchCostWeights,
    estimator: any TravelEstimator, now: Date
  ) -> EvaluatedMatch? {
    let exactStraight = candidate.position.distance(to: plan.pickup)
    let straight = Int32(exactStraight.rounded())
    var match = VehicleMatch(
      vehicle: Vehicle(provider: provider, id: candidate.id), pickupStraightLineDistanceMeters: straight,
      tripType: plan.tripType, matchType: .exclusive, requestedOrderedBy: plan.order, orderedBy: order)
    match.pickupInsertionIndex = candidate.stops.count
    match.dropoffInsertionIndex = candidate.stops.count
    let start = MatchWaypoint(location: candidate.position, eta: now)
    let offRoad = fan.targetOffRoadMetres
    var pickupETA: Double
    var dropoffETA: Double?
    switch candidate.plan {
    case .free, .after:
      guard let drive = fan.drive(index) else { return nil }
      var before = TravelEstimate.zero
      var waypoints = [start]
      if case .after(let stops, _) = candidate.plan, let finish {
        match.matchType = .backToBack
        for (stop, leg) in zip(stops, finish) {
          before = before + leg
          waypoints.append(MatchWaypoint(location: stop.location.point, eta: now.addingTimeInterval(before.seconds)))
        }
      }
      pickupETA = before.seconds + drive.seconds
      match.pickupDistanceMeters = Int32(clamping: Int((before.metres + drive.metres + offRoad).rounded()))
      waypoints.append(MatchWaypoint(location: plan.pickup, eta: now.addingTimeInterval(pickupETA)))
      if let dropoff = plan.dropoff, let pickupToDropoff {
        dropoffETA = pickupETA + pickupToDropoff.seconds
        waypoints.append(MatchWaypoint(location: dropoff, eta: now.addingTimeInterval(dropoffETA!)))
      }
      match.waypoints = waypoints
    case .pooled(let stops, _, _, _):
      guard let pooled = pooledRoute(candidate, plan: plan, estimator: estimator, now: now) else { return nil }
      match.waypoints =
        [start]
        + zip(pooled.points, pooled.arrivals).map { point, arrival in
          MatchWaypoint(location: point, eta: now.addingTimeInterval(arrival.seconds))
        }
      pickupETA = pooled.pickup.seconds
      match.pickupDistanceMeters = Int32(clamping: Int((pooled.pickup.metres + offRoad).rounded()))
      dropoffETA = pooled.dropoff.seconds
      match.matchType = pooled.insertion.pickupIndex == stops.count ? .carpoolBackToBack : .carpool
      match.pickupInsertionIndex = pooled.insertion.pickupIndex
      match.dropoffInsertionIndex = pooled.insertion.dropoffIndex
    }
    match.pickupETA = now.addingTimeInterval(pickupETA)
    match.dropoffETA = dropoffETA.map { now.addingTimeInterval($0) }
    match.pickupToDropoffDistanceMeters = pickupToDropoff.map { Int32(clamping: Int($0.metres.rounded())) }
    let key: Double
    switch order {
    case .pickupPointETA, .unknown: key = pickupETA
    case .pickupPointDistance: key = Double(match.pickupDistanceMeters ?? .max)
    case .dropoffPointETA: key = dropoffETA ?? .infinity
    case .pickupPointStraightDistance: key = exactStraight
    case .cost: key = weights.secondsOfETA * pickupETA + weights.metresOfStraightLine * exactStraight
    }
    return EvaluatedMatch(match: match, key: key)
  }
}

extension Fleet {
  /// A shared ride fitted between a vehicle's stops: where, and the drive through the stops
  /// up to the rider's drop-off with current traffic.
  struct PooledRoute {
    var insertion: CarpoolInsertion
    /// The stops after the vehicle's position, up to the drop-off, and when each is reached.
    var points: [LatLng]
    var arrivals: [TravelEstimate]
    var pickup: TravelEstimate
    var dropoff: TravelEstimate
  }

  static func pooledRoute(
    _ candidate: SearchCandidate, plan: SearchPlan, estimator: any TravelEstimator, now: Date
  ) -> PooledRoute? {
    guard case .pooled(let stops, let changes, let onboard, let exclusiveOnboard) = candidate.plan,
      let dropoff = plan.dropoff
    else { return nil }
    let points = [candidate.position] + stops.map(\.location.point) + [plan.pickup, dropoff]
    let seconds = estimator.matrix(points).map { $0.map { $0?.seconds } }
    guard
      let insertion = CarpoolInsertion.cheapest(
        stops: changes, onboard: onboard, exclusiveOnboard: exclusiveOnboard,
        capacity: candidate.maximumCapacity, passengers: plan.passengers, seconds: seconds,
        allowAfterAll: candidate.backToBackAllowed)
    else { return nil }
    let pickupPoint = stops.count + 1
    let dropoffPoint = stops.count + 2
    let route = insertion.order((0..<stops.count).map { $0 + 1 }, pickup: pickupPoint, dropoff: dropoffPoint)
    // Only as far as the rider's drop-off: the stops after it do not change its estimates.
    let upToDropoff = Array(route.prefix { $0 != dropoffPoint }) + [dropoffPoint]
    guard let legs = estimator.legs(through: [points[0]] + upToDropoff.map { points[$0] }, now: now) else { return nil }
    var elapsed = TravelEstimate.zero
    var arrivals: [TravelEstimate] = []
    var pickup = TravelEstimate.zero
    for (point, leg) in zip(upToDropoff, legs) {
      elapsed = elapsed + leg
      arrivals.append(elapsed)
      if point == pickupPoint { pickup = elapsed }
    }
    return PooledRoute(
      insertion: insertion, points: upToDropoff.map { points[$0] }, arrivals: arrivals, pickup: pickup,
      dropoff: elapsed)
  }
}

extension VehicleMatch {
  /// What a rider's app sees of a nearby vehicle: where it is and what it is, not its trips,
  /// stops, attributes or the device's sensor data.
  func forRiders() -> VehicleMatch {
    var copy = self
    var shown = Vehicle(provider: vehicle.provider, id: vehicle.id)
    shown.state = vehicle.state
    shown.supportedTripTypes = vehicle.supportedTripTypes
    shown.maximumCapacity = vehicle.maximumCapacity
    shown.category = vehicle.category
    shown.licensePlate = vehicle.licensePlate
    shown.backToBackEnabled = vehicle.backToBackEnabled
    shown.lastLocation = vehicle.lastLocation.map { full in
      var location = VehicleLocation(location: full.location)
      location.heading = full.heading
      location.speed = full.speed
      location.updateTime = full.updateTime
      location.serverTime = full.serverTime
      location.isRoadSnapped = full.isRoadSnapped
      return location
    }
    shown.createTime = vehicle.createTime
    shown.updateTime = vehicle.updateTime
    copy.vehicle = shown
    // Other riders' stops stay private: the car, then this trip's pickup and drop-off.
    let own = waypoints.count >= 2 ? (dropoffETA != nil ? 2 : 1) : 0
    copy.waypoints = Array(waypoints.prefix(1)) + Array(waypoints.suffix(own))
    return copy
  }
}

/// A binary heap, smallest first by `less`.
struct Heap<Element> {
  var items: [Element]
  let less: (Element, Element) -> Bool

  init(_ items: [Element], less: @escaping (Element, Element) -> Bool) {
    self.items = items
    self.less = less
    for i in stride(from: items.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
  }

  mutating func push(_ element: Element) {
    items.append(element)
    var i = items.count - 1
    while i > 0 {
      let parent = (i - 1) / 2
      guard less(items[i], items[parent]) else { return }
      items.swapAt(i, parent)
      i = parent
    }
  }

  /// Replaces the top with `element` (one sift instead of a pop and a push).
  mutating func replaceTop(_ element: Element) {
    items[0] = element
    siftDown(0)
  }

  mutating func pop() -> Element? {
    guard !items.isEmpty else { return nil }
    items.swapAt(0, items.count - 1)
    let top = items.removeLast()
    if !items.isEmpty { siftDown(0) }
    return top
  }

  mutating func siftDown(_ start: Int) {
    var i = start
    while true {
      let left = 2 * i + 1
      let right = left + 1
      var smallest = i
      if left < items.count && less(items[left], items[smallest]) { smallest = left }
      if right < items.count && less(items[right], items[smallest]) { smallest = right }
      if smallest == i { return }
      items.swapAt(i, smallest)
      i = smallest
    }
  }
}
