import FleetCore
import FleetGeometry
import FleetTestSupport
import Testing

@testable import FleetRouting

/// Turn-by-turn steps on hand-drawn maps (25 m per character), by OSRM's guidance rules.
@Suite("Guidance on drawn maps")
struct GuidanceTests {
  func steps(_ engine: RoutingEngine, _ from: LatLng, _ to: LatLng) throws -> [RouteStep] {
    let route = try engine.route(from: from, to: to)
    return engine.steps(of: route.legs[0], from: from, to: to)
  }

  func kinds(_ steps: [RouteStep]) -> [String] {
    steps.map { step in
      [step.maneuver.kind.rawValue, step.maneuver.modifier?.rawValue, step.name].compactMap { $0 }.joined(
        separator: " ")
    }
  }

  @Test func aRoadThatEndsAtATIsTheEndOfTheRoad() throws {
    var map = MapFixture(
      """
              d

      a   b   c

          f   e
      """)
    map.way("abc", ["highway": "primary", "name": "Main"])
    map.way("dce", ["highway": "primary", "name": "Cross"])
    map.way("bf", ["highway": "residential", "name": "Side"])
    let steps = try steps(try map.engine(), map.point("a"), map.point("e"))
    #expect(kinds(steps) == ["depart Main", "end of road right Cross", "arrive Cross"])
    // The side road at b is passed without a word, but listed as an intersection.
    #expect(steps[0].intersections.count == 2)
    let atB = steps[0].intersections[1]
    #expect(atB.bearings == atB.bearings.sorted())
    #expect(atB.bearings.count == 3)
    #expect(atB.arrivingRoad.map { atB.bearings[$0] } == 270)
    #expect(atB.leavingRoad.map { atB.bearings[$0] } == 90)
    // Steps cover the leg: their metres add up, and each starts where the one before ended.
    #expect(abs(steps.reduce(0) { $0 + $1.distance } - 250) < 1)
    #expect(steps[1].geometry.first == steps[0].geometry.last)
    #expect(steps[1].maneuver.bearingBefore == 90 && steps[1].maneuver.bearingAfter == 180)
  }

  @Test func aNewNameIsSaidOnlyWhenItLastsAndFirstRoadsAreNotRenamedBack() throws {
    var map = MapFixture("a       b       c   d       e")
    map.way("ab", ["highway": "primary", "name": "First"])
    map.way("bc", ["highway": "primary", "name": "Second"])
    // Shorter than OSRM's 105 m: not said.
    map.way("cd", ["highway": "primary", "name": "Brief"])
    map.way("de", ["highway": "primary", "name": "Second"])
    let steps = try steps(try map.engine(), map.point("a"), map.point("e"))
    #expect(kinds(steps) == ["depart First", "new name straight Second", "arrive Second"])
  }

