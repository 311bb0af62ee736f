import Foundation

extension Fleet {
  // MARK: - CreateRide

  /// Books a ride: creates its trip (NEW, trip ID = ride ID, unassigned) and the ride in one
  /// durable write: WAITING, or SCHEDULED when it has a pickup time. With a tariff, the ride is
  /// sold as a product at a fare: its quote's, or priced now. The ride ID is the idempotency key:
  /// the same request again returns the same ride; another request under the same ID is
  /// ALREADY_EXISTS.
  public func createRide(caller: Caller, provider: String, rideID: String, request input: RideRequest)
    async throws(FleetError) -> RideView
  {
    try await createRide(try prepareRide(caller: caller, provider: provider, rideID: rideID, request: input))
  }

  /// A booking checked and priced, ready to write.
  public struct PreparedRide: Sendable {
    let provider: String
    let rideID: String
    let request: RideRequest
    let sale: Sale?
  }

  /// CreateRide's first half: every check and the fare, which may route. Synchronous and
  /// outside the lock, so that a transport can run it where long work belongs.
  public func prepareRide(caller: Caller, provider: String, rideID: String, request input: RideRequest)
    throws(FleetError) -> PreparedRide
  {
    try caller.mayCall(.createRide)
    try caller.checkProvider(provider)
    try ResourceID.validate(rideID, field: "ride_id")
    let (request, product) = try normalizedBooking(input, provider: provider)
    let repeated = state.withLock { $0.rides[provider]?[rideID]?.request == request }
    // A repeat is answered with the ride as booked, even once its quote has expired.
    let sale = repeated ? nil : try price(request, product: product, provider: provider)
    return PreparedRide(provider: provider, rideID: rideID, request: request, sale: sale)
  }

