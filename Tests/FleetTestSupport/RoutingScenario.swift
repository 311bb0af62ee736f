import FleetCore
import FleetGeometry
import Foundation

/// A routing rule's fixture, read from a text file in the manner of OSRM's feature files: a
/// drawn map (`MapFixture`), the tags of its ways and nodes, restrictions, and what routes across
/// it must do. The same files are checked against OSRM by `dev/check-rules-with-osrm.py`, so a
/// fixture states OSRM's behaviour unless it says where FleetKit differs on purpose.
///
///     # Ferries are timed by their duration tag (car.lua, ferries handler).
///     origin: -34.93,138.6          optional, defaults to Monaco
///     grid: 25                      metres per character, optional
///     map:
///       a   b       c   d
///     ways:
///       ab  highway=primary
///       bc  route=ferry duration=PT10M
///     nodes:
///       b   highway=traffic_signals
///     restrictions:
///       ab b bc  restriction=no_left_turn     from-way via (node or ways, comma-separated) to-way
///     routes:
///       a d: ways=ab,bc,cd duration=640±2
///       d a: none
///       a c: turns="depart,new name straight,arrive"   maneuvers as OSRM's type and modifier
///       a d: lanes=",left:true straight:false,"         per step, its intersections' lanes
///            (joined by `|`, none as empty), left to right, each its indications and validity
///       a c: bearings="0>0,0>90,90>0"                  per step, bearing_before>bearing_after
///       a c: intersections=2,1,1                        per step, how many intersections it lists
///       a d: exits=",3,3,"                              per step, its maneuver's exit (none empty)
///       a d: names="West,North,North,North"             per step, its name
///       a d: rotary_names=",Place Ronde,,"              per step, its rotary's name (none empty)
///       a d: junction_refs="4,5,5"                      per step, its road's exits (`junction:ref`)
///       a d: pronunciations=",Lester Road,"             per step, its road's `name:pronunciation`
public struct RoutingScenario: Sendable {
  public var name: String
  /// The comment lines at the top: what rule this is and where it comes from.
  public var title: String
  public var map: MapFixture
  public var routes: [Expectation]

  /// One query and what its answer must be.
  public struct Expectation: Sendable, CustomStringConvertible {
    public var line: Int
    public var text: String
    public var waypoints: [Character]
    /// The ways driven, by their drawn nodes, repeats collapsed; nil when not checked.
    public var ways: [String]?
    public var distance: Measure?
    public var duration: Measure?
    /// No route between the points.
    public var none = false
    /// The ways the first and last waypoint snap to.
    public var start: String?
    public var end: String?
    /// The steps' maneuvers, each its type and modifier ("turn left"), departures and arrivals
    /// by their type alone; nil when not checked.
    public var turns: [String]?
    /// Per step, the lanes at its intersections: intersections joined by `|`, one without lanes
    /// empty, lanes left to right joined by spaces, each `indication;indication:valid`.
    public var lanes: [String]?
    /// Per step, its maneuver's `bearing_before>bearing_after`.
    public var bearings: [String]?
    /// Per step, the number of intersections it lists.
    public var intersections: [String]?
    /// Per step, its maneuver's exit number, empty where it has none.
    public var exits: [String]?
    /// Per step, its name.
    public var names: [String]?
    /// Per step, the name of the rotary it goes round, empty where none.
    public var rotaryNames: [String]?
    /// Per step, its road's exit numbers (`junction:ref`, OSRM's step `exits`).
    public var junctionRefs: [String]?
    /// Per step, how its road's name is spoken (`name:pronunciation`).
    public var pronunciations: [String]?

    public var description: String { "line \(line): \(text)" }
  }

  /// A figure and how far from it an answer may be.
  public struct Measure: Sendable {
    public var value: Double
    public var tolerance: Double

    public func accepts(_ x: Double) -> Bool { abs(x - value) <= tolerance }
  }

