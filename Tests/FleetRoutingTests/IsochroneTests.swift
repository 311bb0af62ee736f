import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting

/// Tracing the areas where a grid's values are at most a limit (`ValueGrid.area`).
@Suite("Value grid contours")
struct ValueGridTests {
  /// A grid of `rows` drawn south at the bottom: `#` is 1, `.` is 9, a space has no value.
  func grid(_ rows: [String]) -> ValueGrid {
    var grid = ValueGrid(
      origin: LatLng(latitude: 43.7, longitude: 7.4), width: rows[0].count, height: rows.count, cellMeters: 10)
    for (r, row) in rows.reversed().enumerated() {
      for (x, c) in row.enumerated() { grid[x, r] = c == "#" ? 1 : c == "." ? 9 : .infinity }
    }
    return grid
  }

  func centre(_ grid: ValueGrid, _ x: Int, _ y: Int) -> LatLng { grid.point(x: Double(x), y: Double(y)) }

  /// Positive when the ring runs counter-clockwise.
  func signedArea(_ ring: [(x: Double, y: Double)]) -> Double {
    zip(ring, ring.dropFirst() + ring.prefix(1)).reduce(0) { $0 + ($1.0.x * $1.1.y - $1.1.x * $1.0.y) } / 2
  }

  @Test func aBlockIsOneCounterClockwiseOutlineThroughTheCrossings() {
    let g = grid([
      ".....",
      ".###.",
      ".###.",
      ".....",
    ])
    let area = g.area(atMost: 5)
    #expect(area.polygons.count == 1 && area.polygons[0].count == 1)
    let ring = area.polygons[0][0].map { g.gridPosition(of: $0) }
    // Crossings halfway between 1 and 9 at the limit 5: the block's cells ± half a cell.
    #expect(ring.allSatisfy { ($0.x >= 0.49 && $0.x <= 3.51) && ($0.y >= 0.49 && $0.y <= 2.51) })
    #expect(signedArea(ring) > 0)
    #expect(area.contains(centre(g, 2, 1)) && area.contains(centre(g, 1, 2)))
    #expect(!area.contains(centre(g, 0, 0)) && !area.contains(centre(g, 4, 1)))
    // The crossing moves with the values: nearer the inside when the limit is nearer its value.
    let tight = g.area(atMost: 2).polygons[0][0].map { g.gridPosition(of: $0) }
    #expect(tight.allSatisfy { $0.x >= 0.87 && $0.x <= 3.13 })
  }

  @Test func aRingAroundUnreachedCellsHasAClockwiseHole() {
    let g = grid([
      "#####",
      "#. .#",
      "#...#",
      "#####",
    ])
    let area = g.area(atMost: 5)
    #expect(area.polygons.count == 1)
    #expect(area.polygons[0].count == 2)
    let hole = area.polygons[0][1].map { g.gridPosition(of: $0) }
    #expect(signedArea(hole) < 0)
    #expect(!area.contains(centre(g, 2, 1)) && area.contains(centre(g, 0, 0)) && area.contains(centre(g, 4, 3)))
  }

  @Test func separatePartsArePolygonsOfTheirOwnAndDenoiseKeepsTheLargest() {
    let g = grid([
      "###....",
      "###..#.",
      "###....",
    ])
    let area = g.area(atMost: 5)
    #expect(area.polygons.count == 2)
    #expect(area.contains(centre(g, 5, 1)) && area.contains(centre(g, 0, 0)))
    let largest = g.area(atMost: 5, minimumShare: 1)
    #expect(largest.polygons.count == 1 && largest.contains(centre(g, 1, 1)) && !largest.contains(centre(g, 5, 1)))
  }

