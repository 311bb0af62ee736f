import FleetCore
import Testing

@Suite("AIP-160 attribute filters")
struct AttributeFilterTests {
  let gold: [Attribute] = [
    Attribute(key: "tier", value: .string("gold")), Attribute(key: "ev", value: .bool(true)),
    Attribute(key: "seats", value: .number(6)), Attribute(key: "pet-friendly", value: .string("yes")),
  ]
  let plain: [Attribute] = [Attribute(key: "tier", value: .string("basic")), Attribute(key: "ev", value: .bool(false))]

  func matches(_ filter: String, _ attributes: [Attribute]) throws -> Bool {
    try AttributeFilter(parsing: filter).matches(attributes)
  }

  @Test(arguments: [
    ("attributes.tier = \"gold\"", true, false),
    ("attributes.tier=\"gold\"", true, false),
    ("attributes.tier = 'gold'", true, false),
    ("attributes.tier = gold", true, false),
    ("attributes.tier != \"gold\"", false, true),
    ("attributes.ev = \"true\"", true, false),
    ("attributes.seats = \"6\"", true, false),
    ("attributes.pet-friendly = \"yes\"", true, false),
    ("attributes.\"pet-friendly\" = \"yes\"", true, false),
    ("attributes.missing != \"x\"", true, true),
    ("attributes.missing = \"x\"", false, false),
    ("NOT attributes.tier = \"gold\"", false, true),
    ("-attributes.tier = \"gold\"", false, true),
    ("attributes.tier = \"gold\" AND attributes.ev = \"true\"", true, false),
    ("attributes.tier = \"gold\" attributes.ev = \"true\"", true, false),
    ("attributes.tier = \"basic\" OR attributes.ev = \"true\"", true, true),
    ("(attributes.tier = \"basic\" OR attributes.tier = \"gold\") AND attributes.ev = \"false\"", false, true),
    ("NOT (attributes.tier = \"basic\" OR attributes.seats = \"6\")", false, false),
    ("", true, true),
  ])
  func evaluates(filter: String, onGold: Bool, onPlain: Bool) throws {
    #expect(try matches(filter, gold) == onGold, "\(filter) on gold")
    #expect(try matches(filter, plain) == onPlain, "\(filter) on plain")
  }

  @Test func orBindsTighterThanAndAsAIP160Says() throws {
    // a AND b OR c is a AND (b OR c): false for a vehicle that is only c.
    let onlyC = [Attribute(key: "c", value: .string("1"))]
    #expect(try !matches("attributes.a = \"1\" AND attributes.b = \"1\" OR attributes.c = \"1\"", onlyC))
    // (a AND b) OR c holds for it.
    #expect(try matches("(attributes.a = \"1\" AND attributes.b = \"1\") OR attributes.c = \"1\"", onlyC))
  }

  @Test(arguments: [
    ("attributes.tier =", "position 18", "expected a value"),
    ("attributes.tier \"gold\"", "position 17", "expected '=' or '!='"),
    ("attributes = \"gold\"", "position 12", "expected '.'"),
    ("vehicle_state = \"ONLINE\"", "position 1", "only vehicle attributes can be filtered"),
    ("attributes.tier = \"gold", "position 19", "not closed"),
    ("(attributes.tier = \"gold\"", "position 26", "expected ')'"),
    ("attributes.tier = \"gold\")", "position 25", "unbalanced"),
    ("attributes.tier = \"gold\" AND", "position 29", "expected a restriction"),
    ("attributes.seats > \"5\"", "position 18", "only '=' and '!='"),
    ("attributes.seats = 6", "position 20", "quote the value"),
    ("attributes.ev = true", "position 17", "quote the value"),
    ("attributes.tier = \"a\" OR OR attributes.ev = \"true\"", "position 26", "expected a restriction"),
    ("attributes.tier ! \"a\"", "position 17", "expected '!='"),
    ("()", "position 2", "expected a restriction inside"),
    ("attributes.tier = \"a\" # x", "position 23", "unexpected character"),
  ])
  func syntaxErrorsNameThePositionAndWhatWasExpected(filter: String, position: String, expected: String) {
    #expect {
      _ = try AttributeFilter(parsing: filter)
    } throws: { error in
      guard let error = error as? FleetError else { return false }
      return error.code == .invalidArgument && error.message.hasPrefix("filter: ")
        && error.message.contains(position) && error.message.contains(expected)
    }
  }

  @Test func atMostFiftyRestrictions() throws {
    let fifty = (1...50).map { "attributes.k\($0) = \"v\"" }.joined(separator: " OR ")
    _ = try AttributeFilter(parsing: fifty)
    let error = #expect(throws: FleetError.self) {
      _ = try AttributeFilter(parsing: fifty + " OR attributes.k51 = \"v\"")
    }
    #expect(error?.message.contains("at most 50 restrictions") == true)
  }

  @Test func deepNestingIsRefusedNotFollowed() throws {
    let fine = String(repeating: "(", count: 32) + "attributes.a = \"1\"" + String(repeating: ")", count: 32)
    #expect(try AttributeFilter(parsing: fine).matches([Attribute(key: "a", value: .string("1"))]))
    let hostile = String(repeating: "(", count: 1_000_000)
    let error = #expect(throws: FleetError.self) { _ = try AttributeFilter(parsing: hostile) }
    #expect(error?.message.contains("at most 32 deep") == true)
  }

  @Test func requiredTermsCompareValuesAsStrings() {
    let query = AttributeQuery(
      all: [AttributeTerm("ev:true")!], oneOf: [[AttributeTerm("tier:basic")!, AttributeTerm("tier:gold")!]],
      sets: [[AttributeTerm("seats:6")!, AttributeTerm("pet-friendly:yes")!], [AttributeTerm("tier:none")!]])
    #expect(query.matches(gold))
    #expect(!query.matches(plain))
    #expect(AttributeTerm("novalue") == nil)
    #expect(AttributeTerm(":x") == nil)
    #expect(AttributeTerm("url:http://x")?.value == "http://x")
  }

  /// A resource's own properties (ListTasks'): text by `=` and `!=`, a time also by order, its
  /// value an RFC 3339 time in quotes.
  @Test func propertiesAndTimes() throws {
    let properties: [String: AttributeFilter.PropertyKind] = ["state": .text, "task_outcome_time": .time]
    let filter = try AttributeFilter(
      parsing:
        #"state = CLOSED AND task_outcome_time >= "2026-01-01T00:00:00Z" AND task_outcome_time < "2026-01-02T00:00:00.5Z""#,
      properties: properties)
    func task(_ state: String, _ time: String?) -> Bool {
      filter.matches([]) { name in name == "state" ? state : time }
    }
    #expect(task("CLOSED", "1767225600"))  // 2026-01-01T00:00:00Z
    #expect(!task("CLOSED", "1767139200"))  // a day before
    #expect(!task("CLOSED", "1767312000.5"))  // at the end, excluded
    #expect(!task("OPEN", "1767225600"))
    #expect(!task("CLOSED", nil))
    let refused = #expect(throws: FleetError.self) {
      try AttributeFilter(parsing: #"task_outcome_time > "yesterday""#, properties: properties)
    }
    #expect(refused?.message.contains("RFC 3339") == true)
    #expect(throws: FleetError.self) { try AttributeFilter(parsing: "state < OPEN", properties: properties) }
    #expect(throws: FleetError.self) { try AttributeFilter(parsing: #"colour = "red""#, properties: properties) }
  }
}
