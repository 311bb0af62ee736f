import FleetCore
import FleetGeometry
import FleetTestSupport
import Testing

@testable import FleetRouting

@Suite("Polylines and matrices")
struct GeometryTests {
  @Test func polylinesFollowGooglesFormat() {
    // Google's documented example.
    let points = [
      LatLng(latitude: 38.5, longitude: -120.2), LatLng(latitude: 40.7, longitude: -120.95),
      LatLng(latitude: 43.252, longitude: -126.453),
    ]
    #expect(Polyline.encode(points) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
    #expect(Polyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@") == points)
    let precise = [LatLng(latitude: 43.738123, longitude: 7.424567)]
    #expect(Polyline.decode(Polyline.encode(precise, precision: 6), precision: 6) == precise)
    #expect(Polyline.decode("_p~iF~ps|U_") == nil)
    #expect(Polyline.decode("\u{1F}") == nil)
    #expect(Polyline.decode("") == [])
  }

  @Test func simplificationKeepsCornersAndEnds() {
    let straight = (0...10).map { LatLng(latitude: 43.7, longitude: 7.4 + Double($0) * 0.0001) }
    #expect(Simplify.douglasPeucker(straight, toleranceMeters: 1).count == 2)
    let corner = straight + [LatLng(latitude: 43.701, longitude: 7.401)]
    let simplified = Simplify.douglasPeucker(corner, toleranceMeters: 1)
    #expect(simplified.first == corner.first && simplified.last == corner.last)
    #expect(simplified.count == 3)
  }

  @Test func matricesAgreeWithRoutesAndMarkUnreachablePairs() throws {
    // Two networks of the same size: neither is tiny, so points stay on their own (OSRM's rule)
    // and nothing connects them.
    var map = MapFixture(
      """
      a   b   c       e   f   g


          d               h
      """)
    map.way("abc")
    map.way("bd")
    map.way("efg")
    map.way("fh")
    let engine = try map.engine()
    let points = ["a", "c", "d", "f"].map { map.point(Character($0)) }
    let matrix = try engine.matrix(sources: points, destinations: points)
    for i in 0..<3 {
      #expect(matrix.durations[i][i] == 0)
      for j in 0..<3 where i != j {
        let route = try engine.route(from: points[i], to: points[j])
        #expect(abs((matrix.durations[i][j] ?? -1) - route.duration) < 1e-6)
        #expect(abs((matrix.distances[i][j] ?? -1) - route.distance) < 1e-6)
      }
      #expect(matrix.durations[i][3] == nil)
      #expect(matrix.durations[3][i] == nil)
    }
    #expect(throws: RoutingError.self) { try engine.matrix(sources: [], destinations: points) }
  }
}