  /// A saddle (two reached corners facing each other) joins them only when its centre is in.
  @Test func saddlesJoinThroughTheCentreOnlyWhenItIsIn() {
    let apart = grid([
      "#.",
      ".#",
    ])
    // Centre (1 + 1 + 9 + 9) / 4 = 5: out at the limit 4.
    #expect(apart.area(atMost: 4).polygons.count == 2)
    var joined = apart
    joined[0, 0] = 6
    joined[1, 1] = 6
    // Centre (1 + 1 + 6 + 6) / 4 = 3.5: in.
    #expect(joined.area(atMost: 4).polygons.count == 1)
  }

  @Test func cellsOffTheRoadsTakeTheNearestRoadsValueWithinTheRadius() {
    var g = grid([
      "         ",
      "#       .",
      "         ",
    ])
    let roads = g.values.map(\.isFinite)
    g.spread(within: 35) { roads[$0] }
    // Column 3 is 30 m from the left road and 50 m from the right one.
    #expect(g[3, 1] == 1 && g[3, 2] == 1 && g[5, 1] == 9)
    // 40 m from either: beyond the radius.
    #expect(g[4, 1] == .infinity)
  }

  @Test func simplifyingKeepsTheRingClosedAndNear() {
    let g = grid([
      "..........",
      ".########.",
      ".########.",
      ".########.",
      "..........",
    ])
    let fine = g.area(atMost: 5)
    let coarse = g.area(atMost: 5, toleranceMeters: 6)
    #expect(coarse.polygons[0][0].count < fine.polygons[0][0].count)
    #expect(coarse.polygons[0][0].count >= 3)
    #expect(coarse.contains(centre(g, 4, 2)) && !coarse.contains(centre(g, 0, 0)))
  }
}

/// Isochrones on drawn maps and on Monaco: the areas agree with the matrix's drives.
@Suite("Isochrones")
struct IsochroneTests {
  /// 1 km of residential road (25 km/h, about 6.9 m/s) from `a` east to `b`.
  func straightRoad(_ tags: [String: String] = ["highway": "residential"]) throws -> (MapFixture, RoutingEngine) {
    var map = MapFixture(
      """
      a       c       d       e       f       b



                      5
      """, gridMeters: 25)
    map.way("acdefb", tags)
    return (map, try map.engine())
  }

  @Test func aRoadIsReachedAsFarAsTheLimitDrives() throws {
    let (map, engine) = try straightRoad()
    // 60 s at 25 km/h: 417 m east of a.
    let iso = try engine.isochrone(from: map.point("a"), IsochroneOptions(limits: [60]))
    #expect(iso.contours.count == 1 && iso.resolution >= 10)
    let area = iso.contours[0].area
    #expect(area.contains(map.point("c")) && area.contains(map.point("d")))
    #expect(!area.contains(map.point("e")) && !area.contains(map.point("b")))
    // A point off the road counts as its nearest road point: 100 m south of d (at 400 m) is in.
    #expect(area.contains(map.point("5")))
    // Metres instead of seconds: 700 m reaches e (at 600 m), not f (at 800 m).
    let metres = try engine.isochrone(from: map.point("a"), IsochroneOptions(limits: [300, 700], metric: .distance))
    #expect(metres.contours.map(\.limit) == [300, 700])
    #expect(metres.contours[0].area.contains(map.point("c")) && !metres.contours[0].area.contains(map.point("d")))
    #expect(metres.contours[1].area.contains(map.point("e")) && !metres.contours[1].area.contains(map.point("f")))
  }

  @Test func aOneWayIsReachedOnlyAhead() throws {
    let (map, engine) = try straightRoad(["highway": "residential", "oneway": "yes"])
    let iso = try engine.isochrone(from: map.point("d"), IsochroneOptions(limits: [45]))
    let area = iso.contours[0].area
    #expect(area.contains(map.point("e")))
    #expect(!area.contains(map.point("c")))
  }

  @Test func farFromEveryRoadIsNotReached() throws {
    var map = MapFixture(
      """
      a   b



      1
      """, gridMeters: 200)
    map.way("ab", ["highway": "residential"])
    let engine = try map.engine()
    // 1 is 800 m south of a: beyond the 500 m a point may be from its road.
    let area = try engine.isochrone(from: map.point("a"), IsochroneOptions(limits: [300])).contours[0].area
    #expect(area.contains(map.point("a")) && !area.contains(map.point("1")))
  }

