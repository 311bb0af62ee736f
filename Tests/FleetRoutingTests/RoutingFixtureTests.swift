import FleetCore
import FleetGeometry
import FleetTestSupport
import Testing

@testable import FleetRouting

/// Routing rules on hand-drawn maps (25 m per character).
@Suite("Routing on drawn maps")
struct RoutingFixtureTests {
  func expectNoRoute(_ engine: RoutingEngine, _ points: [LatLng]) {
    #expect(throws: RoutingError(.noRoute, "no route from coordinate 0 to coordinate 1")) { try engine.route(points) }
  }

  @Test func oneWaysAreDrivenOnlyOneWay() throws {
    var map = MapFixture("a   b   c")
    map.way("abc", ["highway": "residential", "oneway": "yes"])
    let engine = try map.engine()
    let route = try engine.route(from: map.point("a"), to: map.point("c"))
    #expect(abs(route.distance - 200) < 1)
    // 25 km/h on a residential road.
    #expect(abs(route.duration - 200 / (25 / 3.6)) < 0.5)
    expectNoRoute(engine, [map.point("c"), map.point("a")])

    var reverse = MapFixture("a   b   c")
    reverse.way("abc", ["highway": "residential", "oneway": "-1"])
    let reversed = try reverse.engine()
    #expect(abs(try reversed.route(from: reverse.point("c"), to: reverse.point("a")).distance - 200) < 1)
    expectNoRoute(reversed, [reverse.point("a"), reverse.point("c")])
  }

  @Test func roundaboutsAndMotorwaysAreImpliedOneWays() throws {
    var map = MapFixture("a   b   c")
    map.way("ab", ["highway": "motorway"])
    map.way("bc", ["highway": "primary", "junction": "roundabout"])
    let engine = try map.engine()
    #expect(try engine.route(from: map.point("a"), to: map.point("c")).distance > 199)
    expectNoRoute(engine, [map.point("c"), map.point("a")])
  }

  @Test func aForbiddenTurnIsAvoidedByTurningBackAtTheDeadEnd() throws {
    var map = MapFixture(
      """
      a   b   c


          d
      """)
    map.way("ab")
    map.way("bc")
    map.way("bd")
    let free = try map.engine()
    #expect(abs(try free.route(from: map.point("a"), to: map.point("d")).distance - 175) < 1)

    map.restriction("no_right_turn", from: "ab", via: "b", to: "bd")
    let restricted = try map.engine()
    // a → b → c, turn back at the dead end c, c → b → d.
    let route = try restricted.route(from: map.point("a"), to: map.point("d"))
    #expect(abs(route.distance - (100 + 200 + 75)) < 1)
    // The restriction binds only arrivals from a.
    #expect(abs(try restricted.route(from: map.point("c"), to: map.point("d")).distance - 175) < 1)
  }

  @Test func anOnlyRestrictionForbidsEveryOtherExit() throws {
    var map = MapFixture(
      """
      a   b   c


          d
      """)
    map.way("ab")
    map.way("bc")
    map.way("bd")
    map.restriction("only_straight_on", from: "ab", via: "b", to: "bc")
    let engine = try map.engine()
    #expect(abs(try engine.route(from: map.point("a"), to: map.point("d")).distance - 375) < 1)
    #expect(abs(try engine.route(from: map.point("a"), to: map.point("c")).distance - 200) < 1)
  }

  @Test func turnsCostTimeAndUTurnsOnlyHappenAtDeadEnds() throws {
    var map = MapFixture(
      """
      a   b   c


          d
      """)
    map.way("abc")
    map.way("bd")
    let engine = try map.engine()
    let straight = try engine.route(from: map.point("a"), to: map.point("c"))
    let right = try engine.route(from: map.point("a"), to: map.point("d"))
    // Same length class of road; the right turn at a three-way junction costs seconds.
    let speed = 65 / 3.6  // primary
    #expect(abs(straight.duration - 200 / speed) < 0.5)
    #expect(right.duration > 175 / speed + 1)
    // From the middle of b–c towards a: a U-turn on the spot is not allowed, so the car drives
    // to the dead end c, turns back, and passes its start.
    var point = MapFixture("a   b 1 c")
    point.way("abc", ["highway": "primary", "oneway": "no"])
    let e = try point.engine()
    let back = try e.route(from: point.point("1"), to: point.point("a"))
    #expect(abs(back.distance - 150) < 1)
  }

