import Foundation

extension Fleet {
  // MARK: - CreateRide

  /// Books a ride: creates its trip (NEW, trip ID = ride ID, unassigned) and the ride, WAITING,
  /// in one durable write. The ride ID is the idempotency key: the same request again returns
  /// the same ride; another request under the same ID is ALREADY_EXISTS.
  public func createRide(caller: Caller, provider: String, rideID: String, request: RideRequest)
    async throws(FleetError) -> RideView
  {
    try caller.mayCall(.createRide)
    try caller.checkProvider(provider)
    try ResourceID.validate(rideID, field: "ride_id")
    let request = try Self.normalized(request)
    return try await write { s, now throws(FleetError) in
      if let existing = s.rides[provider]?[rideID] {
        guard existing.request == request else {
          throw FleetError(
            .alreadyExists,
            "ride providers/\(provider)/rides/\(rideID) already exists with a different request; a repeat must send the same body"
          )
        }
        // The same booking again: written again, so that this answer too waits until the ride
        // and its trip are durable.
        var changes = [s.put(existing)]
        if let trip = s.trips[provider]?[rideID] { changes.append(s.put(trip)) }
        return (RideView(s.rides[provider]![rideID]!, trip: s.trips[provider]?[rideID]), changes)
      }
      guard s.trips[provider]?[rideID] == nil else {
        throw FleetError(
          .alreadyExists, "trip providers/\(provider)/trips/\(rideID) already exists: a ride's trip takes the ride's ID"
        )
      }
      var trip = Trip(provider: provider, id: rideID)
      trip.type = request.tripType
      trip.pickupPoint = request.pickupPoint
      trip.dropoffPoint = request.dropoffPoint
      trip.intermediateDestinations = request.intermediateDestinations
      trip.intermediateDestinationsVersion = request.intermediateDestinations.isEmpty ? nil : now
      trip.numberOfPassengers = request.numberOfPassengers
      trip.createTime = now
      trip.updateTime = now
      trip.remainingWaypointsVersion = now
      var ride = Ride(provider: provider, id: rideID, request: request)
      ride.waitingSince = now
      ride.createTime = now
      ride.updateTime = now
      let changes = [s.put(trip), s.put(ride)]
      return (RideView(s.rides[provider]![rideID]!, trip: s.trips[provider]![rideID]!), changes)
    }
  }

  /// The request with its defaults filled (EXCLUSIVE, one passenger) and every rule checked:
  /// the trip's own (CreateTrip) and the vehicle conditions' (SearchVehicles).
  static func normalized(_ request: RideRequest) throws(FleetError) -> RideRequest {
    var r = request
    guard let pickup = r.pickupPoint else { throw .invalid("ride.pickup_point is required") }
    try pickup.point.validate("ride.pickup_point.point")
    try r.dropoffPoint?.point.validate("ride.dropoff_point.point")
    if r.tripType == .unknown { r.tripType = .exclusive }
    if r.tripType == .shared && r.dropoffPoint == nil {
      throw .invalid("ride.dropoff_point is required for a SHARED ride")
    }
    if !r.intermediateDestinations.isEmpty && r.dropoffPoint == nil {
      throw .invalid("ride.dropoff_point is required when ride.intermediate_destinations are given")
    }
    if !r.intermediateDestinations.isEmpty && r.tripType == .shared {
      throw .invalid("ride.intermediate_destinations are only supported for EXCLUSIVE rides")
    }
    // As many stops as a route request takes in Google's Routes API: a booking is not a tour.
    guard r.intermediateDestinations.count <= 25 else {
      throw .invalid(
        "ride.intermediate_destinations may hold at most 25 stops, got \(r.intermediateDestinations.count)")
    }
    for (i, stop) in r.intermediateDestinations.enumerated() {
      try stop.point.validate("ride.intermediate_destinations[\(i)].point")
    }
    guard r.numberOfPassengers >= 0 else {
      throw .invalid("ride.number_of_passengers must not be negative, got \(r.numberOfPassengers)")
    }
    if r.numberOfPassengers == 0 { r.numberOfPassengers = 1 }
    try AttributeQuery.checkExclusive(filter: r.filter, requiredGiven: !r.requiredAttributes.isEmpty)
    guard r.requiredAttributes.count <= 50 else {
      throw .invalid("ride.required_attributes may hold at most 50 attributes, got \(r.requiredAttributes.count)")
    }
    for (i, attribute) in r.requiredAttributes.enumerated() where attribute.key.isEmpty || attribute.key.contains(":") {
      throw .invalid("ride.required_attributes[\(i)].key is required and must not contain ':'")
    }
    if !r.filter.isEmpty { _ = try AttributeFilter(parsing: r.filter, field: "ride.filter") }
    return r
  }

