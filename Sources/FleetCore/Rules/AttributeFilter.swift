import Foundation

/// An AIP-160 filter over vehicle attributes, as Fleet Engine's ListVehicles and SearchVehicles
/// take it in `filter`: restrictions `attributes.KEY = "VALUE"` (or `!=`) combined with `AND`,
/// `OR`, `NOT` (or a leading `-`) and parentheses; juxtaposed restrictions are ANDed.
///
/// Fleet Engine's rules: only vehicle attributes may be filtered, every value is compared as a
/// string (a bool attribute as "true"/"false", a number as written, "10" for 10.0), numbers and
/// booleans must therefore be quoted, and a filter holds at most 50 restrictions. As AIP-160
/// says, OR binds tighter than AND: `a AND b OR c` is `a AND (b OR c)`.
public struct AttributeFilter: Sendable, Hashable, CustomStringConvertible {
  indirect enum Node: Sendable, Hashable {
    /// `attributes.key = value`, or `!=` when `negated`.
    case restriction(key: String, value: String, negated: Bool)
    /// `name = value` on one of the filtered resource's own properties (ListTasks' `state`, …).
    case property(name: String, value: String, negated: Bool)
    /// `name < time` (or `<=`, `>`, `>=`, `=`, `!=`) on a time property, in seconds since 1970.
    case time(name: String, comparator: String, seconds: Double)
    case not(Node)
    case and([Node])
    case or([Node])
  }

  let root: Node
  /// The filter as the client wrote it.
  public let text: String

  /// Fleet Engine: "The maximum number of restrictions allowed in a filter query is 50."
  public static let maximumRestrictions = 50
  /// Parentheses nest at most this deep: a hostile filter cannot exhaust the parser's stack.
  public static let maximumNesting = 32

  /// Parses `text`; errors are INVALID_ARGUMENT naming `field`, the 1-based character position and
  /// what was expected there.
  /// How a resource's own property compares: as text (`=`, `!=`), or as a time (also `<`, `<=`,
  /// `>`, `>=`, against an RFC 3339 time in quotes).
  public enum PropertyKind: Sendable, Hashable {
    case text, time
  }

  public init(parsing text: String, field: String = "filter", properties: [String: PropertyKind] = [:])
    throws(FleetError)
  {
    var parser = Parser(text: text, field: field, properties: properties)
    root = try parser.parseFilter()
    self.text = text
  }

  public var description: String { text }

  /// Whether a vehicle with these attributes passes the filter.
  public func matches(_ attributes: [Attribute]) -> Bool { Self.evaluate(root, attributes) { _ in nil } }

  /// Whether a resource with these attributes and these properties (each as its string, a time as
  /// its seconds since 1970; nil when unset) passes the filter.
  public func matches(_ attributes: [Attribute], properties: (String) -> String?) -> Bool {
    Self.evaluate(root, attributes, properties)
  }

  static func evaluate(_ node: Node, _ attributes: [Attribute], _ properties: (String) -> String?) -> Bool {
    switch node {
    case .restriction(let key, let value, let negated):
      // A vehicle lacking the key has no attribute equal to the value: `!=` holds for it.
      let equal = attributes.contains { $0.key == key && $0.value.description == value }
      return equal != negated
    case .property(let name, let value, let negated): return (properties(name) == value) != negated
    case .time(let name, let comparator, let seconds):
      // An unset time is in no range, and differs from every time.
      guard let text = properties(name), let time = Double(text) else { return comparator == "!=" }
      switch comparator {
      case "<": return time < seconds
      case "<=": return time <= seconds
      case ">": return time > seconds
      case ">=": return time >= seconds
      case "!=": return time != seconds
      default: return time == seconds
      }
    case .not(let inner): return !evaluate(inner, attributes, properties)
    case .and(let nodes): return nodes.allSatisfy { evaluate($0, attributes, properties) }
    case .or(let nodes): return nodes.contains { evaluate($0, attributes, properties) }
    }
  }
}

extension AttributeFilter {
  struct Token: Equatable {
    enum Kind: Equatable {
      case word(String)
      case quoted(String)
      case symbol(String)
      case end
    }
    var kind: Kind
    /// 1-based character position in the filter.
    var position: Int

    var shown: String {
      switch kind {
      case .word(let w): "'\(w)'"
      case .quoted(let q): "\"\(q)\""
      case .symbol(let s): "'\(s)'"
      case .end: "the end of the filter"
      }
    }
  }

