import Foundation

/// An amount of money: a currency and a whole number of its minor units (cents for EUR, yen for
/// JPY). Never a floating-point number; `google.type.Money` on the wire.
public struct Money: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
  public var currency: Currency
  /// In the currency's minor unit: 250 is 2.50 EUR.
  public var minorUnits: Int64

  public init(_ minorUnits: Int64, _ currency: Currency) {
    self.minorUnits = minorUnits
    self.currency = currency
  }

  public static func zero(_ currency: Currency) -> Money { Money(0, currency) }

  public static func + (a: Money, b: Money) -> Money {
    precondition(a.currency == b.currency, "adding \(a.currency.code) to \(b.currency.code)")
    return Money(a.minorUnits + b.minorUnits, a.currency)
  }

  public static func - (a: Money, b: Money) -> Money {
    precondition(a.currency == b.currency, "subtracting \(b.currency.code) from \(a.currency.code)")
    return Money(a.minorUnits - b.minorUnits, a.currency)
  }

  public static func < (a: Money, b: Money) -> Bool { a.minorUnits < b.minorUnits }

  /// "2.50 EUR".
  public var description: String { "\(currency.decimal(minorUnits)) \(currency.code)" }

  /// The amount as `google.type.Money` counts it: whole units, and nanos of the same sign.
  public var unitsAndNanos: (units: Int64, nanos: Int32) {
    let scale = currency.scale
    let units = minorUnits / scale
    let rest = minorUnits % scale
    return (units, Int32(rest * (1_000_000_000 / scale)))
  }

  /// From `google.type.Money`'s units and nanos; nil when the nanos are finer than the
  /// currency's minor unit or their sign differs from the units'.
  public init?(units: Int64, nanos: Int32, currency: Currency) {
    let perMinor = Int64(1_000_000_000) / currency.scale
    guard Int64(nanos) % perMinor == 0, units == 0 || nanos == 0 || (units > 0) == (nanos > 0),
      abs(units) < Int64.max / currency.scale
    else { return nil }
    self.init(units * currency.scale + Int64(nanos) / perMinor, currency)
  }
}

/// An ISO 4217 currency and the number of digits of its minor unit.
public struct Currency: Sendable, Hashable, Codable {
  public var code: String
  /// 2 for EUR (cents), 0 for JPY, 3 for BHD.
  public var digits: Int

  public init(code: String, digits: Int) {
    self.code = code
    self.digits = digits
  }

  /// A currency by its code; nil for a code that is not three upper-case letters. Codes not
  /// in the table of exceptions have two digits, as most do.
  public init?(code: String) {
    guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return nil }
    self.init(code: code, digits: Self.exceptions[code] ?? 2)
  }

  /// ISO 4217's currencies whose minor unit is not a hundredth.
  static let exceptions: [String: Int] = [
    "BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0,
    "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
    "BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3, "CLF": 4, "UYW": 4,
  ]

  /// Minor units in one unit: 100 for EUR.
  public var scale: Int64 {
    var scale: Int64 = 1
    for _ in 0..<digits { scale *= 10 }
    return scale
  }

  /// Minor units as a decimal string: 250 → "2.50".
  public func decimal(_ minorUnits: Int64) -> String {
    guard digits > 0 else { return "\(minorUnits)" }
    let sign = minorUnits < 0 ? "-" : ""
    let magnitude = minorUnits.magnitude
    let fraction = String(magnitude % UInt64(scale))
    return "\(sign)\(magnitude / UInt64(scale)).\(String(repeating: "0", count: digits - fraction.count))\(fraction)"
  }
}

/// A fixed-point decimal with six fractional digits: tariff rates (per kilometre, per minute)
/// finer than a currency's minor unit, and multipliers. Parsed from decimal strings, never from
/// floating-point numbers.
public struct Decimal6: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
  /// The value times 1,000,000.
  public var micros: Int64

  public init(micros: Int64) { self.micros = micros }

  public static let one = Decimal6(micros: 1_000_000)
  public static let zero = Decimal6(micros: 0)

  /// "1.20", "0.3", "12", "-0.5"; nil for anything else (exponents, more than six fractional
  /// digits, a value beyond ±9,000,000,000,000).
  public init?(_ text: String) {
    var rest = Substring(text)
    let negative = rest.first == "-"
    if negative { rest = rest.dropFirst() }
    let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCII), whole.allSatisfy(\.isNumber),
      whole.count <= 13
    else { return nil }
    var fraction = parts.count > 1 ? parts[1] : ""
    guard parts.count == 1 || !fraction.isEmpty, fraction.count <= 6, fraction.allSatisfy(\.isASCII),
      fraction.allSatisfy(\.isNumber)
    else { return nil }
    fraction += String(repeating: "0", count: 6 - fraction.count)
    guard let units = Int64(whole), let micros = Int64(fraction) else { return nil }
    self.micros = (units * 1_000_000 + micros) * (negative ? -1 : 1)
  }

  public static func < (a: Decimal6, b: Decimal6) -> Bool { a.micros < b.micros }

  /// For display and for the wire's `double` multipliers; never for money.
  public var doubleValue: Double { Double(micros) / 1_000_000 }

  public var description: String {
    let sign = micros < 0 ? "-" : ""
    let magnitude = micros.magnitude
    var fraction = String(magnitude % 1_000_000)
    fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
    while fraction.hasSuffix("0") { fraction.removeLast() }
    return "\(sign)\(magnitude / 1_000_000)\(fraction.isEmpty ? "" : ".")\(fraction)"
  }

  /// As money of `currency`, which must not have more digits than its minor unit allows.
  public func money(_ currency: Currency) -> Money? {
    let perMinor = 1_000_000 / currency.scale
    guard currency.digits <= 6, micros % perMinor == 0 else { return nil }
    return Money(micros / perMinor, currency)
  }
}
