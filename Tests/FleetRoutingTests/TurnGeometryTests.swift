import FleetCore
import Foundation
import Testing

@testable import FleetRouting

/// Turn angles read from road shapes as OSRM's intersection analysis reads them, so that turn
/// costs, and with them route choices, agree with OSRM's.
@Suite("Turn geometry")
struct TurnGeometryTests {
  static let origin = FixedCoordinate(latitude: 43.73, longitude: 7.42)

  /// A shape from metres east and north of `origin`.
  static func shape(_ metres: [(east: Double, north: Double)]) -> [FixedCoordinate] {
    metres.map {
      FixedCoordinate(
        latitude: origin.latitude + $0.north / 111_195,
        longitude: origin.longitude + $0.east / (111_195 * cos(origin.latitude * .pi / 180)))
    }
  }

  static func bearing(_ points: [FixedCoordinate], lowPriority: Bool = false) -> Double {
    Geo.bearing(
      points[0],
      PerceivedBearing.representativePoint(points, isRoundabout: false, isLowPriority: lowPriority, consideredLanes: 2))
  }

  @Test func aStraightRoadPointsToWhereItGoes() {
    let road = Self.shape([(0, 0), (0, 10), (0.3, 30), (0, 60)])
    #expect(abs(Self.bearing(road) - 0) < 1)
  }

  @Test func aLongFirstSegmentIsTheRoadsDirection() {
    // 30 m east, then a bend north: the bend is far from the junction and does not count.
    let road = Self.shape([(0, 0), (30, 0), (30, 40)])
    #expect(abs(Self.bearing(road) - 90) < 1)
  }

  @Test func aKinkAtTheJunctionIsLookedPast() {
    // The way meets the junction with a 3 m jog, then runs straight east for 50 m.
    let road = Self.shape([(0, 0), (2, 2.5), (52, 2.5)])
    let perceived = Self.bearing(road)
    #expect(abs(perceived - 90) < 5, "perceived \(perceived)")
  }

  @Test func serviceRoadsAreReadOverTheirFirstTenMetres() {
    let road = Self.shape([(0, 0), (0, 5), (20, 5), (20, 60)])
    // The point 10 m along: 5 m north, then 5 m east.
    #expect(abs(Self.bearing(road, lowPriority: true) - 45) < 2)
  }

  @Test func junctionsOfTwoRoadsUseTheFirstPointAMetreAway() {
    let road = Self.shape([(0, 0), (0.5, 0), (0, 5), (30, 5)])
    #expect(PerceivedBearing.closeToTurn(road) == road[2])
  }

  @Test func angleConventionsFollowOSRM() {
    #expect(Geo.angleBetween(0, 0) == 180)
    #expect(Geo.angleBetween(0, 90) == 90)
    #expect(Geo.angleBetween(0, 270) == 270)
    #expect(Geo.angleBetween(90, 270) == 0)
  }

  /// OSRM's `computeAngle` on the Mercator plane with its table arctangent: the table's ends and
  /// two of its entries as osrm-backend ships them (util/trigonometry_table.hpp), a right and a
  /// left turn, and Square Lamark's loop in Monaco (node 25199246 to 25199254 to 826809708), which
  /// OSRM reads as 210.04°, just outside a segregated crossing's straight band.
  @Test func planarTurnAnglesFollowOSRMsTable() {
    #expect(Geo.arctangentTable[0] == 0 && Geo.arctangentTable[5] == 0x65)
    #expect(Geo.arctangentTable[2048] == 0x9727 && Geo.arctangentTable[4095] == 0xFFFF)
    let point = { (lat: Double, lon: Double) in FixedCoordinate(latitude: lat, longitude: lon) }
    let center = point(0, 0)
    #expect(abs(Geo.turnAngle(point(0, -0.001), center, point(-0.001, 0)) - 90) < 0.02)
    #expect(abs(Geo.turnAngle(point(0, -0.001), center, point(0.001, 0)) - 270) < 0.02)
    let loop = Geo.turnAngle(
      point(43.737145, 7.41756), point(43.737172, 7.417672), point(43.737212, 7.417721))
    #expect(loop > 210 && loop < 210.1)
  }

