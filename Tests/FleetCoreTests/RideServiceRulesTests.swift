import FleetCore
import FleetGeometry
import Foundation
import Testing

let eur = Currency(code: "EUR")!
let jpy = Currency(code: "JPY")!

func euros(_ text: String) -> Money { Decimal6(text)!.money(eur)! }

let standard = Product(
  name: "standard", vehicleCategory: .auto, tripType: .exclusive, seats: 4, pricing: .upfront, base: euros("2.50"),
  perKm: Decimal6("1.20")!, perMinute: Decimal6("0.30")!, minimum: euros("7.00"), bookingFee: euros("1.00"),
  cancellationFee: euros("5.00"))

@Suite("Money and decimals")
struct MoneyTests {
  @Test func decimalStringsParseExactlyAndOthersAreRefused() {
    #expect(Decimal6("2.50")?.micros == 2_500_000)
    #expect(Decimal6("0.3")?.micros == 300_000)
    #expect(Decimal6("12")?.micros == 12_000_000)
    #expect(Decimal6("-0.5")?.micros == -500_000)
    #expect(Decimal6("0.000001")?.micros == 1)
    for bad in ["", ".5", "5.", "1e3", "1.2345678", " 1", "1,5", "--1", "+1", "0x10", "１"] {
      #expect(Decimal6(bad) == nil, "\(bad)")
    }
    #expect(Decimal6("2.50")!.description == "2.5")
    #expect(Decimal6("-0.05")!.description == "-0.05")
  }

  @Test func moneyIsMinorUnitsAndGoogleUnitsAndNanos() {
    let amount = euros("2.50")
    #expect(amount.minorUnits == 250)
    #expect(amount.unitsAndNanos == (2, 500_000_000))
    #expect(Money(-250, eur).unitsAndNanos == (-2, -500_000_000))
    #expect(Money(units: -2, nanos: -500_000_000, currency: eur) == Money(-250, eur))
    #expect(Money(units: 2, nanos: 5_000_000, currency: eur) == nil, "finer than a cent")
    #expect(Money(units: 2, nanos: -10_000_000, currency: eur) == nil, "signs differ")
    #expect(Money(1500, jpy).unitsAndNanos == (1500, 0))
    #expect(Money(250, eur).description == "2.50 EUR")
    #expect(Money(7, eur).description == "0.07 EUR")
    #expect(Money(1500, jpy).description == "1500 JPY")
    #expect(Currency(code: "BHD")?.digits == 3)
    #expect(Currency(code: "eur") == nil)
    #expect(Decimal6("2.505")!.money(eur) == nil, "finer than a cent")
  }
}

@Suite("Fares")
struct FareTests {
  @Test func anUpfrontFareIsBaseDistanceTimeAndFees() {
    let fare = FarePricing.fare(standard, meters: 10_000, seconds: 900)
    #expect(fare.items.map(\.kind) == [.base, .distance, .time, .bookingFee])
    #expect(fare.amount(.base) == euros("2.50"))
    #expect(fare.amount(.distance) == euros("12.00"))
    #expect(fare.amount(.time) == euros("4.50"))
    #expect(fare.total == euros("20.00"))
  }

  @Test func theMinimumLiftsAShortRideBeforeTheFees() {
    let fare = FarePricing.fare(standard, meters: 1000, seconds: 120)
    // 2.50 + 1.20 + 0.60 = 4.30, lifted to 7.00, then the booking fee.
    #expect(fare.amount(.minimumAdjustment) == euros("2.70"))
    #expect(fare.total == euros("8.00"))
  }

  @Test func surgeMultipliesTheRideButNotTheFees() {
    let fare = FarePricing.fare(
      standard, meters: 10_000, seconds: 900, surge: Decimal6("1.5")!, zoneFees: [euros("3.00")])
    #expect(fare.amount(.surge) == euros("9.50"))
    #expect(fare.amount(.zoneFee) == euros("3.00"))
    #expect(fare.total == euros("32.50"))
    #expect(fare.surge == Decimal6("1.5"))
  }

