import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting

/// A repeatable noise source for synthetic GPS traces.
struct SplitMix {
  var state: UInt64
  mutating func next() -> Double {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
  }
}

/// Points every `spacing` metres along a line, moved by up to `noise` metres in each axis.
func noisyTrace(along line: [LatLng], spacing: Double, noise: Double, seed: UInt64 = 7) -> [LatLng] {
  var random = SplitMix(state: seed)
  var result: [LatLng] = []
  var carried = 0.0
  for (a, b) in zip(line, line.dropFirst()) {
    let length = Geo.distance(a.latitude, a.longitude, b.latitude, b.longitude)
    var at = carried
    while at < length {
      let t = at / length
      let metre = 1 / (Geo.earthRadius * Geo.degreeToRadian)
      result.append(
        LatLng(
          latitude: a.latitude + (b.latitude - a.latitude) * t + (random.next() * 2 - 1) * noise * metre,
          longitude: a.longitude + (b.longitude - a.longitude) * t
            + (random.next() * 2 - 1) * noise * metre / cos(a.latitude * Geo.degreeToRadian)))
      at += spacing
    }
    carried = at - length
  }
  return result
}

@Suite("Map matching")
struct MapMatchingTests {
  @Test func aNoisyTraceStaysOnTheRoadItFollows() async throws {
    var map = MapFixture(
      """
      a               b


      c               d
      """)
    map.way("ab", ["highway": "primary", "name": "Main"])
    map.way("cd", ["highway": "primary", "name": "Side"])
    let engine = try map.engine()
    let trace = noisyTrace(along: [map.point("a"), map.point("b")], spacing: 40, noise: 8)
    let matched = try engine.match(trace)
    #expect(matched.matchings.count == 1)
    #expect(matched.matchings[0].roads == ["Main"])
    #expect(matched.tracepoints.allSatisfy { $0?.snapped.name == "Main" })
    #expect(matched.matchings[0].confidence > 0.3)
    #expect(
      abs(
        matched.matchings[0].distance
          - Geo.distance(
            trace.first!.latitude, trace.first!.longitude, trace.last!.latitude, trace.last!.longitude)) < 20)
  }

  @Test func aDriveThroughMonacoIsRecovered() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let route = try engine.route(
      from: LatLng(latitude: 43.73890650728738, longitude: 7.4223956530864195),
      to: LatLng(latitude: 43.735992570216055, longitude: 7.438929439300411))
    let trace = noisyTrace(along: route.geometry, spacing: 25, noise: 6)
    let matched = try engine.match(trace)
    // One drive, as long as the route (the trace starts and ends within a few metres of it).
    #expect(matched.matchings.count == 1)
    let distance = matched.matchings.map(\.distance).reduce(0, +)
    #expect(abs(distance - route.distance) / route.distance < 0.05)
    #expect(matched.tracepoints.compactMap { $0 }.count >= trace.count * 9 / 10)
    // Every matched point lies on the route's shape.
    let shape = route.geometry.map { FixedCoordinate(latitude: $0.latitude, longitude: $0.longitude) }
    for point in matched.tracepoints.compactMap({ $0?.snapped.location }) {
      let p = FixedCoordinate(latitude: point.latitude, longitude: point.longitude)
      let nearest = zip(shape, shape.dropFirst()).map { a, b in
        Geo.distance(p, Geo.interpolate(a, b, Geo.projection(of: p, onto: a, b)))
      }.min()!
      #expect(nearest < 3)
    }
  }

  @Test func aTraceAwayFromRoadsHasNoMatch() async throws {
    var map = MapFixture("a   b")
    map.way("ab")
    let engine = try map.engine()
    let far = (0..<5).map { LatLng(latitude: 43.75 + Double($0) * 0.001, longitude: 7.45) }
    do {
      _ = try engine.match(far)
      Issue.record("a trace 5 km from the only road was matched")
    } catch {
      #expect(error.code == .noMatch)
    }
    #expect(throws: RoutingError.self) { try engine.match([map.point("a")]) }
  }
}
