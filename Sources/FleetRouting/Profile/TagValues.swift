import Foundation

/// Parsers for the measured values OSM tags carry, read the way OSRM's profile library
/// (`lib/measure.lua`, `lib/maxspeed.lua`) reads them, so both engines see the same limits.
enum TagValues {
  /// The leading whole number of a value ("50", "50 mph", "30;50" → 30).
  static func leadingInteger(_ value: String) -> Int? {
    Int(value.prefix { $0.isASCII && $0.isNumber })
  }

  /// The first decimal number anywhere in the value, with a comma read as a decimal point
  /// ("2,5 m" → 2.5, "ca. 3" → 3).
  static func firstNumber(_ value: String) -> Double? {
    let normalized = value.replacingOccurrences(of: ",", with: ".")
    guard let start = normalized.firstIndex(where: { $0.isASCII && $0.isNumber }) else { return nil }
    var number = ""
    var seenDot = false
    for c in normalized[start...] {
      if c.isASCII && c.isNumber {
        number.append(c)
      } else if c == "." && !seenDot {
        seenDot = true
        number.append(c)
      } else {
        break
      }
    }
    if number.hasSuffix(".") { number.removeLast() }
    return Double(number)
  }

  /// Metres of a length ("2.5", "2,5 m", "6'6\"" in feet and inches).
  static func meters(_ value: String) -> Double? {
    guard var n = firstNumber(value) else { return nil }
    if let feet = value.firstIndex(of: "'") {
      n *= 12
      let inches = value[value.index(after: feet)...]
      if let digits = inches.firstIndex(where: { $0.isASCII && $0.isNumber }) {
        n += Double(leadingInteger(String(inches[digits...])) ?? 0)
      }
      n *= 0.0254
    }
    return n
  }

  /// Metres of a height: a length, or the signposted default for "none" and its kin.
  static func height(_ value: String) -> Double? {
    ["default", "none", "no-sign", "unsigned"].contains(value) ? 4.5 : meters(value)
  }

  /// Kilograms of a weight: tonnes unless it says "kg" or "lbs".
  static func kilograms(_ value: String) -> Double? {
    guard let n = firstNumber(value) else { return nil }
    if value.contains("lbs") { return n * 0.45359237 }
    if value.contains("kg") { return n }
    return n * 1000
  }

  /// km/h of a numeric speed ("50", "30 mph"); nil when the value does not start with a number.
  static func speed(_ value: String) -> Double? {
    guard let n = leadingInteger(value) else { return nil }
    return value.contains("mph") || value.contains("mp/h") ? Double(n) * 1.609 : Double(n)
  }

  /// The kind in a symbolic speed limit: the letters after the first two letters followed by a
  /// colon ("fr:urban" → "urban", "be-bru:rural" → "rural").
  static func limitKind(_ value: String) -> String? {
    let characters = Array(value)
    guard characters.count >= 4 else { return nil }
    for i in 0...(characters.count - 3)
    where characters[i].isASCIILetter && characters[i + 1].isASCIILetter
      && characters[i + 2] == ":"
    {
      let kind = characters[(i + 3)...].prefix { $0.isASCIILetter }
      if !kind.isEmpty { return String(kind) }
    }
    return nil
  }

  /// Seconds of an OSM duration: ISO 8601 (`PT1H30M`, `P1DT2H`), `hh:mm:ss`, `hh:mm`, or minutes.
  static func seconds(_ value: String) -> Double? {
    let value = value.trimmingCharacters(in: .whitespaces)
    if value.hasPrefix("P") { return iso8601Seconds(value.dropFirst()) }
    let parts = value.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count),
      parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } })
    else { return nil }
    let numbers = parts.map { Double($0)! }
    switch numbers.count {
    case 1: return numbers[0] * 60
    case 2: return numbers[0] * 3600 + numbers[1] * 60
    default: return numbers[0] * 3600 + numbers[1] * 60 + numbers[2]
    }
  }

  private static func iso8601Seconds(_ rest: Substring) -> Double? {
    var total = 0.0
    var number = ""
    var inTime = false
    var any = false
    for c in rest {
      if c.isASCII && (c.isNumber || c == ".") {
        number.append(c)
        continue
      }
      if c == "T" && number.isEmpty && !inTime {
        inTime = true
        continue
      }
      guard let n = Double(number) else { return nil }
      number = ""
      any = true
      switch (c, inTime) {
      case ("W", false): total += n * 7 * 86400
      case ("D", false): total += n * 86400
      case ("H", true): total += n * 3600
      case ("M", true): total += n * 60
      case ("S", true): total += n
      default: return nil
      }
    }
    return any && number.isEmpty ? total : nil
  }

  /// A `;`-separated list with its items trimmed and joined by `separator` and a space, as OSRM
  /// stores refs and destinations ("A 1;B2" → "A 1; B2").
  static func canonicalList(_ value: String, separator: Character) -> String {
    value.split(separator: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
      .joined(separator: "\(separator) ")
  }
}

extension Character {
  var isASCIILetter: Bool { isASCII && isLetter }
}
