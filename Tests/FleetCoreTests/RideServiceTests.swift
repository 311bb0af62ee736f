import FleetCore
import FleetGeometry
import Foundation
import Testing

/// Seals quote terms as they are, with a checksum: enough to tell an altered ID in a unit
/// test (FleetAuth's `QuoteSealer` signs them for real).
struct ChecksumSealer: QuoteSealing {
  func seal(_ terms: [UInt8]) -> String {
    let sum = terms.reduce(UInt32(7)) { $0 &* 31 &+ UInt32($1) }
    return "t." + terms.map { String(format: "%02x", $0) }.joined() + "." + String(sum)
  }

  func open(_ id: String) -> [UInt8]? {
    let parts = id.split(separator: ".")
    guard parts.count == 3, parts[0] == "t", parts[1].count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = parts[1].startIndex
    while index < parts[1].endIndex {
      let next = parts[1].index(index, offsetBy: 2)
      guard let byte = UInt8(parts[1][index..<next], radix: 16) else { return nil }
      bytes.append(byte)
      index = next
    }
    return seal(bytes) == id ? bytes : nil
  }
}

let tariffJSON = """
  {"providers": {"acme": {
    "currency": "EUR",
    "products": [
      {"name": "standard", "vehicleCategory": "AUTO", "tripType": "EXCLUSIVE", "seats": 4, "pricing": "upfront",
       "base": "2.50", "perKm": "1.20", "perMinute": "0.30", "minimum": "7.00", "bookingFee": "1.00",
       "cancellationFee": "5.00"},
      {"name": "shared", "vehicleCategory": "AUTO", "tripType": "SHARED", "seats": 1, "pricing": "upfront",
       "base": "1.50", "perKm": "0.80", "perMinute": "0.20", "minimum": "4.00"},
      {"name": "taxi", "vehicleCategory": "TAXI", "tripType": "EXCLUSIVE", "seats": 4, "pricing": "metered",
       "base": "3.00", "perKm": "1.50", "perMinute": "0.40", "minimum": "4.00"}],
    "surge": {"max": "2.0", "windowMinutes": 10},
    "scheduling": {"horizonDays": 2}}}}
  """

/// Monaco as the service area, with the casino square as a zone with a fee and surge.
let areasJSON = """
  {"type": "FeatureCollection", "features": [
    {"type": "Feature", "properties": {"provider": "acme", "kind": "service_area", "name": "Monaco"},
     "geometry": {"type": "Polygon", "coordinates": [[[7.40, 43.72], [7.45, 43.72], [7.45, 43.76], [7.40, 43.76], [7.40, 43.72]]]}},
    {"type": "Feature", "properties": {"provider": "acme", "kind": "zone", "name": "Casino", "fee": "2.00", "surge": true},
     "geometry": {"type": "Polygon", "coordinates": [[[7.426, 43.738], [7.429, 43.738], [7.429, 43.741], [7.426, 43.741], [7.426, 43.738]]]}}
  ]}
  """

let outsideMonaco = LatLng(latitude: 43.70, longitude: 7.27)  // Nice

func rideServiceFleet(
  clock: TestClock = TestClock(), store: MemoryStore = MemoryStore(), tariffs json: String = tariffJSON
) async throws -> Fleet {
  var configuration = FleetConfiguration()
  try configuration.setRideService(
    tariffs: try Tariffs(json: Data(json.utf8), source: "tariffs.json"),
    serviceAreas: try ServiceAreas(geoJSON: Data(areasJSON.utf8), source: "areas.geojson"), source: "areas.geojson")
  return try await Fleet(
    store: store, configuration: configuration, quoteSealing: ChecksumSealer(), clock: clock.read)
}

func quoteRequest(from pickup: LatLng = monaco, to dropoff: LatLng = port, passengers: Int32 = 1, at time: Date? = nil)
  -> QuoteRequest
{
  var request = QuoteRequest()
  request.pickupPoint = TerminalLocation(point: pickup)
  request.dropoffPoint = TerminalLocation(point: dropoff)
  request.numberOfPassengers = passengers
  request.pickupTime = time
  return request
}

func rideRequest(from pickup: LatLng = monaco, to dropoff: LatLng? = port, quote: String? = nil, product: String? = nil)
  -> RideRequest
{
  var request = RideRequest()
  request.pickupPoint = TerminalLocation(point: pickup)
  request.dropoffPoint = dropoff.map(TerminalLocation.init)
  request.quoteID = quote
  request.product = product
  return request
}

