import FleetGeometry
import Foundation

/// Quotes (fleetkit.v1.Rides/QuoteRide) and the rules a booking shares with them: the tariff,
/// the pickup time's horizon, the service areas, the route and zone fees a fare is priced on.
extension Fleet {
  // MARK: - QuoteRide

  /// Prices the ride with each product that can carry the party, in the tariff's order: the
  /// route with learned traffic, the zone fees, the surge at the pickup and, for a ride now, the
  /// pickup ETA of the nearest vehicle the dispatcher would offer; for a shared product, the
  /// longest the ride may take with other riders' detours. The quote ID seals the terms.
  public func quoteRide(caller: Caller, provider: String, request input: QuoteRequest) throws(FleetError)
    -> [RideQuote]
  {
    try caller.mayCall(.quoteRide)
    try caller.checkProvider(provider)
    let tariff = try tariff(of: provider)
    guard let sealing = quoteSealing else {
      throw .precondition("fleetd has no quote secret: quotes need a store that keeps one")
    }
    let now = now()
    let request = try Self.normalized(input, field: "")
    try Self.checkPickupTime(request.pickupTime, field: "pickup_time", tariff: tariff, now: now)
    let points = request.routePoints
    try checkServed(request.pickupPoint!.point, field: "pickup_point", provider: provider)
    try checkServed(request.dropoffPoint!.point, field: "dropoff_point", provider: provider)
    let products = tariff.products.filter { $0.carries(request.numberOfPassengers, stops: points.count - 2) }
    guard !products.isEmpty else {
      let most = tariff.products.map(\.seats).max() ?? 0
      throw .invalid(
        "number_of_passengers \(request.numberOfPassengers) is more than any product of provider '\(provider)' carries (at most \(most)\(points.count > 2 ? " on a ride with stops" : ""))"
      )
    }
    let route = try self.route(through: points, at: request.pickupTime ?? now)
    let fees = zoneFees(at: [points.first!, points.last!], provider: provider, currency: tariff.currency)
    let surge =
      request.pickupTime == nil
      ? surge(at: points[0], provider: provider, recordingQuote: true, now: now)
      : .none("rides booked for later are priced without surge")
    let etas = request.pickupTime == nil ? pickupETAs(products, request: request, provider: provider) : [:]
    let expire = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + tariff.quoteLifetime.seconds).rounded(.down))
    return products.map { product in
      let fare = FarePricing.fare(
        product, meters: route.metres, seconds: route.seconds, surge: surge.multiplier, zoneFees: fees)
      let terms = QuoteTerms(
        provider: provider, product: product.name, fare: fare, expireTime: expire, pickup: points.first!,
        dropoff: points.last!, stops: Array(points.dropFirst().dropLast()), passengers: request.numberOfPassengers,
        pickupTime: request.pickupTime, route: route)
      let eta = etas[ProductFleet(product)]
      return RideQuote(
        id: sealing.seal(terms.encoded), terms: terms, pricing: product.pricing,
        pickupSeconds: eta?.seconds, pickupUnavailableReason: request.pickupTime == nil ? eta?.reason : nil,
        surge: surge,
        maximumTripSeconds: product.tripType == .shared
          ? route.seconds * (product.pooling ?? configuration.dispatchRules.pooling).maximumDetour : nil)
    }
  }

  /// The request with its defaults filled and every field checked; `field` prefixes the names
  /// ("" for a quote, "ride." for a booking).
  static func normalized(_ input: QuoteRequest, field: String) throws(FleetError) -> QuoteRequest {
    var r = input
    guard let pickup = r.pickupPoint else { throw .invalid("\(field)pickup_point is required") }
    try pickup.point.validate("\(field)pickup_point.point")
    guard let dropoff = r.dropoffPoint else { throw .invalid("\(field)dropoff_point is required for a quote") }
    try dropoff.point.validate("\(field)dropoff_point.point")
    guard r.intermediateDestinations.count <= 25 else {
      throw .invalid(
        "\(field)intermediate_destinations may hold at most 25 stops, got \(r.intermediateDestinations.count)")
    }
    for (i, stop) in r.intermediateDestinations.enumerated() {
      try stop.point.validate("\(field)intermediate_destinations[\(i)].point")
    }
    guard r.numberOfPassengers >= 0 else {
      throw .invalid("\(field)number_of_passengers must not be negative, got \(r.numberOfPassengers)")
    }
    if r.numberOfPassengers == 0 { r.numberOfPassengers = 1 }
    return r
  }

  /// The provider's tariff; FAILED_PRECONDITION without one.
  func tariff(of provider: String) throws(FleetError) -> ProviderTariff {
    guard let tariff = configuration.tariffs.providers[provider] else {
      throw .precondition(
        "provider '\(provider)' has no tariff: fleetd prices rides for the providers of its tariff file (`fleetd serve --tariffs`)"
      )
    }
    return tariff
  }

  /// A ride for later must be in the future and within the tariff's scheduling horizon.
  static func checkPickupTime(_ time: Date?, field: String, tariff: ProviderTariff?, now: Date) throws(FleetError) {
    guard let time else { return }
    guard time > now else {
      throw .invalid("\(field) \(time.formatted(.iso8601)) is in the past; leave it unset for a ride now")
    }
    let horizon = (tariff?.scheduling ?? SchedulingSettings()).horizon
    guard time.timeIntervalSince(now) <= horizon.seconds else {
      let days = horizon.seconds / 86_400
      throw .invalid(
        "\(field) \(time.formatted(.iso8601)) is beyond the booking horizon of \(days.formatted()) day\(days == 1 ? "" : "s") from now"
      )
    }
  }

  /// FAILED_PRECONDITION, naming the point, when the provider does not serve it.
  func checkServed(_ point: LatLng, field: String, provider: String) throws(FleetError) {
    guard configuration.serviceAreas.serves(point, provider: provider) else {
      throw .precondition(
        "\(field) (\(point.latitude), \(point.longitude)) is outside every service area of provider '\(provider)'")
    }
  }

  /// The drive through `points` in order, with traffic at `time`; FAILED_PRECONDITION when some
  /// leg has no route. Called outside the lock.
  func route(through points: [LatLng], at time: Date) throws(FleetError) -> TravelEstimate {
    let estimator = travel ?? StraightLineTravel()
    guard let legs = estimator.legs(through: points, now: time) else {
      throw .precondition("no route by road joins the pickup, the stops and the drop-off")
    }
    return legs.reduce(.zero, +)
  }

  /// One ZONE_FEE for each of the provider's zones with a fee where the ride starts or ends.
  func zoneFees(at ends: [LatLng], provider: String, currency: Currency) -> [Money] {
    var seen = Set<String>()
    var fees: [Money] = []
    for point in ends {
      for zone in configuration.serviceAreas.zones(at: point, provider: provider) {
        guard let fee = zone.fee, seen.insert(zone.name).inserted, let money = fee.money(currency) else { continue }
        fees.append(money)
      }
    }
    return fees
  }

  /// The kind of vehicle and trip a product sends: products that share it share a pickup ETA.
  struct ProductFleet: Hashable {
    var category: VehicleCategory
    var tripType: TripType

    init(_ product: Product) {
      category = product.vehicleCategory
      tripType = product.tripType
    }
  }

  /// For each kind of vehicle the products send: the driving seconds of the nearest vehicle
  /// the dispatcher would offer for this ride (by its own rules and road ETAs), or why none.
  func pickupETAs(_ products: [Product], request: QuoteRequest, provider: String)
    -> [ProductFleet: (seconds: Double?, reason: String?)]
  {
    let rules = configuration.dispatchRules
    let fleets = Array(Set(products.map(ProductFleet.init)))
    let pending = fleets.map { kind -> PendingRide in
      var asked = RideRequest()
      asked.pickupPoint = request.pickupPoint
      asked.dropoffPoint = request.dropoffPoint
      asked.intermediateDestinations = request.intermediateDestinations
      asked.numberOfPassengers = request.numberOfPassengers
      asked.tripType = kind.tripType
      var ride = Ride(provider: provider, id: "", request: asked)
      ride.vehicleCategory = kind.category
      var trip = Trip(provider: provider, id: "")
      trip.type = kind.tripType
      trip.pickupPoint = request.pickupPoint
      trip.dropoffPoint = request.dropoffPoint
      trip.intermediateDestinations = request.intermediateDestinations
      trip.numberOfPassengers = request.numberOfPassengers
      return PendingRide(ride: ride, trip: trip)
    }
    let options = dispatchOptions(for: pending, rules: rules)
    var etas: [ProductFleet: (Double?, String?)] = [:]
    for (kind, found) in zip(fleets, options) {
      if let nearest = found.map(\.pickupSeconds).min() {
        etas[kind] = (nearest, nil)
      } else {
        etas[kind] = (
          nil,
          "no online \(kind.category.wireName) vehicle with room for \(request.numberOfPassengers) on a \(kind.tripType.wireName) trip within \(rules.pickupRadiusMeters) m of the pickup can reach it now"
        )
      }
    }
    return etas
  }
}

extension QuoteRequest {
  /// Pickup, stops, drop-off.
  var routePoints: [LatLng] {
    [pickupPoint!.point] + intermediateDestinations.map(\.point) + [dropoffPoint!.point]
  }
}

extension Product {
  /// Whether one booking of `passengers` fits, and, with stops, whether the product allows them
  /// (only EXCLUSIVE trips have intermediate destinations).
  func carries(_ passengers: Int32, stops: Int) -> Bool {
    passengers <= seats && (stops == 0 || tripType == .exclusive)
  }
}
