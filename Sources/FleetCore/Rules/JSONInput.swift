import Foundation

/// A JSON document as read from a configuration file (tariffs, service areas), keeping what
/// JSON says apart (a boolean is not a number, a number is not a string).
public indirect enum JSONValue: Sendable, Hashable, Decodable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  case object([String: JSONValue])

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Parses a document; the error names `source` and what is wrong.
  public static func parse(_ data: Data, source: String) throws(FleetError) -> JSONValue {
    do {
      return try JSONDecoder().decode(JSONValue.self, from: data)
    } catch {
      throw .invalid("\(source): not valid JSON: \(error)")
    }
  }

  var kind: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}

/// One value of a document being read, with its path, so that every error names the file, the
/// place in it and the rule: "tariffs.json: providers.acme.products[0].perKm: must be a
/// decimal string such as \"1.20\", got a number".
struct JSONInput {
  let value: JSONValue?
  let path: String
  let source: String

  init(_ value: JSONValue, source: String) {
    self.value = value
    self.path = ""
    self.source = source
  }

  init(value: JSONValue?, path: String, source: String) {
    self.value = value
    self.path = path
    self.source = source
  }

  func error(_ rule: String) -> FleetError {
    .invalid("\(source): \(path.isEmpty ? "the document" : path): \(rule)")
  }

  var isPresent: Bool {
    if case .some(.null) = value { return false }
    return value != nil
  }

  subscript(key: String) -> JSONInput {
    let child: JSONValue?
    if case .object(let object)? = value { child = object[key] } else { child = nil }
    return JSONInput(value: child, path: path.isEmpty ? key : "\(path).\(key)", source: source)
  }

  /// The object's members, refusing keys not in `known` (a misspelt key would be ignored
  /// silently otherwise).
  func object(known: Set<String>) throws(FleetError) -> [String: JSONValue] {
    guard case .object(let object)? = value else { throw error("must be an object, got \(described)") }
    if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
      throw error("unknown key '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
    }
    return object
  }

  /// An object whose keys are names (providers), each read by the caller.
  func members() throws(FleetError) -> [(String, JSONInput)] {
    guard case .object(let object)? = value else { throw error("must be an object, got \(described)") }
    return object.keys.sorted().map { ($0, self[$0]) }
  }

  func array() throws(FleetError) -> [JSONInput] {
    guard case .array(let items)? = value else { throw error("must be an array, got \(described)") }
    return items.enumerated().map { JSONInput(value: $1, path: "\(path)[\($0)]", source: source) }
  }

  func string() throws(FleetError) -> String {
    guard case .string(let text)? = value else { throw error("must be a string, got \(described)") }
    return text
  }

  func bool() throws(FleetError) -> Bool {
    guard case .bool(let flag)? = value else { throw error("must be true or false, got \(described)") }
    return flag
  }

  func number() throws(FleetError) -> Double {
    guard case .number(let number)? = value, number.isFinite else { throw error("must be a number, got \(described)") }
    return number
  }

  /// A whole number within `range`.
  func integer(_ range: ClosedRange<Int>) throws(FleetError) -> Int {
    let number = try number()
    guard number.rounded() == number, Double(range.lowerBound) <= number, number <= Double(range.upperBound) else {
      throw error("must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(number)")
    }
    return Int(number)
  }

  /// A decimal string: "2.50", never a JSON number, whose binary value would not be exact.
  func decimal() throws(FleetError) -> Decimal6 {
    guard case .string(let text)? = value else {
      throw error("must be a decimal string such as \"1.20\", got \(described)")
    }
    guard let decimal = Decimal6(text) else {
      throw error("must be a decimal string such as \"1.20\" (at most six decimals), got \"\(text)\"")
    }
    return decimal
  }

  /// A decimal string that is an amount of `currency`: not finer than its minor unit, not
  /// negative.
  func money(_ currency: Currency) throws(FleetError) -> Money {
    let decimal = try decimal()
    guard decimal.micros >= 0 else { throw error("must not be negative, got \"\(decimal)\"") }
    guard let money = decimal.money(currency) else {
      throw error("\(currency.code) has \(currency.digits) decimals: \"\(decimal)\" is finer than its minor unit")
    }
    return money
  }

  var described: String {
    guard let value else { return "nothing (it is required)" }
    switch value {
    case .string(let text): return "\"\(text.prefix(40))\""
    case .number(let number): return "\(number)"
    default: return value.kind
    }
  }
}