/// An online vehicle of `category` reporting at `point`.
func addVehicle(_ fleet: Fleet, _ id: String, at point: LatLng, category: VehicleCategory = .auto) async throws {
  var input = vehicleInput(id)
  input.vehicle.category = category
  input.vehicle.lastLocation = VehicleLocation(location: point)
  _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: id, vehicle: input)
}

/// Runs one dispatch round by hand: every waiting ride to its nearest vehicle.
func dispatchOnce(_ fleet: Fleet) async throws {
  let pending = fleet.pendingRides()
  for (ride, options) in zip(pending, fleet.dispatchOptions(for: pending, rules: DispatchRules())) {
    guard let best = options.min(by: { $0.pickupSeconds < $1.pickupSeconds }) else { continue }
    _ = try await fleet.assign(ride, best)
  }
}

/// One location report of car-1, stored.
func report(_ fleet: Fleet, _ point: LatLng, at time: Date) async throws {
  for outcome in await fleet.submitReports([locationReport(point, at: time)], caller: admin).stored() {
    _ = try outcome.get()
  }
}

func moveTrip(_ fleet: Fleet, _ id: String, to status: TripStatus) async throws {
  _ = try await fleet.updateTrip(
    caller: admin, name: tripName(id), trip: FleetCoreTests.status(status), mask: ["trip_status"])
}

@Suite("Quotes")
struct QuoteTests {
  @Test func oneQuotePerProductThatCarriesTheParty() async throws {
    let fleet = try await rideServiceFleet()
    let one = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())
    #expect(one.map(\.terms.product) == ["standard", "shared", "taxi"])
    let two = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(passengers: 2))
    #expect(two.map(\.terms.product) == ["standard", "taxi"], "shared seats one")
    let error = await fleetError {
      _ = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(passengers: 5))
    }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("number_of_passengers 5") == true)
    for quote in one {
      #expect(quote.terms.fare.items.reduce(0) { $0 + $1.amount.minorUnits } == quote.terms.fare.total.minorUnits)
      #expect(abs(quote.terms.route.metres - monaco.distance(to: port)) < 1, "straight lines without a graph")
    }
  }

  @Test func aPooledQuoteIsBoundByItsProductsDetour() async throws {
    let fleet = try await rideServiceFleet()
    let quote = try #require(
      try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest()).first {
        $0.terms.product == "shared"
      })
    let seconds = quote.terms.route.seconds
    #expect(quote.maximumTripSeconds == seconds * DispatchRules().pooling.maximumDetour)
    let own = try await rideServiceFleet(
      tariffs: tariffJSON.replacingOccurrences(
        of: #""minimum": "4.00"},"#, with: #""minimum": "4.00", "poolMaxDetour": "2"},"#))
    let bound = try own.quoteRide(caller: admin, provider: provider, request: quoteRequest())
    #expect(bound.first { $0.terms.product == "shared" }?.maximumTripSeconds == seconds * 2)
    #expect(bound.first { $0.terms.product == "standard" }?.maximumTripSeconds == nil)
  }

  @Test func theRouteDistanceAndTimePriceTheFare() async throws {
    let fleet = try await rideServiceFleet()
    let quote = try #require(try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest()).first)
    let expected = FarePricing.fare(
      try testProduct("standard"), meters: quote.terms.route.metres,
      seconds: quote.terms.route.seconds)
    #expect(quote.terms.fare == expected)
  }

  @Test func aZoneFeeIsChargedOncePerZoneWhereTheRideStartsOrEnds() async throws {
    let fleet = try await rideServiceFleet()
    let toCasino = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(to: casino))[0]
    #expect(toCasino.terms.fare.items.filter { $0.kind == .zoneFee }.map(\.amount) == [euros("2.00")])
    let plain = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(to: port))[0]
    #expect(plain.terms.fare.amount(.zoneFee).minorUnits == 0)
  }

  @Test func thePickupETAIsTheNearestVehicleTheDispatcherWouldSend() async throws {
    let fleet = try await rideServiceFleet()
    let none = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())
    #expect(none.allSatisfy { $0.pickupSeconds == nil && $0.pickupUnavailableReason != nil })
    try await addVehicle(fleet, "near", at: LatLng(latitude: 43.7390, longitude: 7.4250))
    try await addVehicle(fleet, "far", at: casino)
    let quotes = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())
    let near = LatLng(latitude: 43.7390, longitude: 7.4250).distance(to: monaco) / StraightLineTravel.defaultSpeed
    #expect(abs((quotes[0].pickupSeconds ?? 0) - near) < 1, "standard: the nearer AUTO")
    #expect(quotes[1].pickupSeconds != nil, "shared: AUTO too")
    #expect(quotes[2].pickupSeconds == nil, "no TAXI online")
    #expect(quotes[2].pickupUnavailableReason?.contains("TAXI") == true)
  }

  @Test func pointsOutsideTheServiceAreaAreRefusedByName() async throws {
    let fleet = try await rideServiceFleet()
    let error = await fleetError {
      _ = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(to: outsideMonaco))
    }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("dropoff_point (43.7, 7.27) is outside every service area") == true)
  }

  @Test func aProviderWithoutATariffIsToldSo() async throws {
    let fleet = try await rideServiceFleet()
    let other = Caller.admin(of: "other")
    let error = await fleetError { _ = try fleet.quoteRide(caller: other, provider: "other", request: quoteRequest()) }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("has no tariff") == true)
  }

  @Test func pickupTimesInThePastOrBeyondTheHorizonAreInvalid() async throws {
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock)
    let now = clock.read()
    for (time, words) in [(now.addingTimeInterval(-60), "in the past"), (now.addingTimeInterval(3 * 86_400), "beyond")]
    {
      let error = await fleetError {
        _ = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(at: time))
      }
      #expect(error?.code == .invalidArgument)
      #expect(error?.message.contains("pickup_time") == true && error?.message.contains(words) == true)
    }
    let later = try fleet.quoteRide(
      caller: admin, provider: provider, request: quoteRequest(at: now.addingTimeInterval(3600)))
    #expect(
      later.allSatisfy { $0.pickupSeconds == nil && $0.pickupUnavailableReason == nil && $0.surge.multiplier == .one })
  }
}

