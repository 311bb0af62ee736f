import FleetGeometry
import Foundation

/// What a ride costs once it happened: the meter starts at the pickup, the final fare is set at
/// completion, the cancellation fee when a rider cancels after a vehicle was assigned.
extension Fleet {
  /// The trip statuses after the rider got in.
  static let riderAboard: Set<TripStatus> = [
    .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination, .enrouteToDropoff, .complete,
  ]

  /// After every write: each priced or pooled ride whose trip the write moved past the pickup
  /// gets its meter start (what a pooled ride's detour is measured from), and a priced one at
  /// completion its final fare. Returns the rides' changes.
  func settleRides(in s: inout State, now: Date) -> [StoredChange] {
    guard let touched = s.touched else { return [] }
    var changes: [StoredChange] = []
    for key in touched.keys where key.kind == .trip {
      guard let trip = s.trips[key.provider]?[key.id], var ride = s.rides[key.provider]?[key.id],
        ride.product != nil || ride.directSeconds != nil
      else { continue }
      let vehicle = trip.vehicleID.isEmpty ? nil : s.vehicles[key.provider]?[trip.vehicleID]
      var changed = false
      if ride.meterStart == nil, Self.riderAboard.contains(trip.status) {
        ride.meterStart = MeterReading(meters: vehicle?.odometer?.meters ?? 0, time: now)
        changed = true
      }
      if trip.status == .complete, ride.finalFare == nil, ride.product != nil {
        (ride.finalFare, ride.finalFareReason) = finalFare(of: ride, trip: trip, vehicle: vehicle, now: now)
        changed = true
      }
      if changed {
        ride.updateTime = now
        changes.append(s.put(ride))
      }
    }
    return changes
  }

  /// A completed ride's fare and, when it differs from the agreed one, why. Upfront: the agreed
  /// fare, priced anew on the route the ride took when its stops or drop-off changed. Metered:
  /// the distance the vehicle reported driving and the time since the pickup.
  func finalFare(of ride: Ride, trip: Trip, vehicle: Vehicle?, now: Date) -> (Fare?, String?) {
    guard let name = ride.product, let tariff = configuration.tariffs.providers[ride.provider],
      let product = tariff.product(named: name)
    else { return (ride.fare, nil) }
    let surge = ride.fare?.surge ?? .one
    let ends = [trip.pickupPoint?.point, trip.dropoffPoint?.point].compactMap { $0 }
    let fees = zoneFees(at: ends, provider: ride.provider, currency: tariff.currency)
    switch product.pricing {
    case .metered:
      let start = ride.meterStart
      let metres = max(0, (vehicle?.odometer?.meters ?? 0) - (start?.meters ?? 0))
      let seconds = max(0, now.timeIntervalSince(start?.time ?? now))
      return (FarePricing.fare(product, meters: metres, seconds: seconds, surge: surge, zoneFees: fees), nil)
    case .upfront:
      let booked = ride.request
      let changes = [
        trip.pickupPoint != booked.pickupPoint ? "the pickup" : nil,
        trip.intermediateDestinations != booked.intermediateDestinations ? "the stops" : nil,
        trip.dropoffPoint != booked.dropoffPoint ? "the drop-off" : nil,
      ].compactMap { $0 }
      guard !changes.isEmpty, let points = Self.routePoints(of: trip) else { return (ride.fare, nil) }
      // Routed when the ride changed (UpdateTrip); straight lines only if that route is stale.
      let route: TravelEstimate
      if let planned = ride.route, planned.points == points {
        route = TravelEstimate(seconds: planned.seconds, metres: planned.metres)
      } else {
        route = (StraightLineTravel().legs(through: points, now: now) ?? []).reduce(.zero, +)
      }
      let fare = FarePricing.fare(product, meters: route.metres, seconds: route.seconds, surge: surge, zoneFees: fees)
      let what = changes.count == 1 ? changes[0] : changes.dropLast().joined(separator: ", ") + " and " + changes.last!
      return (fare, "re-priced: \(what) changed after booking")
    }
  }

  /// Pickup, stops, drop-off; nil without a drop-off.
  static func routePoints(of trip: Trip) -> [LatLng]? {
    guard let pickup = trip.pickupPoint?.point, let dropoff = trip.dropoffPoint?.point else { return nil }
    return [pickup] + trip.intermediateDestinations.map(\.point) + [dropoff]
  }

  /// The route a priced ride's trip would take with `update`'s points, when it changes any of
  /// them; routed outside the lock, before UpdateTrip's write.
  func reroute(
    _ name: ResourceName, pickup: TerminalLocation??, stops: [TerminalLocation]?, dropoff: TerminalLocation??
  )
    -> PlannedRoute?
  {
    guard pickup != nil || stops != nil || dropoff != nil else { return nil }
    let trip: Trip? = state.withLock { s in
      guard s.rides[name.provider]?[name.id]?.pricing == .upfront else { return nil }
      return s.trips[name.provider]?[name.id]
    }
    guard var trip else { return nil }
    if let pickup { trip.pickupPoint = pickup }
    if let stops { trip.intermediateDestinations = stops }
    if let dropoff { trip.dropoffPoint = dropoff }
    guard let points = Self.routePoints(of: trip), let estimate = try? route(through: points, at: now()) else {
      return nil
    }
    return PlannedRoute(points: points, metres: estimate.metres, seconds: estimate.seconds)
  }

  /// Moves the odometer to a newly reported position: a step counts once it is longer than the
  /// fix's accuracy (at least 10 m), so that a standing car's jitter adds nothing.
  static func advance(_ odometer: inout Odometer?, to position: LatLng, accuracy: Double?) {
    guard let current = odometer else {
      odometer = Odometer(meters: 0, anchor: position)
      return
    }
    let step = current.anchor.distance(to: position)
    guard step > max(10, accuracy ?? 0) else { return }
    odometer = Odometer(meters: current.meters + step, anchor: position)
  }
}