  @Test func amountsAreRoundedHalfAwayFromZeroToTheMinorUnit() {
    var product = standard
    product.perKm = Decimal6("0.015")!  // 1.5 cents a kilometre
    product.perMinute = .zero
    product.minimum = .zero(eur)
    #expect(FarePricing.fare(product, meters: 1000, seconds: 0).amount(.distance) == Money(2, eur))
    #expect(FarePricing.fare(product, meters: 999, seconds: 0).amount(.distance) == Money(1, eur))
    // 1.20 a kilometre over 1,234 m is 1.4808: 1.48.
    #expect(FarePricing.fare(standard, meters: 1234, seconds: 0).amount(.distance) == euros("1.48"))
    // Yen have no minor unit: 410 a kilometre over 1.5 km is 615 yen.
    let yen = Product(
      name: "taxi", vehicleCategory: .taxi, tripType: .exclusive, seats: 4, pricing: .metered, base: Money(500, jpy),
      perKm: Decimal6("410")!, perMinute: Decimal6("90")!, minimum: .zero(jpy), bookingFee: .zero(jpy),
      cancellationFee: .zero(jpy))
    #expect(FarePricing.fare(yen, meters: 1500, seconds: 20).amount(.distance) == Money(615, jpy))
    #expect(FarePricing.fare(yen, meters: 1500, seconds: 20).amount(.time) == Money(30, jpy))
  }

  @Test(arguments: 0..<200)
  func theBreakdownAlwaysSumsToTheFare(seed: Int) {
    var random = SeededRandom(seed: UInt64(seed))
    var product = standard
    product.perKm = Decimal6(micros: Int64(random.next() % 5_000_000))
    product.perMinute = Decimal6(micros: Int64(random.next() % 2_000_000))
    product.minimum = Money(Int64(random.next() % 3000), eur)
    let surge = Decimal6(micros: 1_000_000 + Int64(random.next() % 2_000_000))
    let fare = FarePricing.fare(
      product, meters: Double(random.next() % 80_000), seconds: Double(random.next() % 7200), surge: surge,
      zoneFees: [Money(Int64(random.next() % 500), eur)])
    #expect(fare.items.reduce(0) { $0 + $1.amount.minorUnits } == fare.total.minorUnits)
    #expect(fare.items.allSatisfy { $0.amount.minorUnits >= 0 })
    #expect(fare.total.minorUnits >= product.minimum.minorUnits)
  }

  @Test func cancellingAfterAssignmentChargesTheProductsFee() {
    let fare = FarePricing.cancellation(standard)
    #expect(fare.items.map(\.kind) == [.cancellationFee])
    #expect(fare.total == euros("5.00"))
  }
}

/// A small deterministic generator for property tests.
struct SeededRandom: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// A number in [0, 1).
  mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

@Suite("Tariff files")
struct TariffFileTests {
  static let example = """
    {"providers": {"my-project": {
       "currency": "EUR",
       "products": [
         {"name": "standard", "vehicleCategory": "AUTO", "tripType": "EXCLUSIVE", "seats": 4,
          "pricing": "upfront", "base": "2.50", "perKm": "1.20", "perMinute": "0.30",
          "minimum": "7.00", "bookingFee": "1.00", "cancellationFee": "5.00"},
         {"name": "shared", "vehicleCategory": "AUTO", "tripType": "SHARED", "seats": 1, "pricing": "upfront",
          "base": "1.50", "perKm": "0.80", "perMinute": "0.20", "minimum": "4.00"}],
       "surge": {"max": "2.5", "windowMinutes": 10},
       "scheduling": {"horizonDays": 7}}}}
    """

  @Test func theIssuesExampleReads() throws {
    let tariffs = try Tariffs(json: Data(Self.example.utf8), source: "tariffs.json")
    let tariff = try #require(tariffs.providers["my-project"])
    #expect(tariff.currency == eur)
    #expect(tariff.products.map(\.name) == ["standard", "shared"])
    #expect(tariff.products[0] == standard)
    #expect(tariff.products[1].tripType == .shared)
    #expect(tariff.products[1].cancellationFee == .zero(eur))
    #expect(tariff.surge == SurgeSettings(maximum: Decimal6("2.5")!, window: .seconds(600)))
    #expect(tariff.scheduling.horizon == .seconds(7 * 86_400))
    #expect(tariff.quoteLifetime == .seconds(300))
    #expect(tariff.products.allSatisfy { $0.pooling == nil }, "the dispatcher's bounds unless a product sets its own")
  }