/// The test tariff's product of that name.
func testProduct(_ name: String) throws -> Product {
  try #require(
    try Tariffs(json: Data(tariffJSON.utf8), source: "tariffs.json").providers[provider]?.product(named: name))
}

@Suite("Booking with a quote")
struct BookingTests {
  @Test func aQuoteBooksItsProductAtItsPrice() async throws {
    let fleet = try await rideServiceFleet()
    let quote = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())[1]
    let view = try await fleet.createRide(
      caller: admin, provider: provider, rideID: "r1", request: rideRequest(quote: quote.id))
    #expect(view.ride.product == "shared")
    #expect(view.ride.request.tripType == .shared)
    #expect(view.ride.fare == quote.terms.fare)
    #expect(view.state == .waiting)
    // The same booking again is the same ride.
    let again = try await fleet.createRide(
      caller: admin, provider: provider, rideID: "r1", request: rideRequest(quote: quote.id))
    #expect(again.ride.fare == view.ride.fare)
  }

  @Test func anExpiredQuoteIsRefusedButItsBookingRepeats() async throws {
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock)
    let quote = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())[0]
    _ = try await fleet.createRide(
      caller: admin, provider: provider, rideID: "r1", request: rideRequest(quote: quote.id))
    clock.advance(301)
    let repeated = try await fleet.createRide(
      caller: admin, provider: provider, rideID: "r1", request: rideRequest(quote: quote.id))
    #expect(repeated.ride.fare == quote.terms.fare)
    let error = await fleetError {
      _ = try await fleet.createRide(
        caller: admin, provider: provider, rideID: "r2", request: rideRequest(quote: quote.id))
    }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("expired") == true)
  }

  @Test func aQuoteIsOnlyForItsOwnPointsProviderAndSeal() async throws {
    let fleet = try await rideServiceFleet()
    let quote = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest())[0]
    var elsewhere = rideRequest(to: casino, quote: quote.id)
    var error = await fleetError {
      _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: elsewhere)
    }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("ride.dropoff_point differs from the quote") == true)
    elsewhere = rideRequest(quote: quote.id)
    elsewhere.numberOfPassengers = 3
    error = await fleetError {
      _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: elsewhere)
    }
    #expect(error?.message.contains("number_of_passengers 3 differs") == true)
    let altered = quote.id.replacingOccurrences(of: ".", with: ".0", options: [], range: nil)
    error = await fleetError {
      _ = try await fleet.createRide(
        caller: admin, provider: provider, rideID: "r1", request: rideRequest(quote: altered))
    }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("not a quote this fleet issued") == true)
  }

  @Test func withoutAQuoteTheFirstProductThatFitsPricesIt() async throws {
    let fleet = try await rideServiceFleet()
    let view = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: rideRequest())
    #expect(view.ride.product == "standard")
    #expect(view.ride.pricing == .upfront)
    #expect(view.ride.vehicleCategory == .auto)
    #expect(view.ride.fare?.total.minorUnits ?? 0 >= 700, "at least the minimum")
    let metered = try await fleet.createRide(
      caller: admin, provider: provider, rideID: "r2", request: rideRequest(to: nil, product: "taxi"))
    #expect(metered.ride.pricing == .metered)
    #expect(metered.ride.fare == nil, "no drop-off: the meter prices it")
    let error = await fleetError {
      _ = try await fleet.createRide(
        caller: admin, provider: provider, rideID: "r3", request: rideRequest(product: "limousine"))
    }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("'limousine' is not a product") == true)
    let upfrontWithoutDropoff = await fleetError {
      _ = try await fleet.createRide(
        caller: admin, provider: provider, rideID: "r4", request: rideRequest(to: nil, product: "standard"))
    }
    #expect(upfrontWithoutDropoff?.message.contains("dropoff_point is required to price upfront") == true)
  }

  @Test func aRideForLaterIsScheduled() async throws {
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock)
    var request = rideRequest()
    request.pickupTime = clock.read().addingTimeInterval(3600)
    let view = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: request)
    #expect(view.state == .scheduled)
    #expect(fleet.pendingRides().isEmpty, "not dispatched before its release")
    request.pickupTime = clock.read().addingTimeInterval(-1)
    let error = await fleetError {
      _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r2", request: request)
    }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("ride.pickup_time") == true)
  }
}