  /// Rule "isochrone-start-in-the-main-part": a start whose nearest road is a piece cut off
  /// from the rest (a car park, a small extract's border) is taken, as `/table` takes its points,
  /// to the nearest road of the network's main part (found on the Paris extract's border pieces).
  @Test func aStartNextToACutOffPieceIsReachedFromTheMainPart() throws {
    var map = MapFixture(
      """
      a       b       c

              e

      1 f  g
      """, gridMeters: 25)
    map.way("abc", ["highway": "residential"])
    map.way("be", ["highway": "residential"])
    map.way("fg", ["highway": "residential"])
    let engine = try map.engine()
    let iso = try engine.isochrone(from: map.point("1"), IsochroneOptions(limits: [60]))
    #expect(iso.origin.location.distance(to: map.point("a")) < 5)
    let area = iso.contours[0].area
    #expect(area.contains(map.point("b")) && area.contains(map.point("e")))
  }

  @Test func badContoursAreRefused() throws {
    let (map, engine) = try straightRoad()
    for limits: [Double] in [[], [60, 30], [0], [60, 120, 180, 240, 300]] {
      #expect(throws: RoutingError.self) {
        try engine.isochrone(from: map.point("a"), IsochroneOptions(limits: limits))
      }
    }
    #expect(throws: RoutingError.self) {
      try engine.isochrone(from: map.point("a"), IsochroneOptions(limits: [60], minimumShare: 2))
    }
  }

  /// Random points around three starts in Monaco: inside a contour, the matrix's drive there is
  /// within the limit (5 % over allowed: the grid's resolution); outside, it is not under 95 %
  /// of it. Monaco's roads cross over each other in tunnels and bridges, which one map cannot
  /// tell apart, so a few points may disagree: at least 97 % must agree.
  @Test(arguments: [ReachMetric.duration, .distance])
  func monacoContoursAgreeWithTheMatrix(metric: ReachMetric) async throws {
    let engine = try await MonacoRoutingTests.engine()
    var random = FanTests.Seeded(state: 7)
    let starts = [
      LatLng(latitude: 43.7384, longitude: 7.4246), LatLng(latitude: 43.7308, longitude: 7.4198),
      LatLng(latitude: 43.7460, longitude: 7.4300),
    ]
    let limits: [Double] = metric == .duration ? [120, 240] : [1000, 2500]
    var (checked, agreed, inside) = (0, 0, 0)
    for start in starts {
      let iso = try engine.isochrone(from: start, IsochroneOptions(limits: limits, metric: metric))
      let points = (0..<300).map { _ in
        LatLng(
          latitude: start.latitude + (random.next() - 0.5) * 0.03,
          longitude: start.longitude + (random.next() - 0.5) * 0.04)
      }
      let matrix = try engine.matrix(sources: [start], destinations: points)
      for contour in iso.contours {
        for (i, point) in points.enumerated() where matrix.destinations[i].distance <= RoutingEngine.isochroneSnapMeters
        {
          let measured = metric == .duration ? matrix.durations[0][i] : matrix.distances[0][i]
          let isInside = contour.area.contains(point)
          checked += 1
          inside += isInside ? 1 : 0
          if isInside
            ? (measured ?? .infinity) <= contour.limit * 1.05 : (measured ?? .infinity) >= contour.limit * 0.95
          {
            agreed += 1
          }
        }
      }
      // Contours nest: the nearer is inside the farther.
      for point in points where iso.contours[0].area.contains(point) {
        #expect(iso.contours[1].area.contains(point) || iso.contours[1].area.distance(to: point) < iso.resolution)
      }
    }
    #expect(checked > 1000 && inside > 300, "\(inside) of \(checked) inside")
    #expect(Double(agreed) >= 0.97 * Double(checked), "\(agreed) of \(checked) agree")
  }
}