  /// CreateRide's second half: the durable write of a prepared booking.
  public func createRide(_ prepared: PreparedRide) async throws(FleetError) -> RideView {
    let (provider, rideID, request, sale) = (prepared.provider, prepared.rideID, prepared.request, prepared.sale)
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
      if request.pickupTime != nil { ride.dispatchState = .scheduled }
      ride.waitingSince = now
      ride.createTime = now
      ride.updateTime = now
      if let sale {
        ride.product = sale.product.name
        ride.pricing = sale.product.pricing
        ride.vehicleCategory = sale.product.vehicleCategory
        ride.pooling = sale.product.tripType == .shared ? sale.product.pooling : nil
        ride.fare = sale.fare
        ride.route = sale.route
      }
      let changes = [s.put(trip), s.put(ride)]
      return (RideView(s.rides[provider]![rideID]!, trip: s.trips[provider]![rideID]!), changes)
    }
  }

  /// The booking with its defaults filled and every rule checked, and the product it buys (with
  /// a tariff): the quote's, the one named, or the first that fits. The trip type is the
  /// product's. Pure: a repeat of a booking normalizes to the same request.
  func normalizedBooking(_ input: RideRequest, provider: String) throws(FleetError) -> (RideRequest, Product?) {
    var request = try Self.normalized(input, defaultTripType: configuration.tariffs.providers[provider] == nil)
    guard let tariff = configuration.tariffs.providers[provider] else {
      if request.quoteID != nil || request.product != nil {
        throw .precondition(
          "ride.\(request.quoteID != nil ? "quote_id" : "product") needs a tariff, and provider '\(provider)' has none (`fleetd serve --tariffs`)"
        )
      }
      return (request, nil)
    }
    let stops = request.intermediateDestinations.count
    var product: Product
    if let id = request.quoteID {
      let terms = try openQuote(id)
      guard let sold = tariff.product(named: terms.product) else {
        throw .precondition(
          "ride.quote_id is for product '\(terms.product)', which provider '\(provider)' no longer sells")
      }
      if let named = request.product, named != terms.product {
        throw .invalid("ride.product '\(named)' differs from the quote's product '\(terms.product)'")
      }
      product = sold
    } else if let name = request.product {
      guard let named = tariff.product(named: name) else {
        throw .invalid(
          "ride.product '\(name)' is not a product of provider '\(provider)' (\(tariff.products.map(\.name).joined(separator: ", ")))"
        )
      }
      product = named
    } else {
      guard
        let first = tariff.products.first(where: {
          $0.carries(request.numberOfPassengers, stops: stops)
            && (request.tripType == .unknown || $0.tripType == request.tripType)
            && (request.dropoffPoint != nil || $0.pricing == .metered)
        })
      else {
        throw .invalid(
          "no product of provider '\(provider)' fits the ride: \(request.numberOfPassengers) passenger(s)\(request.tripType == .unknown ? "" : ", \(request.tripType.wireName)")\(stops > 0 ? ", \(stops) stop(s)" : "")\(request.dropoffPoint == nil ? ", no drop-off (only a metered product prices a ride without one)" : "")"
        )
      }
      product = first
    }
    guard request.tripType == .unknown || request.tripType == product.tripType else {
      throw .invalid(
        "ride.trip_type \(request.tripType.wireName) differs from product '\(product.name)', which is \(product.tripType.wireName)"
      )
    }
    guard product.carries(request.numberOfPassengers, stops: stops) else {
      throw .invalid(
        stops > 0 && product.tripType != .exclusive
          ? "ride.intermediate_destinations are only supported for EXCLUSIVE products; '\(product.name)' is \(product.tripType.wireName)"
          : "ride.number_of_passengers \(request.numberOfPassengers) is more than product '\(product.name)' seats (\(product.seats))"
      )
    }
    guard request.dropoffPoint != nil || product.pricing == .metered else {
      throw .invalid("ride.dropoff_point is required to price upfront product '\(product.name)'")
    }
    request.tripType = product.tripType
    if request.tripType == .shared && request.dropoffPoint == nil {
      throw .invalid("ride.dropoff_point is required for a SHARED ride")
    }
    return (request, product)
  }

  /// What a booking is sold as.
  struct Sale: Sendable {
    var product: Product
    /// Nil for a metered product booked without a drop-off: the meter alone prices it.
    var fare: Fare?
    var route: PlannedRoute?
  }

  /// Checks the booking against the rules of the moment (pickup time, service areas, the
  /// quote's expiry and points) and prices it. Outside the lock: it may route.
  func price(_ request: RideRequest, product: Product?, provider: String) throws(FleetError) -> Sale? {
    let now = now()
    let tariff = configuration.tariffs.providers[provider]
    try Self.checkPickupTime(request.pickupTime, field: "ride.pickup_time", tariff: tariff, now: now)
    try checkServed(request.pickupPoint!.point, field: "ride.pickup_point", provider: provider)
    if let dropoff = request.dropoffPoint {
      try checkServed(dropoff.point, field: "ride.dropoff_point", provider: provider)
    }
    guard let product, let tariff else { return nil }
    let points =
      [request.pickupPoint!.point] + request.intermediateDestinations.map(\.point)
      + (request.dropoffPoint.map { [$0.point] } ?? [])
    if let id = request.quoteID {
      let terms = try openQuote(id)
      try Self.check(request, against: terms, provider: provider, now: now)
      let route = PlannedRoute(points: points, metres: terms.route.metres, seconds: terms.route.seconds)
      return Sale(product: product, fare: terms.fare, route: route)
    }
    guard request.dropoffPoint != nil else { return Sale(product: product) }
    let estimate = try route(through: points, at: request.pickupTime ?? now)
    let surge =
      request.pickupTime == nil
      ? surge(at: points[0], provider: provider, recordingQuote: false, now: now).multiplier : .one
    let fare = FarePricing.fare(
      product, meters: estimate.metres, seconds: estimate.seconds, surge: surge,
      zoneFees: zoneFees(at: [points.first!, points.last!], provider: provider, currency: tariff.currency))
    return Sale(
      product: product, fare: fare,
      route: PlannedRoute(points: points, metres: estimate.metres, seconds: estimate.seconds))
  }

  /// The terms a quote ID seals; FAILED_PRECONDITION when it is not one of this fleet's.
  func openQuote(_ id: String) throws(FleetError) -> QuoteTerms {
    guard let sealing = quoteSealing, let bytes = sealing.open(id), let terms = QuoteTerms(encoded: bytes) else {
      throw .precondition("ride.quote_id is not a quote this fleet issued, or it was altered")
    }
    return terms
  }

  /// A quote is honoured for its provider, until it expires, for its own points and party.
  static func check(_ request: RideRequest, against terms: QuoteTerms, provider: String, now: Date) throws(FleetError) {
    guard terms.provider == provider else {
      throw .precondition("ride.quote_id was issued for provider '\(terms.provider)', not '\(provider)'")
    }
    guard now <= terms.expireTime else {
      throw .precondition(
        "ride.quote_id expired at \(terms.expireTime.formatted(.iso8601)); ask for a new quote (QuoteRide)")
    }
    guard QuoteTerms.same(request.pickupPoint!.point, terms.pickup) else {
      throw .precondition("ride.pickup_point differs from the quote's pickup point")
    }
    guard let dropoff = request.dropoffPoint?.point, QuoteTerms.same(dropoff, terms.dropoff) else {
      throw .precondition("ride.dropoff_point differs from the quote's drop-off point")
    }
    let stops = request.intermediateDestinations.map(\.point)
    guard stops.count == terms.stops.count, zip(stops, terms.stops).allSatisfy({ QuoteTerms.same($0, $1) }) else {
      throw .precondition("ride.intermediate_destinations differ from the quote's stops")
    }
    guard request.numberOfPassengers == terms.passengers else {
      throw .precondition(
        "ride.number_of_passengers \(request.numberOfPassengers) differs from the quote's \(terms.passengers)")
    }
    let sameTime: Bool
    switch (request.pickupTime, terms.pickupTime) {
    case (nil, nil): sameTime = true
    case (let a?, let b?): sameTime = abs(a.timeIntervalSince(b)) < 0.001
    default: sameTime = false
    }
    guard sameTime else {
      throw .precondition(
        terms.pickupTime == nil
          ? "ride.pickup_time is set, but the quote is for a ride now"
          : "ride.pickup_time differs from the quote's \(terms.pickupTime!.formatted(.iso8601))")
    }
  }

  /// The request with its defaults filled (one passenger; EXCLUSIVE unless a product decides)
  /// and every rule checked: the trip's own (CreateTrip) and the vehicle conditions'
  /// (SearchVehicles).
  static func normalized(_ request: RideRequest, defaultTripType: Bool = true) throws(FleetError) -> RideRequest {
    var r = request
    guard let pickup = r.pickupPoint else { throw .invalid("ride.pickup_point is required") }
    try pickup.point.validate("ride.pickup_point.point")
    try r.dropoffPoint?.point.validate("ride.dropoff_point.point")
    if r.tripType == .unknown && defaultTripType { r.tripType = .exclusive }
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
      // A rider's token names its trip, whose ID is the ride's.
      try caller.checkTripAccess(tripID: name.id, assignedVehicle: nil)
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

  /// Cancels the ride and its trip (CANCELED, off its vehicle); after a vehicle was assigned, the
  /// product's cancellation fee is the final fare. A canceled ride is returned as it is; a
  /// completed one is FAILED_PRECONDITION.
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
      // A rider who cancels once a vehicle is on its way pays the product's cancellation fee.
      if shown.state == .assigned, ride.finalFare == nil, let productName = ride.product,
        let product = configuration.tariffs.providers[ride.provider]?.product(named: productName),
        product.cancellationFee.minorUnits > 0
      {
        ride.finalFare = FarePricing.cancellation(product)
      }
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