@Suite("Final fares")
struct FinalFareTests {
  /// Books, dispatches and picks up a ride; returns the vehicle's ID.
  func rideUnderway(
    _ fleet: Fleet, _ request: RideRequest, vehicleAt start: LatLng = monaco, category: VehicleCategory = .auto
  )
    async throws
  {
    try await addVehicle(fleet, "car-1", at: start, category: category)
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r1", request: request)
    try await dispatchOnce(fleet)
    #expect(try fleet.getRide(caller: admin, name: rideName("r1")).state == .assigned)
    try await moveTrip(fleet, "r1", to: .enrouteToPickup)
    try await moveTrip(fleet, "r1", to: .arrivedAtPickup)
    try await moveTrip(fleet, "r1", to: .enrouteToDropoff)
  }

  @Test func anUnchangedUpfrontRidePaysTheAgreedFare() async throws {
    let fleet = try await rideServiceFleet()
    try await rideUnderway(fleet, rideRequest())
    try await moveTrip(fleet, "r1", to: .complete)
    let ride = try fleet.getRide(caller: admin, name: rideName("r1"))
    #expect(ride.state == .completed)
    #expect(ride.ride.finalFare == ride.ride.fare)
    #expect(ride.ride.finalFareReason == nil)
  }

  @Test func aChangedDropoffIsPricedAnewAndSaysSo() async throws {
    let fleet = try await rideServiceFleet()
    try await rideUnderway(fleet, rideRequest())
    var farther = Trip(provider: provider, id: "r1")
    farther.dropoffPoint = TerminalLocation(point: casino)
    _ = try await fleet.updateTrip(caller: admin, name: tripName("r1"), trip: farther, mask: ["dropoff_point"])
    try await moveTrip(fleet, "r1", to: .complete)
    let ride = try fleet.getRide(caller: admin, name: rideName("r1")).ride
    let product = try testProduct("standard")
    let route = monaco.distance(to: casino)
    let expected = FarePricing.fare(
      product, meters: route, seconds: route / StraightLineTravel.defaultSpeed, zoneFees: [euros("2.00")])
    #expect(ride.finalFare == expected)
    #expect(ride.finalFareReason == "re-priced: the drop-off changed after booking")
    #expect(ride.fare != ride.finalFare)
  }

