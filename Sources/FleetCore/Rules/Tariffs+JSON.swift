import Foundation

extension Tariffs {
  /// Reads a tariff file (docs/ride-service.md has the keys). Every rule is checked at start,
  /// and an error names `source`, the JSON path and the rule.
  public init(json data: Data, source: String) throws(FleetError) {
    let root = JSONInput(try JSONValue.parse(data, source: source), source: source)
    _ = try root.object(known: ["providers"])
    var providers: [String: ProviderTariff] = [:]
    for (provider, input) in try root["providers"].members() {
      do {
        try ResourceID.validateProvider(provider, field: "provider")
      } catch {
        throw input.error(error.message)
      }
      providers[provider] = try ProviderTariff(input)
    }
    self.init(providers: providers)
  }
}

extension ProviderTariff {
  init(_ input: JSONInput) throws(FleetError) {
    _ = try input.object(known: ["currency", "products", "surge", "scheduling", "quoteMinutes"])
    let code = try input["currency"].string()
    guard let currency = Currency(code: code) else {
      throw input["currency"].error("must be an ISO 4217 code such as \"EUR\", got \"\(code)\"")
    }
    var products: [Product] = []
    for item in try input["products"].array() {
      let product = try Product(item, currency: currency)
      guard products.allSatisfy({ $0.name != product.name }) else {
        throw item["name"].error("'\(product.name)' names two products")
      }
      products.append(product)
    }
    guard !products.isEmpty else { throw input["products"].error("must list at least one product") }
    var surge = SurgeSettings()
    if input["surge"].isPresent {
      _ = try input["surge"].object(known: ["max", "windowMinutes"])
      surge.maximum = try input["surge"]["max"].decimal()
      guard surge.maximum >= .one, surge.maximum <= Decimal6(micros: 10_000_000) else {
        throw input["surge"]["max"].error("must be from \"1\" (no surge) to \"10\", got \"\(surge.maximum)\"")
      }
      if input["surge"]["windowMinutes"].isPresent {
        surge.window = .seconds(60 * (try input["surge"]["windowMinutes"].integer(1...1440)))
      }
    }
    var scheduling = SchedulingSettings()
    if input["scheduling"].isPresent {
      _ = try input["scheduling"].object(known: ["horizonDays"])
      scheduling.horizon = .seconds(86_400 * (try input["scheduling"]["horizonDays"].integer(1...365)))
    }
    var lifetime = Duration.seconds(300)
    if input["quoteMinutes"].isPresent { lifetime = .seconds(60 * (try input["quoteMinutes"].integer(1...60))) }
    self.init(currency: currency, products: products, surge: surge, scheduling: scheduling, quoteLifetime: lifetime)
  }
}

extension Product {
  static let keys: Set<String> = [
    "name", "vehicleCategory", "tripType", "seats", "pricing", "base", "perKm", "perMinute", "minimum", "bookingFee",
    "cancellationFee", "poolMaxWaitSeconds", "poolMaxDetour",
  ]

  init(_ input: JSONInput, currency: Currency) throws(FleetError) {
    _ = try input.object(known: Self.keys)
    let name = try input["name"].string()
    guard !name.isEmpty, name.count <= 64,
      name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
    else { throw input["name"].error("must be 1 to 64 letters, digits, '-' or '_', got \"\(name)\"") }
    let category = try input["vehicleCategory"].string()
    guard let vehicleCategory = VehicleCategory.allCases.first(where: { $0.wireName == category && $0 != .unknown })
    else {
      let known = VehicleCategory.allCases.filter { $0 != .unknown }.map(\.wireName).joined(separator: ", ")
      throw input["vehicleCategory"].error("must be one of \(known), got \"\(category)\"")
    }
    let type = try input["tripType"].string()
    guard let tripType = [TripType.exclusive, .shared].first(where: { $0.wireName == type }) else {
      throw input["tripType"].error("must be EXCLUSIVE or SHARED, got \"\(type)\"")
    }
    let seats = Int32(try input["seats"].integer(1...100))
    let mode = try input["pricing"].string()
    guard let pricing = Pricing(rawValue: mode) else {
      throw input["pricing"].error("must be upfront or metered, got \"\(mode)\"")
    }
    func rate(_ key: String) throws(FleetError) -> Decimal6 {
      guard input[key].isPresent else { return .zero }
      let rate = try input[key].decimal()
      guard rate.micros >= 0, rate.micros <= 1_000_000_000_000 else {
        throw input[key].error("must be from \"0\" to \"1000000\", got \"\(rate)\"")
      }
      return rate
    }
    func amount(_ key: String) throws(FleetError) -> Money {
      input[key].isPresent ? try input[key].money(currency) : .zero(currency)
    }
    self.init(
      name: name, vehicleCategory: vehicleCategory, tripType: tripType, seats: seats, pricing: pricing,
      base: try amount("base"), perKm: try rate("perKm"), perMinute: try rate("perMinute"),
      minimum: try amount("minimum"), bookingFee: try amount("bookingFee"),
      cancellationFee: try amount("cancellationFee"))
    pooling = try Self.pooling(input, tripType: tripType)
  }

  /// A SHARED product's own bounds, each defaulting to the dispatcher's when the other is given.
  static func pooling(_ input: JSONInput, tripType: TripType) throws(FleetError) -> PoolingBounds? {
    let (wait, detour) = (input["poolMaxWaitSeconds"], input["poolMaxDetour"])
    guard wait.isPresent || detour.isPresent else { return nil }
    guard tripType == .shared else {
      throw (wait.isPresent ? wait : detour).error("applies to SHARED products only; this one is EXCLUSIVE")
    }
    var bounds = PoolingBounds()
    if wait.isPresent { bounds.maximumWait = .seconds(try wait.integer(PoolingBounds.waitSeconds)) }
    if detour.isPresent {
      let ratio = try detour.decimal()
      let range = PoolingBounds.detours
      let value = Double(ratio.micros) / 1_000_000
      guard range.contains(value) else {
        throw detour.error(
          "must be from \"\(Int(range.lowerBound))\" to \"\(Int(range.upperBound))\" (times the direct drive), got \"\(ratio)\""
        )
      }
      bounds.maximumDetour = value
    }
    return bounds
  }
}