  @Test func aPooledProductMaySetItsOwnBounds() throws {
    let text = Self.example.replacingOccurrences(
      of: #""minimum": "4.00""#, with: #""minimum": "4.00", "poolMaxWaitSeconds": 600, "poolMaxDetour": "2.25""#)
    let tariff = try #require(try Tariffs(json: Data(text.utf8), source: "tariffs.json").providers["my-project"])
    #expect(tariff.products[1].pooling == PoolingBounds(maximumWait: .seconds(600), maximumDetour: 2.25))
    // One given, the other is the dispatcher's default.
    let waitOnly = Self.example.replacingOccurrences(
      of: #""minimum": "4.00""#, with: #""minimum": "4.00", "poolMaxWaitSeconds": 120"#)
    let product = try #require(try Tariffs(json: Data(waitOnly.utf8), source: "t.json").providers["my-project"])
      .products[1]
    #expect(product.pooling == PoolingBounds(maximumWait: .seconds(120), maximumDetour: PoolingBounds().maximumDetour))
  }

  @Test(arguments: [
    (
      #""perKm": "1.20""#, #""perKm": 1.2"#,
      #"providers.my-project.products[0].perKm: must be a decimal string such as "1.20", got 1.2"#
    ),
    (#""currency": "EUR""#, #""currency": "eur""#, #"providers.my-project.currency: must be an ISO 4217 code"#),
    (#""seats": 4"#, #""seats": 0"#, #"providers.my-project.products[0].seats: must be a whole number from 1 to 100"#),
    (
      #""base": "2.50""#, #""base": "2.505""#,
      #"products[0].base: EUR has 2 decimals: "2.505" is finer than its minor unit"#
    ),
    (#""name": "shared""#, #""name": "standard""#, #"products[1].name: 'standard' names two products"#),
    (#""max": "2.5""#, #""max": "0.5""#, #"providers.my-project.surge.max: must be from "1" (no surge) to "10""#),
    (
      #""pricing": "upfront","#, #""pricing": "haggled","#,
      #"products[0].pricing: must be upfront or metered, got "haggled""#
    ),
    (#""tripType": "EXCLUSIVE""#, #""tripType": "POOL""#, #"products[0].tripType: must be EXCLUSIVE or SHARED"#),
    (#""minimum": "7.00""#, #""minimum": "7.00", "tip": "1""#, #"products[0]: unknown key 'tip'"#),
    (#""horizonDays": 7"#, #""horizonDays": 1000"#, #"scheduling.horizonDays: must be a whole number from 1 to 365"#),
    (
      #""cancellationFee": "5.00""#, #""cancellationFee": "5.00", "poolMaxDetour": "2""#,
      #"products[0].poolMaxDetour: applies to SHARED products only"#
    ),
    (
      #""minimum": "4.00""#, #""minimum": "4.00", "poolMaxDetour": "3.5""#,
      #"products[1].poolMaxDetour: must be from "1" to "3" (times the direct drive), got "3.5""#
    ),
    (
      #""minimum": "4.00""#, #""minimum": "4.00", "poolMaxWaitSeconds": 10"#,
      #"products[1].poolMaxWaitSeconds: must be a whole number from 30 to 3600"#
    ),
  ])
  func errorsNameTheFileThePathAndTheRule(original: String, replacement: String, message: String) {
    let text = Self.example.replacingOccurrences(of: original, with: replacement)
    #expect(text != Self.example)
    #expect(throws: FleetError.self) { try Tariffs(json: Data(text.utf8), source: "tariffs.json") }
    do {
      _ = try Tariffs(json: Data(text.utf8), source: "tariffs.json")
    } catch {
      #expect(error.message.hasPrefix("tariffs.json: "))
      #expect(error.message.contains(message), "\(error.message)")
    }
  }

  @Test func notJSONIsSaidSo() {
    #expect(throws: FleetError.self) { try Tariffs(json: Data("{".utf8), source: "t.json") }
  }
}

@Suite("Service areas and zones")
struct ServiceAreaTests {
  /// A square with a square hole, and two squares as one MultiPolygon.
  static let geoJSON = """
    {"type": "FeatureCollection", "features": [
      {"type": "Feature", "properties": {"provider": "acme", "kind": "service_area", "name": "city"},
       "geometry": {"type": "Polygon", "coordinates": [
         [[7.40, 43.72], [7.44, 43.72], [7.44, 43.76], [7.40, 43.76], [7.40, 43.72]],
         [[7.415, 43.735], [7.425, 43.735], [7.425, 43.745], [7.415, 43.745], [7.415, 43.735]]]}},
      {"type": "Feature", "properties": {"provider": "acme", "kind": "zone", "name": "port", "fee": "3.00", "surge": true},
       "geometry": {"type": "MultiPolygon", "coordinates": [
         [[[7.420, 43.730], [7.430, 43.730], [7.430, 43.734], [7.420, 43.734], [7.420, 43.730]]],
         [[[7.430, 43.750], [7.435, 43.750], [7.435, 43.755], [7.430, 43.755], [7.430, 43.750]]]]}}
    ]}
    """

  @Test func holesAreHonouredAndZonesFound() throws {
    let areas = try ServiceAreas(geoJSON: Data(Self.geoJSON.utf8), source: "areas.geojson")
    #expect(areas.serves(LatLng(latitude: 43.725, longitude: 7.41), provider: "acme"))
    #expect(!areas.serves(LatLng(latitude: 43.740, longitude: 7.420), provider: "acme"), "in the hole")
    #expect(!areas.serves(LatLng(latitude: 43.80, longitude: 7.42), provider: "acme"), "outside")
    #expect(areas.serves(LatLng(latitude: 10, longitude: 10), provider: "other"), "no service area: everywhere")
    #expect(areas.zones(at: LatLng(latitude: 43.732, longitude: 7.425), provider: "acme").map(\.name) == ["port"])
    #expect(areas.zones(at: LatLng(latitude: 43.752, longitude: 7.432), provider: "acme").map(\.name) == ["port"])
    #expect(areas.zones(at: LatLng(latitude: 43.732, longitude: 7.425), provider: "other").isEmpty)
    #expect(areas.zones(at: LatLng(latitude: 43.725, longitude: 7.41), provider: "acme").isEmpty)
    let port = try #require(areas.surgeZones(provider: "acme").first?.0)
    #expect(port.fee == Decimal6("3.00") && port.surge)
  }

  @Test(arguments: [
    ("[7.40, 43.72]]", "[7.40, 43.721]]", "a ring must be closed"),
    ("\"kind\": \"zone\"", "\"kind\": \"district\"", "properties.kind: must be \"service_area\" or \"zone\""),
    ("[7.44, 43.72]", "[7.44, 93.72]", "must be [longitude, latitude] within"),
    ("\"MultiPolygon\"", "\"LineString\"", "geometry.type: must be \"Polygon\" or \"MultiPolygon\""),
    ("\"fee\": \"3.00\"", "\"fee\": 3", "features[1].properties.fee: must be a decimal string"),
  ])
  func errorsNameTheFeatureAndTheRule(original: String, replacement: String, message: String) {
    let text = Self.geoJSON.replacingOccurrences(of: original, with: replacement)
    #expect(text != Self.geoJSON)
    do {
      _ = try ServiceAreas(geoJSON: Data(text.utf8), source: "areas.geojson")
      Issue.record("accepted: \(replacement)")
    } catch {
      #expect(error.message.hasPrefix("areas.geojson: features["))
      #expect(error.message.contains(message), "\(error.message)")
    }
  }

  @Test func thousandsOfAreasAreFoundThroughTheIndex() {
    // 10,000 small squares on a grid; each point is in exactly one.
    var entries: [(Int, Area)] = []
    for i in 0..<100 {
      for j in 0..<100 {
        let lat = 40 + Double(i) * 0.01
        let lng = 5 + Double(j) * 0.01
        let ring = [
          LatLng(latitude: lat, longitude: lng), LatLng(latitude: lat, longitude: lng + 0.01),
          LatLng(latitude: lat + 0.01, longitude: lng + 0.01), LatLng(latitude: lat + 0.01, longitude: lng),
        ]
        entries.append((i * 100 + j, Area(polygons: [[ring]])))
      }
    }
    let index = AreaIndex(entries)
    for (i, j) in [(0, 0), (37, 52), (99, 99)] {
      let point = LatLng(latitude: 40 + Double(i) * 0.01 + 0.005, longitude: 5 + Double(j) * 0.01 + 0.005)
      #expect(index.areas(containing: point).map(\.key) == [i * 100 + j])
    }
    #expect(index.areas(containing: LatLng(latitude: 50, longitude: 50)).isEmpty)
  }
}