  @Test func aMeteredRidePaysTheDistanceDrivenAndTheTime() async throws {
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock)
    try await rideUnderway(fleet, rideRequest(product: "taxi"), category: .taxi)
    // Drives 3 km north in 300 m steps, a report every 30 s, with a standing car's jitter.
    var point = monaco
    for step in 1...10 {
      clock.advance(30)
      point = LatLng(latitude: point.latitude + 300 / 111_195, longitude: point.longitude)
      try await report(fleet, point, at: clock.read())
      let jitter = LatLng(latitude: point.latitude + 3 / 111_195, longitude: point.longitude)
      try await report(fleet, jitter, at: clock.read().addingTimeInterval(Double(step) / 100))
    }
    try await moveTrip(fleet, "r1", to: .complete)
    let ride = try fleet.getRide(caller: admin, name: rideName("r1")).ride
    let fare = try #require(ride.finalFare)
    #expect(fare.amount(.distance) == euros("4.50"), "3.0 km at 1.50, jitter not counted")
    #expect(fare.amount(.time) == euros("2.00"), "5 minutes at 0.40")
    #expect(fare.total == euros("9.50"))
  }

  @Test func cancellingAfterAssignmentChargesTheFeeAndBeforeNothing() async throws {
    let fleet = try await rideServiceFleet()
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "early", request: rideRequest())
    let early = try await fleet.cancelRide(caller: admin, name: rideName("early"))
    #expect(early.ride.finalFare == nil)
    try await addVehicle(fleet, "car-1", at: monaco)
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "late", request: rideRequest())
    try await dispatchOnce(fleet)
    let late = try await fleet.cancelRide(caller: admin, name: rideName("late"))
    #expect(late.state == .canceled)
    #expect(late.ride.finalFare?.items == [Fare.Item(.cancellationFee, euros("5.00"))])
  }
}

@Suite("Surge")
struct SurgeTests {
  @Test func surgeRisesWhenDemandOutrunsSupplyAndFallsBack() async throws {
    let clock = TestClock()
    let fleet = try await rideServiceFleet(clock: clock)
    let inCasino = LatLng(latitude: 43.7395, longitude: 7.4275)
    try await addVehicle(fleet, "car-1", at: inCasino)
    var quote = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(from: inCasino))[0]
    #expect(quote.surge.multiplier == .one)
    #expect(quote.surge.zone == "Casino")
    // Six riders wait in the zone for one free car: demand outruns supply.
    for i in 0..<6 {
      _ = try await fleet.createRide(
        caller: admin, provider: provider, rideID: "r\(i)", request: rideRequest(from: inCasino))
    }
    for _ in 0..<6 {
      clock.advance(20)
      quote = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(from: inCasino))[0]
    }
    #expect(quote.surge.multiplier > .one)
    #expect(quote.surge.multiplier <= Decimal6("2.0")!, "capped at the tariff's maximum")
    #expect(quote.surge.reason.contains("demand outruns supply"))
    #expect(quote.terms.fare.amount(.surge).minorUnits > 0)
    let reading = try #require(fleet.surgeReadings().first { $0.zone == "Casino" })
    #expect(reading.waitingRides == 6)
    #expect(reading.freeVehicles == 1)
    // The riders give up, the quotes age out of the window: back to 1.
    for i in 0..<6 { _ = try await fleet.cancelRide(caller: admin, name: rideName("r\(i)")) }
    try await addVehicle(fleet, "car-2", at: inCasino)
    clock.advance(11 * 60)
    _ = fleet.surgeReadings()
    clock.advance(10 * 60)
    let calm = try fleet.quoteRide(caller: admin, provider: provider, request: quoteRequest(from: inCasino))[0]
    #expect(calm.surge.multiplier == .one)
    #expect(calm.surge.reason.contains("supply covers demand"))
  }

  @Test func theFunctionIsCappedSmoothedAndStepped() {
    #expect(SurgePricing.target(waiting: 2, quotes: 0, free: 2, maximum: Decimal6("3")!) == 1)
    #expect(SurgePricing.target(waiting: 4, quotes: 0, free: 2, maximum: Decimal6("3")!) == 1.5)
    #expect(SurgePricing.target(waiting: 40, quotes: 0, free: 1, maximum: Decimal6("2.5")!) == 2.5)
    #expect(SurgePricing.target(waiting: 3, quotes: 0, free: 0, maximum: Decimal6("3")!) == 2)
    let oneResponse = SurgePricing.smoothed(previous: 1, target: 2, elapsed: SurgePricing.responseSeconds)
    #expect(abs(oneResponse - (2 - exp(-1))) < 1e-9)
    #expect(SurgePricing.published(1.349, maximum: Decimal6("3")!) == Decimal6("1.3")!)
    #expect(SurgePricing.published(0.9, maximum: Decimal6("3")!) == .one)
    #expect(SurgePricing.published(3.2, maximum: Decimal6("2.5")!) == Decimal6("2.5")!)
  }
}

func rideName(_ id: String) -> ResourceName { ResourceName(provider: provider, kind: .rides, id: id) }