  // MARK: - GetRide, ListRides

  public func getRide(caller: Caller, name: ResourceName) throws(FleetError) -> RideView {
    try caller.mayCall(.getRide)
    try caller.checkProvider(name.provider)
    return try read { s throws(FleetError) in
      guard let ride = s.rides[name.provider]?[name.id] else { throw .notFound("ride \(name) not found") }
      return RideView(ride, trip: s.trips[name.provider]?[name.id])
    }
  }

  /// Rides in ID order, with stable opaque page tokens.
  public func listRides(caller: Caller, provider: String, pageSize: Int32, pageToken: String) throws(FleetError)
    -> (rides: [RideView], nextPageToken: String)
  {
    try caller.mayCall(.listRides)
    try caller.checkProvider(provider)
    let size = try PageToken.pageSize(pageSize)
    let fingerprint = "rides|\(provider)"
    let after = try PageToken.decode(pageToken, query: fingerprint)
    return state.withLock { s in
      let rides = (s.rides[provider] ?? [:]).values.filter { ride in after.map { ride.id > $0 } ?? true }
        .sorted { $0.id < $1.id }
      let page = rides.prefix(size).map { RideView($0, trip: s.trips[provider]?[$0.id]) }
      let next = rides.count > size ? PageToken.encode(after: page.last!.ride.id, query: fingerprint) : ""
      return (page, next)
    }
  }

  // MARK: - CancelRide

  /// Cancels the ride and its trip (CANCELED, off its vehicle). A canceled ride is returned as
  /// it is; a completed one is FAILED_PRECONDITION.
  public func cancelRide(caller: Caller, name: ResourceName) async throws(FleetError) -> RideView {
    try caller.mayCall(.cancelRide)
    try caller.checkProvider(name.provider)
    return try await write { s, now throws(FleetError) in
      guard var ride = s.rides[name.provider]?[name.id] else { throw .notFound("ride \(name) not found") }
      let shown = RideView(ride, trip: s.trips[name.provider]?[name.id])
      if shown.state == .completed {
        throw .precondition("ride \(name) is COMPLETED and can no longer be canceled")
      }
      var changes: [StoredChange] = []
      if var trip = s.trips[name.provider]?[name.id], !trip.status.isTerminal {
        changes += try Self.cancel(&trip, in: &s, now: now)
      }
      if shown.state != .noVehicleFound { ride.dispatchState = .canceled }
      ride.updateTime = now
      changes.append(s.put(ride))
      return (RideView(s.rides[name.provider]![name.id]!, trip: s.trips[name.provider]?[name.id]), changes)
    }
  }

  /// Moves a trip to CANCELED and off its vehicle; returns the changes to commit.
  static func cancel(_ trip: inout Trip, in s: inout State, now: Date) throws(FleetError) -> [StoredChange] {
    let old = trip
    trip.status = .canceled
    trip.updateTime = now
    trip.remainingWaypointsVersion = now
    let vehicles = try syncVehicles(old: old, new: trip, order: [], state: s, now: now)
    return [s.put(trip)] + vehicles.map { s.put($0) }
  }
}
