import FleetCore
import FleetGeometry
import FleetTestSupport
import Testing

@testable import FleetRouting

/// What a route query may ask for beyond its waypoints (OSRM's bearings, approaches, exclude,
/// continue_straight, alternatives, annotations), on hand-drawn maps (25 m per character).
@Suite("Route options on drawn maps")
struct RouteOptionsTests {
  /// A two-way street from a dead end at a to a dead end at c.
  func street() -> MapFixture {
    var map = MapFixture("a       b       c")
    map.way("abc", ["highway": "residential", "name": "Street"])
    return map
  }

  @Test func aBearingSetsTheWayAWaypointIsPassed() throws {
    let map = street()
    let engine = try map.engine()
    let points = [map.point("b"), map.point("c")]
    let east = try engine.routes(
      points, options: RouteOptions(bearings: [WaypointBearing(degrees: 90, range: 30), nil]))
    #expect(abs(east[0].distance - 200) < 3)
    // Heading west first: to the dead end at a and back.
    let west = try engine.routes(
      points, options: RouteOptions(bearings: [WaypointBearing(degrees: 270, range: 30), nil]))
    #expect(abs(west[0].distance - 600) < 3)
    // No road heads north here.
    #expect(throws: RoutingError.self) {
      try engine.routes(points, options: RouteOptions(bearings: [WaypointBearing(degrees: 0, range: 20), nil]))
    }
  }

  /// A one-way street east through j, and a one-way loop off it at j that rejoins it at b;
  /// `loopFirst` draws the loop first, so that it is the first road indexed at j.
  static func junction(loopFirst: Bool) -> MapFixture {
    var map = MapFixture(
      """
            d

      a   j   b   e
      """)
    func loop() {
      map.way("jd", ["highway": "residential", "oneway": "yes", "name": "Loop"])
      map.way("db", ["highway": "residential", "oneway": "yes", "name": "Loop"])
    }
    if loopFirst { loop() }
    map.way("ajbe", ["highway": "residential", "oneway": "yes", "name": "Street"])
    if !loopFirst { loop() }
    return map
  }

  /// A point on a junction is equally near every road that meets there, and OSRM's snapping
  /// keeps them all: a route leaves on whichever is fastest, a table row too, not on the road
  /// indexed first (here the loop, 41 m longer).
  @Test(arguments: [true, false])
  func onAJunctionARouteLeavesOnWhicheverRoadIsFastest(loopFirst: Bool) throws {
    let map = Self.junction(loopFirst: loopFirst)
    let engine = try map.engine()
    let points = [map.point("j"), map.point("e")]
    if loopFirst { #expect(try engine.nearest(points[0])[0].name == "Loop") }
    let route = try engine.route(points)
    #expect(abs(route.distance - 200) < 3)
    // Named after every road there, as OSRM names such a waypoint.
    #expect(route.waypoints[0].name.split(separator: " / ").sorted() == ["Loop", "Street", "Street"])
    let table = try engine.matrix(sources: [points[0]], destinations: [points[1]])
    #expect(abs((table.distances[0][0] ?? 0) - 200) < 3)
    // And arrives on whichever is fastest: from a, along the street to j.
    #expect(abs(try engine.route([map.point("a"), points[0]]).distance - 100) < 3)
  }

  /// With a bearing, the roads at a junction are those with a direction within its range, as
  /// OSRM filters each candidate: a car heading north-east is on the loop.
  @Test func onAJunctionABearingChoosesTheRoadHeadedInto() throws {
    let map = Self.junction(loopFirst: false)
    let engine = try map.engine()
    let points = [map.point("j"), map.point("e")]
    let east = try engine.routes(
      points, options: RouteOptions(bearings: [WaypointBearing(degrees: 90, range: 20), nil]))
    #expect(abs(east[0].distance - 200) < 3)
    // Heading north-east: the loop's road, 141 m to b rather than 100.
    let northEast = try engine.routes(
      points, options: RouteOptions(bearings: [WaypointBearing(degrees: 45, range: 20), nil]))
    #expect(abs(northEast[0].distance - 241) < 3)
    // A range that every road there meets leaves the choice to the route.
    let wide = try engine.routes(
      points, options: RouteOptions(bearings: [WaypointBearing(degrees: 45, range: 60), nil]))
    #expect(abs(wide[0].distance - 200) < 3)
  }

  /// A car's heading chooses among the roads near it; a heading no near road runs (a device's
  /// wrong reading) starts the route on the nearest road, not on a distant one that runs so.
  @Test func aHeadingChoosesAmongNearRoadsOnly() throws {
    var map = MapFixture(
      """
      a       b       c



                      d
                      e
      """)
    map.way("abc", ["highway": "residential", "oneway": "yes"])
    map.way("cd", ["highway": "residential"])
    map.way("de", ["highway": "residential"])
    let engine = try map.engine()
    let points = [map.point("a"), map.point("e")]
    // East, the way the street runs: along it and down to e.
    #expect(abs(try engine.route(points, heading: 90).distance - 525) < 3)
    // North: no road near a runs north; the road c-d 400 m away does, but the car is on the street.
    #expect(abs(try engine.route(points, heading: 0).distance - 525) < 3)
  }

  @Test func aKerbSideApproachStartsWithThePointOnTheDrivingSide() throws {
    let map = street()
    let engine = try map.engine()
    // 10 m north of b: on the right of a car heading west (right-hand traffic).
    let north = LatLng(latitude: map.point("b").latitude + 10 / 111_195, longitude: map.point("b").longitude)
    let points = [north, map.point("c")]
    #expect(abs(try engine.routes(points, options: RouteOptions()).first!.distance - 200) < 3)
    let kerb = try engine.routes(points, options: RouteOptions(approaches: [.curb, .unrestricted]))
    #expect(abs(kerb[0].distance - 600) < 3)
  }

  @Test func continuingStraightAtAViaMeansNoTurningBackThere() throws {
    let map = street()
    let engine = try map.engine()
    let points = [map.point("a"), map.point("b"), map.point("a")]
    let free = try engine.routes(points, options: RouteOptions(continueStraight: false))
    #expect(abs(free[0].distance - 400) < 3)
    // On past b to the dead end at c, and back.
    let straight = try engine.routes(points, options: RouteOptions(continueStraight: true))
    #expect(abs(straight[0].distance - 800) < 3)
    #expect(straight[0].legs.count == 2)
  }

  @Test func anExcludedClassIsDrivenAround() throws {
    var map = MapFixture(
      """
      a       b       c

      d               e
      """)
    map.way("abc", ["highway": "motorway", "oneway": "no"])
    map.way("adec", ["highway": "primary"])
    let engine = try map.engine()
    let points = [map.point("a"), map.point("c")]
    #expect(abs(try engine.routes(points, options: RouteOptions())[0].distance - 400) < 3)
    let around = try engine.routes(points, options: RouteOptions(excluding: .motorway))
    #expect(abs(around[0].distance - 500) < 3)
    #expect(throws: RoutingError.self) {
      try engine.routes(points, options: RouteOptions(excluding: [.motorway, .toll]))
    }
  }

  /// Two ways round from x to y, each of three roads.
  static let twoWaysRound = """
                        b       c
    x           a                       d           y
                        e       f
    """

  @Test func alternativesAreOtherReasonableRoutes() throws {
    var map = MapFixture(Self.twoWaysRound)
    for way in ["xa", "dy", "ab", "bc", "cd", "ae", "ef", "fd"] { map.way(way) }
    let engine = try map.engine()
    let points = [map.point("x"), map.point("y")]
    let routes = try engine.routes(points, options: RouteOptions(alternatives: 1))
    try #require(routes.count == 2)
    let middles = routes.map { route in
      Set(route.legs[0].spans.map { engine.network.edges[Int($0.edge)].wayID }).subtracting([
        map.wayID("xa"), map.wayID("dy"),
      ])
    }
    #expect(middles[0].isDisjoint(with: middles[1]))
    #expect(middles.contains([map.wayID("ab"), map.wayID("bc"), map.wayID("cd")]))
    #expect(middles.contains([map.wayID("ae"), map.wayID("ef"), map.wayID("fd")]))
    #expect(routes[1].duration >= routes[0].duration)
    // A single route when none is asked for, and no alternative much slower than the fastest.
    #expect(try engine.routes(points, options: RouteOptions()).count == 1)
    var detour = MapFixture(Self.twoWaysRound)
    for way in ["xa", "dy", "ab", "bc", "cd"] { detour.way(way) }
    for way in ["ae", "ef", "fd"] { detour.way(way, ["highway": "residential"]) }
    let slow = try detour.engine()
    #expect(try slow.routes([detour.point("x"), detour.point("y")], options: RouteOptions(alternatives: 2)).count == 1)
  }

  @Test func legsKnowTheirOSMNodes() throws {
    let map = street()
    let route = try map.engine().route(from: map.point("a"), to: map.point("c"))
    #expect(route.legs[0].nodes == [map.nodeID("a"), map.nodeID("b"), map.nodeID("c")])
    #expect(route.legs[0].nodes.count == route.legs[0].geometry.count)
  }
}

/// An end behind its start on the same one-way road is reached round the block, in routes and
/// in matrices alike, whatever the hierarchy's order of the roads on the way.
@Suite("Ends behind their starts")
struct EndBehindStartTests {
  @Test func roundTheBlockInRoutesAndMatrices() throws {
    var map = MapFixture(
      """
      a 1 2 3 b

      d 4 5 6 c
      """)
    map.way("abcda", ["highway": "residential", "oneway": "yes"])
    let engine = try map.engine()
    let points = "123456".map { map.point($0) }
    let matrix = try engine.matrix(sources: points, destinations: points)
    for (i, from) in points.enumerated() {
      for (j, to) in points.enumerated() where i != j {
        let positions = try engine.positions([from, to])
        let exact = try #require(engine.searchExactly(from: positions[0], to: positions[1]))
        let route = try engine.route([from, to])
        #expect(abs(route.distance - exact.distance) < 0.5, "route \(i) → \(j)")
        #expect(matrix.distances[i][j].map { abs($0 - exact.distance) < 0.5 } == true, "matrix \(i) → \(j)")
      }
    }
  }
}