  @Test func twoWaysOnNearlyStraightAheadAreAFork() throws {
    var map = MapFixture(
      """
                      c
      a       b
                      d
      """)
    map.way("ab", ["highway": "primary", "name": "Trunk"])
    map.way("bc", ["highway": "primary", "name": "Upper"])
    map.way("bd", ["highway": "primary", "name": "Lower"])
    let engine = try map.engine()
    #expect(
      kinds(try steps(engine, map.point("a"), map.point("c"))) == [
        "depart Trunk", "fork slight left Upper", "arrive Upper",
      ])
    #expect(
      kinds(try steps(engine, map.point("a"), map.point("d"))) == [
        "depart Trunk", "fork slight right Lower", "arrive Lower",
      ])
  }

  /// A ring one way round, counter-clockwise (right-hand traffic), with a road off each side.
  static let ring = """
                d

                s

    a       p       r       c

                q

                b
    """

  func ringMap(gridMeters: Double) -> MapFixture {
    var map = MapFixture(Self.ring, gridMeters: gridMeters)
    map.way("pqrsp", ["highway": "primary", "junction": "roundabout"])
    for (way, name) in [("ap", "West"), ("qb", "South"), ("rc", "East"), ("sd", "North")] {
      map.way(way, ["highway": "primary", "name": name])
    }
    return map
  }

  @Test func roundaboutsCountTheirExits() throws {
    let map = ringMap(gridMeters: 25)
    let steps = try steps(try map.engine(), map.point("a"), map.point("c"))
    #expect(steps.map(\.maneuver.kind) == [.depart, .roundabout, .exitRoundabout, .arrive])
    // The exit to South is passed; East is the second.
    #expect(steps[1].maneuver.exit == 2)
    #expect(steps[1].name == "East")
    #expect(steps[2].name == "East")
  }

  @Test func aSmallRoundaboutIsSaidAsATurn() throws {
    let map = ringMap(gridMeters: 3)
    let steps = try steps(try map.engine(), map.point("a"), map.point("d"))
    #expect(steps.map(\.maneuver.kind) == [.depart, .roundaboutTurn, .arrive])
    #expect(steps[1].maneuver.modifier == .left)
    #expect(steps[1].name == "North")
  }

  @Test func aNamedLargeRingIsARotary() throws {
    var map = ringMap(gridMeters: 25)
    map = MapFixture(Self.ring, gridMeters: 25)
    map.way("pqrsp", ["highway": "primary", "junction": "roundabout", "name": "Place Ronde"])
    for (way, name) in [("ap", "West"), ("qb", "South"), ("rc", "East"), ("sd", "North")] {
      map.way(way, ["highway": "primary", "name": name])
    }
    let steps = try steps(try map.engine(), map.point("a"), map.point("b"))
    #expect(steps.map(\.maneuver.kind) == [.depart, .rotary, .exitRotary, .arrive])
    #expect(steps[1].rotaryName == "Place Ronde")
    #expect(steps[1].maneuver.exit == 1)
  }

  @Test func theSideOfTheRoadIsSaidAtDepartureAndArrival() throws {
    var map = MapFixture("a       b       c")
    map.way("abc", ["highway": "primary", "name": "Main"])
    let engine = try map.engine()
    // 20 m south of the road, driving east: the start is on the right; the end north, on the left.
    let start = LatLng(latitude: map.point("a").latitude - 20 / 111_320, longitude: map.point("b").longitude - 0.001)
    let end = LatLng(latitude: map.point("a").latitude + 20 / 111_320, longitude: map.point("c").longitude - 0.0005)
    let steps = try steps(engine, start, end)
    #expect(steps.first?.maneuver.modifier == .right)
    #expect(steps.last?.maneuver.modifier == .left)
    #expect(steps.last?.distance == 0)
    #expect(steps.last?.intersections.first?.arrivingRoad == 0)
  }

  @Test func osrmsNameRules() {
    let label = { (names: (String, String)) in RoadLabel(name: names.0, ref: names.1) }
    let announce = { (from: (String, String), to: (String, String)) in
      RoadNames.requiresNameAnnounced(from: label(from), to: label(to))
    }
    #expect(announce(("Main", ""), ("Other", "")))
    #expect(!announce(("Main", ""), ("Main", "")))
    // Losing a name, or a ref kept, is the same road to a driver; gaining one from nothing is not.
    #expect(!announce(("Main", ""), ("", "")))
    #expect(!announce(("Main", "A1"), ("Main", "")))
    #expect(announce(("", ""), ("Main", "")))
    #expect(announce(("", "A1"), ("Main", "")))
    // Compass words: one road at junctions (the profile's suffixes), two in post-processing.
    #expect(!announce(("West", ""), ("East", "")))
    #expect(RoadNames.requiresNameAnnounced(from: label(("West", "")), to: label(("East", "")), suffixes: []))
  }

  @Test func aNewExitNumberOrPronunciationIsSaidALostExitNumberIsNot() {
    let ramp = RoadLabel(exits: "12")
    // Unnamed ramps: a new or another number is said; losing it is not (ramps often carry it on
    // their first piece alone), unless the name changes with it.
    #expect(RoadNames.requiresNameAnnounced(from: RoadLabel(), to: ramp))
    #expect(RoadNames.requiresNameAnnounced(from: ramp, to: RoadLabel(exits: "13")))
    #expect(!RoadNames.requiresNameAnnounced(from: ramp, to: RoadLabel()))
    #expect(!RoadNames.requiresNameAnnounced(from: ramp, to: ramp))
    #expect(
      RoadNames.requiresNameAnnounced(
        from: RoadLabel(name: "Quai", exits: "12"), to: RoadLabel(name: "Boulevard")))
    // The same name spoken otherwise is another road; destinations are not compared.
    #expect(
      RoadNames.requiresNameAnnounced(
        from: RoadLabel(name: "Leicester Road"), to: RoadLabel(name: "Leicester Road", pronunciation: "Lester Road")))
    #expect(
      !RoadNames.requiresNameAnnounced(from: RoadLabel(destinations: "Nice"), to: RoadLabel(destinations: "Genova")))
    // Signposted roads without a name are named in OSRM's sense (a name id not empty): two links to
    // the same places are one road, an unsigned one is none.
    #expect(RoadNames.areIdentical(RoadLabel(destinations: "Nice"), RoadLabel(destinations: "Nice")))
    #expect(!RoadNames.areIdentical(RoadLabel(), RoadLabel()))
  }
}
