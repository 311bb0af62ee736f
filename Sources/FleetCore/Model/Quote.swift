import FleetGeometry
import Foundation

/// What a rider asks a price for (fleetkit.v1.QuoteRideRequest).
public struct QuoteRequest: Sendable, Hashable {
  public var pickupPoint: TerminalLocation?
  public var dropoffPoint: TerminalLocation?
  public var intermediateDestinations: [TerminalLocation] = []
  /// 1 when not given.
  public var numberOfPassengers: Int32 = 0
  /// For a ride booked for later; nil for a ride now.
  public var pickupTime: Date?

  public init() {}
}

/// One product's price for a ride, and how soon it can come.
public struct RideQuote: Sendable, Hashable {
  /// Books this product at this price (`Ride.quote_id`): the sealed terms.
  public var id: String
  public var terms: QuoteTerms
  public var pricing: Product.Pricing
  /// For a ride now: driving seconds of the nearest car the dispatcher would offer; nil, with
  /// the reason, when none can come.
  public var pickupSeconds: Double?
  public var pickupUnavailableReason: String?
  public var surge: SurgeQuote
  /// A shared product: the longest the ride takes from the pickup to the drop-off, the detours
  /// for other riders included (the drive times the dispatcher's detour bound); nil otherwise.
  public var maximumTripSeconds: Double?

  public init(
    id: String, terms: QuoteTerms, pricing: Product.Pricing, pickupSeconds: Double?,
    pickupUnavailableReason: String?, surge: SurgeQuote, maximumTripSeconds: Double? = nil
  ) {
    self.id = id
    self.terms = terms
    self.pricing = pricing
    self.pickupSeconds = pickupSeconds
    self.pickupUnavailableReason = pickupUnavailableReason
    self.surge = surge
    self.maximumTripSeconds = maximumTripSeconds
  }
}

/// The surge a quote was priced with: the zone whose multiplier applies, and why.
public struct SurgeQuote: Sendable, Hashable {
  public var multiplier: Decimal6
  /// Empty where no surge zone covers the pickup.
  public var zone: String
  public var reason: String

  public init(multiplier: Decimal6, zone: String, reason: String) {
    self.multiplier = multiplier
    self.zone = zone
    self.reason = reason
  }

  public static func none(_ reason: String) -> SurgeQuote { SurgeQuote(multiplier: .one, zone: "", reason: reason) }
}

/// What a quote promises, sealed into its ID so that any instance can honour it without a
/// lookup: the product at this fare, for these points and party, until `expireTime`.
public struct QuoteTerms: Sendable, Hashable {
  public var provider: String
  public var product: String
  public var fare: Fare
  public var expireTime: Date
  public var pickup: LatLng
  public var dropoff: LatLng
  public var stops: [LatLng]
  public var passengers: Int32
  public var pickupTime: Date?
  /// The route the fare was priced on, through the stops, with traffic.
  public var route: TravelEstimate

  public init(
    provider: String, product: String, fare: Fare, expireTime: Date, pickup: LatLng, dropoff: LatLng,
    stops: [LatLng], passengers: Int32, pickupTime: Date?, route: TravelEstimate
  ) {
    self.provider = provider
    self.product = product
    self.fare = fare
    self.expireTime = expireTime
    self.pickup = pickup
    self.dropoff = dropoff
    self.stops = stops
    self.passengers = passengers
    self.pickupTime = pickupTime
    self.route = route
  }
}

extension QuoteTerms {
  static let format: UInt8 = 1

  /// The terms in a few dozen bytes: coordinates in 1e-7 degrees (the wire's own precision,
  /// so a booking that repeats the quote's points matches them exactly), money in minor units.
  public var encoded: [UInt8] {
    var w = RowWriter(capacity: 96)
    w.bytes.append(Self.format)
    w.string(provider)
    w.string(product)
    w.string(fare.currency.code)
    w.varint(UInt64(fare.currency.digits))
    w.array(fare.items) { w, item in
      w.varint(UInt64(Fare.Kind.allCases.firstIndex(of: item.kind)!))
      w.int(item.amount.minorUnits)
    }
    w.int(fare.surge.micros)
    w.int(Int64(expireTime.timeIntervalSince1970.rounded(.down)))
    for point in [pickup, dropoff] { Self.write(point, &w) }
    w.array(stops) { w, point in Self.write(point, &w) }
    w.int32(passengers)
    w.optional(pickupTime) { w, time in w.int(Int64(time.timeIntervalSince1970 * 1000)) }
    w.varint(UInt64(max(0, route.metres.rounded())))
    w.varint(UInt64(max(0, route.seconds.rounded())))
    return w.bytes
  }

  /// Nil when the bytes are not terms this format wrote.
  public init?(encoded bytes: [UInt8]) {
    var r = RowReader(bytes)
    guard let terms = try? Self.read(&r), !r.hasMore else { return nil }
    self = terms
  }

  static func read(_ r: inout RowReader) throws(RowFormatError) -> QuoteTerms {
    guard try r.byte() == format else { throw r.damaged("unknown quote format") }
    let provider = try r.string()
    let product = try r.string()
    let code = try r.string()
    let digits = try r.varint()
    guard let known = Currency(code: code), digits <= 4 else { throw r.damaged("currency") }
    let currency = Currency(code: known.code, digits: Int(digits))
    let items = try r.array { r throws(RowFormatError) -> Fare.Item in
      let kind = try r.varint()
      guard kind < Fare.Kind.allCases.count else { throw r.damaged("fare item kind") }
      return Fare.Item(Fare.Kind.allCases[Int(kind)], Money(try r.int(), currency))
    }
    let surge = Decimal6(micros: try r.int())
    let expire = Date(timeIntervalSince1970: TimeInterval(try r.int()))
    let pickup = try Self.readPoint(&r)
    let dropoff = try Self.readPoint(&r)
    let stops = try r.array { r throws(RowFormatError) in try Self.readPoint(&r) }
    let passengers = try r.int32()
    let pickupTime = try r.optional { r throws(RowFormatError) in
      Date(timeIntervalSince1970: TimeInterval(try r.int()) / 1000)
    }
    let metres = Double(try r.varint())
    let seconds = Double(try r.varint())
    return QuoteTerms(
      provider: provider, product: product, fare: Fare(items: items, currency: currency, surge: surge),
      expireTime: expire, pickup: pickup, dropoff: dropoff, stops: stops, passengers: passengers,
      pickupTime: pickupTime, route: TravelEstimate(seconds: seconds, metres: metres))
  }

  static func write(_ point: LatLng, _ w: inout RowWriter) {
    w.int(Int64((point.latitude * 1e7).rounded()))
    w.int(Int64((point.longitude * 1e7).rounded()))
  }

  static func readPoint(_ r: inout RowReader) throws(RowFormatError) -> LatLng {
    LatLng(latitude: Double(try r.int()) / 1e7, longitude: Double(try r.int()) / 1e7)
  }

  /// Whether two points are the same to the wire's 1e-7 degrees.
  static func same(_ a: LatLng, _ b: LatLng) -> Bool {
    (a.latitude * 1e7).rounded() == (b.latitude * 1e7).rounded()
      && (a.longitude * 1e7).rounded() == (b.longitude * 1e7).rounded()
  }
}