  public struct ParseError: Error, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var reason: String
    public var description: String { "\(file):\(line): \(reason)" }
  }

  /// The scenarios in a folder, by file name.
  public static func all(in folder: URL) throws -> [RoutingScenario] {
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".fixture") }
      .sorted()
    return try files.map { try load(folder.appendingPathComponent($0)) }
  }

  public static func load(_ url: URL) throws -> RoutingScenario {
    try parse(String(contentsOf: url, encoding: .utf8), name: url.deletingPathExtension().lastPathComponent)
  }

  public static func parse(_ text: String, name: String) throws -> RoutingScenario {
    let fail = { (line: Int, reason: String) in ParseError(file: name, line: line, reason: reason) }
    var title: [String] = []
    var origin = MapFixture.origin
    var grid = 25.0
    var section = ""
    var drawing: [String] = []
    var ways: [(Int, String, [String: String])] = []
    var nodes: [(Int, Character, [String: String])] = []
    var restrictions: [(Int, String, [String], String, [String: String])] = []
    var routes: [Expectation] = []
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let number = index + 1
      let line = String(raw)
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("#") {
        if section.isEmpty { title.append(String(trimmed.dropFirst()).trimmingCharacters(in: .whitespaces)) }
        continue
      }
      if !line.hasPrefix(" "), let colon = trimmed.firstIndex(of: ":") {
        let key = String(trimmed[..<colon])
        let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        switch key {
        case "origin":
          let parts = value.split(separator: ",").compactMap { Double($0) }
          guard parts.count == 2 else { throw fail(number, "origin is LAT,LNG") }
          origin = LatLng(latitude: parts[0], longitude: parts[1])
        case "grid":
          guard let metres = Double(value) else { throw fail(number, "grid is metres per character") }
          grid = metres
        case "map", "ways", "nodes", "restrictions", "routes": section = key
        default: throw fail(number, "unknown section \(key)")
        }
        continue
      }
      if section == "map" {
        drawing.append(line)
        continue
      }
      guard !trimmed.isEmpty else { continue }
      let words = try Self.words(trimmed).get()
      switch section {
      case "ways":
        ways.append((number, words[0], try tags(words.dropFirst(), number, fail)))
      case "nodes":
        guard words[0].count == 1 else { throw fail(number, "a node is one letter") }
        nodes.append((number, words[0].first!, try tags(words.dropFirst(), number, fail)))
      case "restrictions":
        guard words.count >= 4 else { throw fail(number, "a restriction is FROM VIA TO tags") }
        restrictions.append(
          (
            number, words[0], words[1].split(separator: ",").map(String.init), words[2],
            try tags(words.dropFirst(3), number, fail)
          ))
      case "routes":
        routes.append(try expectation(trimmed, line: number, fail))
      default:
        throw fail(number, "a line outside any section")
      }
    }
    // The drawing keeps its shape; only the indentation all its lines share goes.
    while drawing.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { drawing.removeLast() }
    let indent =
      drawing.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min()
      ?? 0
    var map = MapFixture(
      drawing.map { String($0.dropFirst(indent)) }.joined(separator: "\n"), gridMeters: grid, origin: origin)
    for (number, nodesDrawn, tags) in ways {
      guard nodesDrawn.allSatisfy({ map.has($0) }) else {
        throw fail(number, "way \(nodesDrawn) uses a node not drawn")
      }
      map.way(nodesDrawn, tags)
    }
    for (number, node, tags) in nodes {
      guard map.has(node) else { throw fail(number, "node \(node) is not drawn") }
      map.tag(node, tags)
    }
    for (number, from, via, to, tags) in restrictions {
      guard map.hasWay(from), map.hasWay(to) else { throw fail(number, "a restriction names a way not listed") }
      map.restriction(tags, from: from, via: via, to: to)
    }
    for route in routes {
      guard route.waypoints.allSatisfy({ map.has($0) }) else { throw fail(route.line, "a waypoint is not drawn") }
    }
    return RoutingScenario(name: name, title: title.joined(separator: " "), map: map, routes: routes)
  }

  static func tags(_ words: ArraySlice<String>, _ line: Int, _ fail: (Int, String) -> ParseError) throws -> [String:
    String]
  {
    var result: [String: String] = [:]
    for word in words {
      guard let equals = word.firstIndex(of: "=") else { throw fail(line, "\(word) is not key=value") }
      result[String(word[..<equals])] = String(word[word.index(after: equals)...])
    }
    return result
  }

  /// Space-separated words; double quotes keep spaces in a value (`name="Rue Grimaldi"`).
  static func words(_ text: String) -> Result<[String], ParseError> {
    var result: [String] = []
    var current = ""
    var quoted = false
    for c in text {
      if c == "\"" {
        quoted.toggle()
      } else if c == " " && !quoted {
        if !current.isEmpty { result.append(current) }
        current = ""
      } else {
        current.append(c)
      }
    }
    if !current.isEmpty { result.append(current) }
    return .success(result)
  }

  static func expectation(_ text: String, line: Int, _ fail: (Int, String) -> ParseError) throws -> Expectation {
    guard let colon = text.firstIndex(of: ":") else { throw fail(line, "a route is POINTS: expectations") }
    let points = text[..<colon].split(separator: " ").map(String.init)
    guard points.count >= 2, points.allSatisfy({ $0.count == 1 }) else {
      throw fail(line, "a route names at least two points, one character each")
    }
    var expectation = Expectation(line: line, text: text, waypoints: points.map { $0.first! })
    for word in try words(String(text[text.index(after: colon)...])).get() {
      if word == "none" {
        expectation.none = true
        continue
      }
      guard let equals = word.firstIndex(of: "=") else { throw fail(line, "\(word) is not key=value") }
      let key = String(word[..<equals])
      let value = String(word[word.index(after: equals)...])
      func measure(_ defaultTolerance: Double) throws -> Measure {
        let parts = value.split(separator: "±")
        guard let figure = Double(parts[0]), parts.count <= 2 else { throw fail(line, "\(value) is not a figure") }
        return Measure(value: figure, tolerance: parts.count == 2 ? Double(parts[1]) ?? 0 : defaultTolerance)
      }
      // Per-step values where a step may have none: empty fields count.
      let perStep = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      switch key {
      case "ways": expectation.ways = value.split(separator: ",").map(String.init)
      case "distance": expectation.distance = try measure(1)
      case "duration": expectation.duration = try measure(0.5)
      case "start": expectation.start = value
      case "end": expectation.end = value
      case "turns": expectation.turns = value.split(separator: ",").map(String.init)
      case "lanes": expectation.lanes = perStep
      case "bearings": expectation.bearings = value.split(separator: ",").map(String.init)
      case "intersections": expectation.intersections = value.split(separator: ",").map(String.init)
      case "exits": expectation.exits = perStep
      case "names": expectation.names = perStep
      case "rotary_names": expectation.rotaryNames = perStep
      case "junction_refs": expectation.junctionRefs = perStep
      case "pronunciations": expectation.pronunciations = perStep
      default: throw fail(line, "unknown expectation \(key)")
      }
    }
    return expectation
  }
}

extension MapFixture {
  public func has(_ c: Character) -> Bool { locations[c] != nil }
}