  /// Recursive descent over AIP-160's grammar, restricted to what Fleet Engine accepts:
  ///
  ///     filter     = [expression]
  ///     expression = sequence {"AND" sequence}
  ///     sequence   = factor {factor}
  ///     factor     = term {"OR" term}
  ///     term       = ["NOT" | "-"] simple
  ///     simple     = restriction | "(" expression ")"
  ///     restriction = "attributes" "." key ("=" | "!=") value
  struct Parser {
    let field: String
    /// The resource's own properties a restriction may name besides `attributes.KEY`.
    var properties: [String: PropertyKind] = [:]
    var tokens: [Token] = []
    var index = 0
    var restrictions = 0
    var depth = 0
    var tokenizeError: FleetError?

    init(text: String, field: String, properties: [String: PropertyKind] = [:]) {
      self.field = field
      self.properties = properties
      do throws(FleetError) {
        tokens = try Self.tokenize(text, field: field)
      } catch {
        tokenizeError = error
      }
    }

    var current: Token { tokens[index] }

    func error(_ message: String, at token: Token? = nil) -> FleetError {
      let token = token ?? current
      return .invalid("\(field): at position \(token.position): \(message), got \(token.shown)")
    }

    mutating func parseFilter() throws(FleetError) -> Node {
      if let tokenizeError { throw tokenizeError }
      guard current.kind != .end else { return .and([]) }
      let node = try parseExpression()
      guard current.kind == .end else {
        throw error("expected AND, OR or a restriction (the filter may have an unbalanced ')')")
      }
      return node
    }

