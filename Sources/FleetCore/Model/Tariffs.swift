import Foundation

/// What each provider sells and at what price (`fleetd serve --tariffs FILE.json`).
public struct Tariffs: Sendable, Hashable {
  public var providers: [String: ProviderTariff]

  public init(providers: [String: ProviderTariff] = [:]) { self.providers = providers }

  public static let none = Tariffs()
}

/// One provider's products, currency, surge and scheduling rules.
public struct ProviderTariff: Sendable, Hashable {
  public var currency: Currency
  /// In the order quotes list them; a ride booked without a quote gets the first that fits.
  public var products: [Product]
  public var surge: SurgeSettings
  public var scheduling: SchedulingSettings
  /// How long a quote is honoured.
  public var quoteLifetime: Duration

  public init(
    currency: Currency, products: [Product], surge: SurgeSettings = SurgeSettings(),
    scheduling: SchedulingSettings = SchedulingSettings(), quoteLifetime: Duration = .seconds(300)
  ) {
    self.currency = currency
    self.products = products
    self.surge = surge
    self.scheduling = scheduling
    self.quoteLifetime = quoteLifetime
  }

  public func product(named name: String) -> Product? { products.first { $0.name == name } }
}

/// A product riders choose: the kind of car, how many it carries, and its prices.
public struct Product: Sendable, Hashable {
  /// `upfront`: the quoted price is what the rider pays unless the ride changes; `metered`: the
  /// distance and time actually driven.
  public enum Pricing: String, Sendable, Hashable, Codable, CaseIterable {
    case upfront, metered
  }

  public var name: String
  public var vehicleCategory: VehicleCategory
  public var tripType: TripType
  /// The most passengers one booking may bring.
  public var seats: Int32
  public var pricing: Pricing
  public var base: Money
  /// Per kilometre and per minute of the trip, in the currency's unit (finer than its minor
  /// unit is allowed: amounts are rounded once they are money).
  public var perKm: Decimal6
  public var perMinute: Decimal6
  public var minimum: Money
  public var bookingFee: Money
  /// Charged when a rider cancels after a vehicle was assigned.
  public var cancellationFee: Money
  /// A SHARED product's own wait and detour bounds; nil: the dispatcher's (`--pool-max-wait`,
  /// `--pool-max-detour`).
  public var pooling: PoolingBounds?

  public init(
    name: String, vehicleCategory: VehicleCategory, tripType: TripType, seats: Int32, pricing: Pricing, base: Money,
    perKm: Decimal6, perMinute: Decimal6, minimum: Money, bookingFee: Money, cancellationFee: Money
  ) {
    self.name = name
    self.vehicleCategory = vehicleCategory
    self.tripType = tripType
    self.seats = seats
    self.pricing = pricing
    self.base = base
    self.perKm = perKm
    self.perMinute = perMinute
    self.minimum = minimum
    self.bookingFee = bookingFee
    self.cancellationFee = cancellationFee
  }
}

/// What a rider who shares a car accepts: a pickup at most `maximumWait` after the request (when
/// the car carries others too), and at most `maximumDetour` times the direct drive aboard.
public struct PoolingBounds: Sendable, Hashable, Codable {
  public var maximumWait: Duration
  public var maximumDetour: Double

  public init(maximumWait: Duration = .seconds(300), maximumDetour: Double = 1.5) {
    self.maximumWait = maximumWait
    self.maximumDetour = maximumDetour
  }

  /// The ranges fleetd accepts, for the command line and the tariff file alike.
  public static let waitSeconds = 30...3600
  public static let detours = 1.0...3.0
}

/// How far prices may rise where demand outruns supply, and over which recent window demand
/// is counted.
public struct SurgeSettings: Sendable, Hashable {
  /// The highest multiplier, at least 1 (1: no surge).
  public var maximum: Decimal6
  public var window: Duration

  public init(maximum: Decimal6 = .one, window: Duration = .seconds(600)) {
    self.maximum = maximum
    self.window = window
  }
}

/// How far ahead rides may be booked.
public struct SchedulingSettings: Sendable, Hashable {
  public var horizon: Duration

  public init(horizon: Duration = .seconds(7 * 86_400)) { self.horizon = horizon }
}