  /// Turn costs in Monaco against what OSRM's car profile computed for the same turns on the
  /// same extract (osrm-extract 26.10, 2026-11-22): two junctions of a curved bridge ramp, and
  /// turning from one half of a dual carriageway into the other where they meet (a U-turn once
  /// both halves are read as one road).
  @Test(arguments: [
    (
      from: Int64(4_229_328), via: FixedCoordinate(latitude: 43.738084, longitude: 7.419094), to: Int64(166_009_795),
      osrm: 7.289
    ),
    (
      from: Int64(166_009_795), via: FixedCoordinate(latitude: 43.738172, longitude: 7.419343), to: Int64(4_229_329),
      osrm: 6.629
    ),
    (
      from: Int64(92_627_411), via: FixedCoordinate(latitude: 43.728249, longitude: 7.408209), to: Int64(92_627_410),
      osrm: 27.455
    ),
  ])
  func turnCostsMatchOSRM(from: Int64, via: FixedCoordinate, to: Int64, osrm: Double) async throws {
    let engine = try await MonacoRoutingTests.engine()
    let network = engine.network
    let junction = try #require(network.junctions.indices.first { network.coordinate(ofJunction: Int32($0)) == via })
    var cost: Float?
    for (i, edge) in network.edges.enumerated()
    where edge.wayID == from && (edge.from == junction || edge.to == junction) {
      let arriving = TurnGraph.directed(i, reversed: edge.from == junction)
      for arc in engine.turns.arcs(from: arriving) {
        let target = network.edges[TurnGraph.edge(of: engine.turns.arcTarget[arc])]
        if target.wayID == to { cost = engine.turns.arcTurnCost[arc] }
      }
    }
    let found = try #require(cost)
    #expect(abs(Double(found) - osrm) < 0.1, "FleetKit \(found) s, OSRM \(osrm) s")
  }

  @Test func theTurnTableListsEveryTurnWithItsCost() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let table = engine.turnTable()
    #expect(table.count == engine.turns.arcTarget.count)
    let ramp = FixedCoordinate(latitude: 43.738084, longitude: 7.419094)
    let into = FixedCoordinate(latitude: 43.738172, longitude: 7.419343)
    #expect(table.contains { $0.via == ramp && $0.to == into && abs($0.seconds - 7.289) < 0.1 })
  }

  /// OSRM's graph compression never makes a second road between two nodes; nodes are compressed
  /// in the order of their ids.
  @Test func compressionKeepsANodeWhereItWouldJoinTwoNodesTwice() {
    typealias Road = OSMExtractor.RoadBetweenJunctions
    let stubs = [Road(from: 1, to: 90, between: []), Road(from: 2, to: 91, between: [])]
    // A loop back to junction 1 keeps its two highest nodes: a triangle.
    let loop = Road(from: 1, to: 1, between: [14, 12, 17, 11, 13])
    #expect(OSMExtractor.nodesKeptByCompression(stubs + [loop]) == [14, 17])
    // Of three roads between junctions 1 and 2, the one whose highest node comes first is
    // compressed into the road between them; the others keep their highest.
    let parallel = [
      Road(from: 1, to: 2, between: [30, 35]), Road(from: 2, to: 1, between: [33, 31]),
      Road(from: 1, to: 2, between: [36]),
    ]
    #expect(OSMExtractor.nodesKeptByCompression(stubs + parallel) == [35, 36])
    // With a road joining them directly, every other keeps its highest.
    let direct = [Road(from: 1, to: 2, between: []), Road(from: 2, to: 1, between: [33, 31])]
    #expect(OSMExtractor.nodesKeptByCompression(stubs + direct + [Road(from: 1, to: 93, between: [])]) == [33])
    // Where only two road ends meet (a closed way on its own), nothing is decided here.
    #expect(OSMExtractor.nodesKeptByCompression([loop]) == [])
  }
}