    mutating func parseExpression() throws(FleetError) -> Node {
      var nodes = [try parseSequence()]
      while current.kind == .word("AND") {
        index += 1
        nodes.append(try parseSequence())
      }
      return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    /// Restrictions side by side, ANDed, until something that cannot start one.
    mutating func parseSequence() throws(FleetError) -> Node {
      var nodes = [try parseFactor()]
      while startsTerm(current) {
        nodes.append(try parseFactor())
      }
      return nodes.count == 1 ? nodes[0] : .and(nodes)
    }

    func startsTerm(_ token: Token) -> Bool {
      switch token.kind {
      case .word(let w): w != "AND" && w != "OR"
      case .symbol(let s): s == "(" || s == "-"
      case .quoted: true
      case .end: false
      }
    }

    mutating func parseFactor() throws(FleetError) -> Node {
      var nodes = [try parseTerm()]
      while current.kind == .word("OR") {
        index += 1
        nodes.append(try parseTerm())
      }
      return nodes.count == 1 ? nodes[0] : .or(nodes)
    }

    mutating func parseTerm() throws(FleetError) -> Node {
      if current.kind == .word("NOT") || current.kind == .symbol("-") {
        index += 1
        return .not(try parseSimple())
      }
      return try parseSimple()
    }

    mutating func parseSimple() throws(FleetError) -> Node {
      if current.kind == .symbol("(") {
        depth += 1
        defer { depth -= 1 }
        guard depth <= AttributeFilter.maximumNesting else {
          throw .invalid(
            "\(field): at position \(current.position): parentheses may nest at most \(AttributeFilter.maximumNesting) deep"
          )
        }
        index += 1
        guard current.kind != .symbol(")") else { throw error("expected a restriction inside '( )'") }
        let node = try parseExpression()
        guard current.kind == .symbol(")") else { throw error("expected ')' to close the '('") }
        index += 1
        return node
      }
      return try parseRestriction()
    }

    mutating func parseRestriction() throws(FleetError) -> Node {
      let start = current
      guard case .word(let name) = start.kind else {
        throw error("expected a restriction such as attributes.KEY = \"VALUE\"")
      }
      if ["AND", "OR", "NOT"].contains(name) { throw error("expected a restriction before \(name)") }
      if let kind = properties[name] { return try parsePropertyRestriction(name, kind: kind, start: start) }
      guard name == "attributes" else {
        if !properties.isEmpty {
          throw .invalid(
            "\(field): at position \(start.position): '\(name)' cannot be filtered; filter on attributes.KEY or one of \(properties.keys.sorted().joined(separator: ", "))"
          )
        }
        throw .invalid(
          "\(field): at position \(start.position): only vehicle attributes can be filtered (attributes.KEY = \"VALUE\"), got '\(name)'"
        )
      }
      index += 1
      guard current.kind == .symbol(".") else { throw error("expected '.' and an attribute key after 'attributes'") }
      index += 1
      let key: String
      switch current.kind {
      case .word(let w): key = w
      case .quoted(let q): key = q
      default: throw error("expected an attribute key after 'attributes.'")
      }
      guard !key.isEmpty, !key.contains(":") else {
        throw error("expected an attribute key (not empty, without ':')")
      }
      index += 1
      let negated: Bool
      switch current.kind {
      case .symbol("="): negated = false
      case .symbol("!="): negated = true
      case .symbol(let s) where ["<", "<=", ">", ">=", ":"].contains(s):
        throw .invalid(
          "\(field): at position \(current.position): attributes are compared as strings, so only '=' and '!=' are supported, got '\(s)'"
        )
      default: throw error("expected '=' or '!=' after attributes.\(key)")
      }
      index += 1
      let value: String
      switch current.kind {
      case .quoted(let q): value = q
      case .word(let w) where ["AND", "OR", "NOT"].contains(w): throw error("expected a value after the comparator")
      case .word(let w) where w == "true" || w == "false" || Double(w) != nil:
        throw .invalid(
          "\(field): at position \(current.position): attributes are compared as strings: quote the value (\"\(w)\")"
        )
      case .word(let w): value = w
      default: throw error("expected a value after the comparator")
      }
      index += 1
      try countRestriction(at: start)
      return .restriction(key: key, value: value, negated: negated)
    }

    /// Fleet Engine's limit on restrictions, counted as each is read.
    mutating func countRestriction(at start: Token) throws(FleetError) {
      restrictions += 1
      guard restrictions <= AttributeFilter.maximumRestrictions else {
        throw .invalid(
          "\(field): at position \(start.position): a filter may hold at most \(AttributeFilter.maximumRestrictions) restrictions"
        )
      }
    }

    /// `name = value` (or `!=`) on one of `properties`: a value is a word (`OPEN`) or quoted; a
    /// time also takes `<`, `<=`, `>` and `>=`, and its value is an RFC 3339 time in quotes.
    mutating func parsePropertyRestriction(_ name: String, kind: PropertyKind, start: Token) throws(FleetError)
      -> Node
    {
      index += 1
      if kind == .time {
        guard case .symbol(let comparator) = current.kind, ["=", "!=", "<", "<=", ">", ">="].contains(comparator)
        else { throw error("expected a comparator (= != < <= > >=) after \(name)") }
        index += 1
        guard case .quoted(let text) = current.kind, let time = Self.rfc3339(text) else {
          throw error(
            "expected an RFC 3339 time in quotes after \(name) \(comparator), such as \"2024-01-01T00:00:00Z\"")
        }
        index += 1
        try countRestriction(at: start)
        return .time(name: name, comparator: comparator, seconds: time.timeIntervalSince1970)
      }
      let negated: Bool
      switch current.kind {
      case .symbol("="): negated = false
      case .symbol("!="): negated = true
      case .symbol(let s):
        throw .invalid("\(field): at position \(current.position): \(name) supports only '=' and '!=', got '\(s)'")
      default: throw error("expected '=' or '!=' after \(name)")
      }
      index += 1
      let value: String
      switch current.kind {
      case .quoted(let q): value = q
      case .word(let w) where !["AND", "OR", "NOT"].contains(w): value = w
      default: throw error("expected a value after the comparator")
      }
      index += 1
      try countRestriction(at: start)
      return .property(name: name, value: value, negated: negated)
    }

    /// An RFC 3339 time, with or without fractions of a second.
    static func rfc3339(_ text: String) -> Date? {
      let formatter = ISO8601DateFormatter()
      if let date = formatter.date(from: text) { return date }
      formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      return formatter.date(from: text)
    }

    /// Words (letters, digits and `_ - . + @`), quoted strings ("…" or '…' with backslash
    /// escapes), `( ) . = != < <= > >= : -`.
    static func tokenize(_ text: String, field: String) throws(FleetError) -> [Token] {
      var tokens: [Token] = []
      let characters = Array(text)
      var i = 0
      func isWordCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "_" || c == "-" || c == "+" || c == "@"
      }
      while i < characters.count {
        let c = characters[i]
        let position = i + 1
        if c.isWhitespace {
          i += 1
        } else if c == "\"" || c == "'" {
          var value = ""
          var j = i + 1
          var closed = false
          while j < characters.count {
            let d = characters[j]
            if d == "\\", j + 1 < characters.count {
              value.append(characters[j + 1])
              j += 2
            } else if d == c {
              closed = true
              j += 1
              break
            } else {
              value.append(d)
              j += 1
            }
          }
          guard closed else {
            throw .invalid("\(field): at position \(position): the string starting here is not closed with \(c)")
          }
          tokens.append(Token(kind: .quoted(value), position: position))
          i = j
        } else if c == "!" || c == "<" || c == ">" {
          if i + 1 < characters.count, characters[i + 1] == "=" {
            tokens.append(Token(kind: .symbol("\(c)="), position: position))
            i += 2
          } else if c == "!" {
            throw .invalid("\(field): at position \(position): expected '!=', got '!'")
          } else {
            tokens.append(Token(kind: .symbol(String(c)), position: position))
            i += 1
          }
        } else if "().=:".contains(c) {
          tokens.append(Token(kind: .symbol(String(c)), position: position))
          i += 1
        } else if c == "-" && !(tokens.last.map(Self.endsOperand) ?? false) {
          // A leading '-' negates (AIP-160); inside a word it is part of the word.
          tokens.append(Token(kind: .symbol("-"), position: position))
          i += 1
        } else if isWordCharacter(c) {
          var j = i
          // A dot inside a number ("1.5") belongs to it; elsewhere it separates a field path.
          while j < characters.count
            && (isWordCharacter(characters[j])
              || (characters[j] == "." && j + 1 < characters.count && characters[j + 1].isNumber
                && characters[i].isNumber))
          {
            j += 1
          }
          tokens.append(Token(kind: .word(String(characters[i..<j])), position: position))
          i = j
        } else {
          throw .invalid("\(field): at position \(position): unexpected character '\(c)'")
        }
      }
      tokens.append(Token(kind: .end, position: characters.count + 1))
      return tokens
    }

