import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting

/// The routing rules, one fixture file each (`Rules/*.fixture`, format in `RoutingScenario`):
/// every route a fixture states must come out as stated.
@Suite("Routing rules")
struct RuleFixtureTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Rules")

  static func names() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".fixture") }.sorted()
      .map { String($0.dropLast(".fixture".count)) }
  }

  @Test(arguments: try names())
  func rule(_ name: String) throws {
    let scenario = try RoutingScenario.load(Self.folder.appendingPathComponent(name + ".fixture"))
    let engine = try scenario.map.engine()
    #expect(!scenario.routes.isEmpty, "\(name) states no route")
    for expected in scenario.routes {
      let points = expected.waypoints.map { scenario.map.point($0) }
      let route: Route
      do {
        route = try engine.route(points)
      } catch {
        #expect(expected.none && error.code == .noRoute, "\(name) \(expected): \(error)")
        continue
      }
      #expect(!expected.none, "\(name) \(expected): found a route of \(route.distance) m")
      let ways = Self.waysDriven(route, engine: engine, map: scenario.map)
      if let want = expected.ways { #expect(ways == want, "\(name) \(expected): drove \(ways)") }
      if let want = expected.start { #expect(ways.first == want, "\(name) \(expected): started on \(ways)") }
      if let want = expected.end { #expect(ways.last == want, "\(name) \(expected): ended on \(ways)") }
      if let want = expected.distance {
        #expect(want.accepts(route.distance), "\(name) \(expected): \(route.distance) m")
      }
      if let want = expected.duration {
        #expect(want.accepts(route.duration), "\(name) \(expected): \(route.duration) s")
      }
      // The route's steps, read by the guidance expectations as the fixtures write them.
      let steps = route.legs.enumerated().flatMap { n, leg in
        engine.steps(of: leg, from: points[n], to: points[n + 1])
      }
      // Each per-step expectation: what the fixture states, how a step reads for it, and its
      // name in a failure.
      let perStep: [([String]?, (RouteStep) -> String, String)] = [
        (expected.turns, Self.turn, "said"),
        (expected.lanes, Self.lanes, "lanes"),
        (expected.bearings, { "\($0.maneuver.bearingBefore)>\($0.maneuver.bearingAfter)" }, "bearings"),
        (expected.intersections, { "\($0.intersections.count)" }, "intersections"),
        (expected.exits, { $0.maneuver.exit.map(String.init) ?? "" }, "exits"),
        (expected.names, \.name, "names"),
        (expected.rotaryNames, \.rotaryName, "rotary names"),
        (expected.junctionRefs, \.exits, "exits (junction:ref)"),
        (expected.pronunciations, \.pronunciation, "pronunciations"),
      ]
      for case (let want?, let read, let what) in perStep {
        let got = steps.map(read)
        #expect(got == want, "\(name) \(expected): \(what) \(got)")
      }
    }
  }

  /// A step's maneuver as the fixtures write it: type and modifier, departures and arrivals by
  /// type alone.
  static func turn(_ step: RouteStep) -> String {
    let kind = step.maneuver.kind
    guard kind != .depart, kind != .arrive, let modifier = step.maneuver.modifier else { return kind.rawValue }
    return "\(kind.rawValue) \(modifier.rawValue)"
  }

  /// A step's lanes as the fixtures write them (`RoutingScenario.Expectation.lanes`).
  static func lanes(_ step: RouteStep) -> String {
    step.intersections.map { intersection in
      intersection.lanes.map { "\($0.indications.joined(separator: ";")):\($0.valid)" }.joined(separator: " ")
    }.joined(separator: "|")
  }

  /// The ways a route drives, by their drawn nodes, consecutive repeats collapsed; a waypoint
  /// on a node leaves a piece of no length at a leg's end, which does not count.
  static func waysDriven(_ route: Route, engine: RoutingEngine, map: MapFixture) -> [String] {
    var ways: [String] = []
    for leg in route.legs {
      var spans = leg.spans[...]
      while spans.count > 1, spans.first!.distance < 0.01 { spans = spans.dropFirst() }
      while spans.count > 1, spans.last!.distance < 0.01 { spans = spans.dropLast() }
      for span in spans {
        let way = map.wayNodes(engine.wayID(ofEdge: span.edge)) ?? "?"
        if ways.last != way { ways.append(way) }
      }
    }
    return ways
  }
}
