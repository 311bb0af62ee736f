import FleetCore
import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Testing

@testable import FleetMap

@Suite("Map tiles from the road graph")
struct TileRendererTests {
  /// One renderer for the suite, built on a thread of its own. Tiles are drawn on one too, as
  /// fleetd draws them: drawing is synchronous CPU work, and on the few threads that every test
  /// in the process shares it would hold the others' tasks until it ends.
  static let sharedRenderer = Task {
    let engine = try await sharedRoutingEngine(graph: try await monacoGraph())
    return try await onDedicatedThread(named: "tile-renderer") {
      TileRenderer(network: engine.network, areas: try MapAreas(reading: PBFReader(path: monacoOSM)))
    }
  }

  static func renderer() async throws -> TileRenderer { try await sharedRenderer.value }

  /// Tile z/x/y drawn on a thread of its own.
  static func svg(z: Int, x: Int, y: Int) async throws -> String? {
    let renderer = try await renderer()
    return await onDedicatedThread(named: "tile") { renderer.svg(z: z, x: x, y: y) }
  }

  /// Tile x/y of a position at zoom z (Web Mercator).
  static func tile(_ latitude: Double, _ longitude: Double, z: Int) -> (x: Int, y: Int) {
    let n = Double(1 << z)
    let x = Int((longitude + 180) / 360 * n)
    let radians = latitude * .pi / 180
    let y = Int((1 - asinh(tan(radians)) / .pi) / 2 * n)
    return (x, y)
  }

  @Test func aCityTileHasItsRoadsAndStreetNames() async throws {
    // Monte-Carlo's harbour front, at street level.
    let (x, y) = Self.tile(43.7384, 7.4246, z: 17)
    let svg = try #require(await Self.svg(z: 17, x: x, y: y))
    #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(svg.components(separatedBy: "<path d=\"M").count > 5)
    #expect(svg.contains("<textPath"), "street names from zoom 16")
    // Names are escaped for XML.
    #expect(!svg.contains("'<") && !svg.contains("& "))
  }

  @Test func minorRoadsAndNamesWaitForTheirZoom() async throws {
    let (x, y) = Self.tile(43.7384, 7.4246, z: 12)
    let overview = try #require(await Self.svg(z: 12, x: x, y: y))
    #expect(!overview.contains("<textPath"))
    // At zoom 12 only roads from tertiary up are drawn: fewer paths than the street-level tiles hold.
    let (x15, y15) = Self.tile(43.7384, 7.4246, z: 15)
    let street = try #require(await Self.svg(z: 15, x: x15, y: y15))
    #expect(street.count > overview.count / 4)
    #expect(overview.contains("stroke=\"#fcd6a4\"") || overview.contains("stroke=\"#a06b00\""), "primary roads at 12")
    #expect(!overview.contains("stroke=\"#cfcac2\""), "no service roads at 12")
    #expect(street.contains("stroke=\"#bbb5ab\""), "residential roads from 13")
  }

  @Test func waterAndGreenAreasComeFromTheExtract() async throws {
    // Monaco's harbour and the Jardin Exotique's slopes are in view at zoom 14.
    let (x, y) = Self.tile(43.7347, 7.4206, z: 14)
    let svg = try #require(await Self.svg(z: 14, x: x, y: y))
    #expect(svg.contains("#aad3df"), "water")
    #expect(svg.contains("#cdebb0"), "green areas")
  }

  @Test func tilesOutsideTheWorldAreRefusedAndEmptyOnesAreLand() async throws {
    #expect(try await Self.svg(z: 3, x: 8, y: 0) == nil)
    #expect(try await Self.svg(z: 21, x: 0, y: 0) == nil)
    #expect(try await Self.svg(z: 2, x: -1, y: 0) == nil)
    let far = try #require(await Self.svg(z: 10, x: 0, y: 0))
    #expect(!far.contains("<path d=\"M"))
  }

  @Test func multipolygonWaysJoinIntoClosedRingsWhateverTheirDirection() {
    let rings = MapAreas.closedRings([[1, 2, 3], [5, 4, 3], [5, 6, 1], [10, 11], [20, 21, 22, 20]])
    #expect(rings.count == 2)
    #expect(rings.contains { Set($0) == [1, 2, 3, 4, 5, 6] && $0.first == $0.last })
    #expect(rings.contains { $0 == [20, 21, 22, 20] })
  }

  @Test func theCacheServesTheSameBytes() async throws {
    let cache = TileCache(renderer: try await Self.renderer(), budgetBytes: 1 << 20)
    let (x, y) = Self.tile(43.7384, 7.4246, z: 16)
    let first = try #require(await onDedicatedThread(named: "tile") { cache.tile(z: 16, x: x, y: y) })
    #expect(cache.tile(z: 16, x: x, y: y) == first)
    #expect(cache.tile(z: 25, x: 0, y: 0) == nil)
  }
}

@Suite("The sea from coastlines")
struct CoastlineTests {
  @Test func aCoastlineAcrossATileLeavesTheSeaOnItsRight() throws {
    // Eastward along the middle: land to the north (left), sea to the south (right).
    let piece = [Pixel(x: -4, y: 128), Pixel(x: 260, y: 128)]
    let rings = Coastline.close([piece], -4, 260)
    #expect(rings.count == 1)
    let ring = try #require(rings.first)
    #expect(ring.contains(Pixel(x: 260, y: 260)) && ring.contains(Pixel(x: -4, y: 260)))
    #expect(!ring.contains(Pixel(x: -4, y: -4)) && !ring.contains(Pixel(x: 260, y: -4)))
    // Westward, the sea is to the north.
    let north = try #require(Coastline.close([piece.reversed()], -4, 260).first)
    #expect(north.contains(Pixel(x: -4, y: -4)) && !north.contains(Pixel(x: 260, y: 260)))
  }

  @Test func clippingKeepsThePartsInsideAndRefusesLinesEndingInside() throws {
    let through = try #require(
      Coastline.clip([Pixel(x: -50, y: 10), Pixel(x: 100, y: 10), Pixel(x: 100, y: 300)], 0, 256))
    #expect(through.count == 1)
    #expect(through[0].first == Pixel(x: 0, y: 10))
    #expect(through[0].last == Pixel(x: 100, y: 256))
    #expect(Coastline.clip([Pixel(x: -50, y: 10), Pixel(x: 100, y: 10)], 0, 256) == nil)
  }

  @Test func coastlineWaysJoinInTheirOwnDirection() {
    let chains = Coastline.joined([[3, 4], [1, 2, 3], [7, 8], [10, 11, 10]])
    #expect(chains.contains([1, 2, 3, 4]))
    #expect(chains.contains([7, 8]))
    #expect(chains.contains([10, 11, 10]))
    // Ways the other way round are not joined: their water would be on the wrong side.
    #expect(Coastline.joined([[1, 2], [3, 2]]).count == 2)
  }

  @Test func monacosHarbourAndTheOpenSeaAreWater() async throws {
    // Port Hercule at zoom 17, and a tile of open sea south of Monaco at zoom 14.
    let (hx, hy) = TileRendererTests.tile(43.7345, 7.4230, z: 17)
    let harbour = try #require(await TileRendererTests.svg(z: 17, x: hx, y: hy))
    #expect(harbour.contains("fill=\"#aad3df\""))
    let (sx, sy) = TileRendererTests.tile(43.70, 7.44, z: 14)
    let sea = try #require(await TileRendererTests.svg(z: 14, x: sx, y: sy))
    #expect(sea.contains("<path d=\"M-4 -4L260 -4L260 260L-4 260Z"), "the whole tile is sea")
  }
}