    /// Whether a token ends an operand, so that a '-' right after it cannot be a negation.
    static func endsOperand(_ token: Token) -> Bool {
      switch token.kind {
      case .symbol(let s): s == "." || s == "=" || s == "!="
      default: false
      }
    }
  }
}

/// One `key:value` term of Fleet Engine's `required_*` attribute fields.
public struct AttributeTerm: Sendable, Hashable {
  public var key: String
  public var value: String

  public init(key: String, value: String) {
    self.key = key
    self.value = value
  }

  /// `key:value`, split at the first ':' (keys never hold one).
  public init?(_ text: some StringProtocol) {
    guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return nil }
    key = String(text[..<colon])
    value = String(text[text.index(after: colon)...])
  }

  /// Values compare as strings: a bool as "true"/"false", a whole number without decimals.
  func matches(_ attributes: [Attribute]) -> Bool {
    attributes.contains { $0.key == key && $0.value.description == value }
  }
}

/// The attribute conditions of a vehicle query: Fleet Engine's three `required_*` lists, or an
/// AIP-160 `filter` (never both).
public struct AttributeQuery: Sendable, Hashable {
  /// Every term must match.
  public var all: [AttributeTerm] = []
  /// In each list, at least one term must match.
  public var oneOf: [[AttributeTerm]] = []
  /// Every term of at least one list must match.
  public var sets: [[AttributeTerm]] = []
  public var filter: AttributeFilter?

  public init(
    all: [AttributeTerm] = [], oneOf: [[AttributeTerm]] = [], sets: [[AttributeTerm]] = [],
    filter: AttributeFilter? = nil
  ) {
    self.all = all
    self.oneOf = oneOf
    self.sets = sets
    self.filter = filter
  }

  public var isEmpty: Bool { all.isEmpty && oneOf.isEmpty && sets.isEmpty && filter == nil }

  /// Fleet Engine: `filter` replaces the `required_*` fields; a request may not give both.
  public static func checkExclusive(filter: String, requiredGiven: Bool) throws(FleetError) {
    if !filter.isEmpty && requiredGiven {
      throw .invalid(
        "filter cannot be combined with required_attributes, required_one_of_attributes or required_one_of_attribute_sets: give one or the other"
      )
    }
  }

  /// Fleet Engine allows at most 50 `required_attributes` (as many as a vehicle can have
  /// usefully); FleetKit holds the two list-of-lists fields to the same: at most 50 lists of at
  /// most 50 attributes, so that no request makes every vehicle's check slow.
  public static func checkSizes(all: Int, oneOf: [Int], sets: [Int]) throws(FleetError) {
    guard all <= 50 else { throw .invalid("required_attributes may hold at most 50 attributes, got \(all)") }
    for (field, lists) in [("required_one_of_attributes", oneOf), ("required_one_of_attribute_sets", sets)] {
      guard lists.count <= 50 else { throw .invalid("\(field) may hold at most 50 lists, got \(lists.count)") }
      if let i = lists.firstIndex(where: { $0 > 50 }) {
        throw .invalid("\(field)[\(i)] may hold at most 50 attributes, got \(lists[i])")
      }
    }
  }

  public func matches(_ attributes: [Attribute]) -> Bool {
    if let filter { return filter.matches(attributes) }
    guard all.allSatisfy({ $0.matches(attributes) }) else { return false }
    guard oneOf.allSatisfy({ $0.contains { $0.matches(attributes) } }) else { return false }
    return sets.isEmpty || sets.contains { $0.allSatisfy { $0.matches(attributes) } }
  }
}