  @Test func viaPointsGiveOneLegEach() throws {
    var map = MapFixture(
      """
      a   b   c


          d
      """)
    map.way("abc")
    map.way("bd")
    let engine = try map.engine()
    let route = try engine.route([map.point("a"), map.point("d"), map.point("c")])
    #expect(route.legs.count == 2)
    #expect(abs(route.legs[0].distance - 175) < 1)
    #expect(abs(route.legs[1].distance - 175) < 1)
    #expect(abs(route.distance - 350) < 1)
    #expect(abs(route.duration - route.legs.map(\.duration).reduce(0, +)) < 1e-9)
    #expect(route.geometry.first.map { abs($0.latitude - map.point("a").latitude) < 1e-5 } == true)
  }

  @Test func disconnectedRoadsHaveNoRoute() throws {
    var map = MapFixture(
      """
      a   b


      c   d
      """)
    map.way("ab")
    map.way("cd")
    expectNoRoute(try map.engine(), [map.point("a"), map.point("d")])
  }

  @Test func pointsSnapToTheNearestRoadWithItsName() throws {
    var map = MapFixture(
      """
      a       b
          1


      c       d
      """)
    map.way("ab", ["highway": "residential", "name": "Rue Grimaldi"])
    map.way("cd", ["highway": "residential", "name": "Boulevard Albert 1er"])
    let engine = try map.engine()
    let nearest = try engine.nearest(map.point("1"), count: 2)
    #expect(nearest.map(\.name) == ["Rue Grimaldi", "Boulevard Albert 1er"])
    #expect(abs(nearest[0].distance - 25) < 0.5)
    #expect(abs(nearest[0].location.longitude - map.point("1").longitude) < 1e-6)
    #expect(throws: RoutingError.self) { try engine.nearest(map.point("1"), radius: 10) }
  }

  /// A point as near to several roads as to one another snaps the same way every time (the
  /// index's candidates sit in a dictionary whose order changes from process to process).
  @Test func tiesSnapToTheFirstRoadBuilt() throws {
    var map = MapFixture(
      """
      a   b   c

          d
      """)
    map.way("ab", ["highway": "residential", "name": "West"])
    map.way("bc", ["highway": "residential", "name": "East"])
    map.way("bd", ["highway": "residential", "name": "South"])
    let engine = try map.engine()
    for _ in 0..<20 {
      #expect(try engine.nearest(map.point("b"), count: 3).map(\.name) == ["West", "East", "South"])
    }
  }

  @Test func barriersBlockAndGatesCostAMinute() throws {
    var blocked = MapFixture("a   b   c")
    blocked.way("abc")
    blocked.tag("b", ["barrier": "bollard"])
    expectNoRoute(try blocked.engine(), [blocked.point("a"), blocked.point("c")])

    var gated = MapFixture("a   b   c")
    gated.way("abc")
    gated.tag("b", ["barrier": "gate"])
    let open = try MapFixture.plain().engine().route(from: gated.point("a"), to: gated.point("c"))
    let route = try gated.engine().route(from: gated.point("a"), to: gated.point("c"))
    #expect(abs(route.duration - open.duration - 60) < 0.5)
  }

  @Test func privateRoadsAreForStartingAndEndingOnly() throws {
    var map = MapFixture(
      """
      a   b 1 c   d

      e           f
      """)
    map.way("ab", ["highway": "residential"])
    map.way("bc", ["highway": "residential", "access": "private"])
    map.way("cd", ["highway": "residential"])
    map.way("aefd", ["highway": "residential"])
    let engine = try map.engine()
    // The long way round, not through the private road…
    #expect(try engine.route(from: map.point("a"), to: map.point("d")).distance > 350)
    // …but a trip may start or end on it.
    #expect(abs(try engine.route(from: map.point("1"), to: map.point("d")).distance - 150) < 1)
    #expect(abs(try engine.route(from: map.point("a"), to: map.point("1")).distance - 150) < 1)
  }

  @Test func badCoordinatesAreInvalidAndFarOnesHaveNoSegment() throws {
    var map = MapFixture("a   b")
    map.way("ab")
    let engine = try map.engine()
    #expect(throws: RoutingError.self) {
      try engine.route(from: LatLng(latitude: 91, longitude: 0), to: map.point("a"))
    }
    do {
      _ = try engine.route(from: LatLng(latitude: .nan, longitude: 0), to: map.point("a"))
    } catch {
      #expect(error.code == .invalidQuery)
    }
    do {
      _ = try engine.route(from: LatLng(latitude: -33.86, longitude: 151.2), to: map.point("a"))
      Issue.record("a point in Sydney was routed on a map of Monaco")
    } catch {
      #expect(error.code == .noSegment)
    }
    #expect(throws: RoutingError(.invalidQuery, "a route needs at least two coordinates")) {
      try engine.route([map.point("a")])
    }
  }
}

extension MapFixture {
  /// The three-node road of the barrier tests without the barrier.
  static func plain() -> MapFixture {
    var map = MapFixture("a   b   c")
    map.way("abc")
    return map
  }
}
