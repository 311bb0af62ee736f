import FleetCore
import FleetGeometry
import Foundation
import Testing

@testable import FleetRouting

/// The real Monaco extract: import, routes checked against OSRM, the graph file, error paths.
@Suite("Routing in Monaco")
struct MonacoRoutingTests {
  /// Built once per test process, on a thread of its own: seconds of CPU in a debug build that
  /// would otherwise hold one of the few threads every test shares.
  static func engine() async throws -> RoutingEngine { try await engineBuild.value }
  static let engineBuild = Task {
    try await onDedicatedThread(named: "monaco-engine") { try RoutingEngine(osm: MonacoData.monaco) }
  }

  @Test func theExtractBecomesADrivableNetwork() async throws {
    // Seconds of CPU in a debug build: on a thread of its own, not one every test shares.
    let (network, summary) = try await onDedicatedThread(named: "monaco-extract") {
      try OSMExtractor().extract(path: MonacoData.monaco)
    }
    #expect(summary.drivableWays > 1500)
    #expect(network.edges.count > 2000)
    #expect(summary.restrictions > 10)
    // Most of it is one strongly connected component, as a city's streets are.
    let engine = try await Self.engine()
    let components = engine.components
    let largest = components.size.indices.max { components.size[$0] < components.size[$1] }!
    let drivable = network.edges.indices.flatMap { edge in
      [false, true].filter { network.edges[edge].cost(reversed: $0) != nil }.map {
        Int(TurnGraph.directed(edge, reversed: $0))
      }
    }
    let inLargest = drivable.filter { components.component[$0] == Int32(largest) }
    #expect(Double(inLargest.count) > 0.8 * Double(drivable.count))
  }

  /// Queries of data/monaco.requests with OSRM's answers on the same extract
  /// (osrm-routed, car profile, 2026-11-22): FleetKit must agree within the issue's bounds.
  @Test(arguments: [
    (
      LatLng(latitude: 43.73890650728738, longitude: 7.4223956530864195),
      LatLng(latitude: 43.735992570216055, longitude: 7.438929439300411), 2539.0, 312.0
    ),
    (
      LatLng(latitude: 43.72947344693073, longitude: 7.428418634156379),
      LatLng(latitude: 43.7441699625343, longitude: 7.444141062345679), 3634.0, 314.0
    ),
    (
      LatLng(latitude: 43.739465337877235, longitude: 7.429420661316873),
      LatLng(latitude: 43.741216421382035, longitude: 7.415447385802469), 3286.0, 279.0
    ),
  ])
  func routesAgreeWithOSRM(from: LatLng, to: LatLng, osrmDistance: Double, osrmDuration: Double) async throws {
    let route = try await Self.engine().route(from: from, to: to)
    #expect(abs(route.distance - osrmDistance) / osrmDistance < 0.02)
    #expect(abs(route.duration - osrmDuration) / osrmDuration < 0.10)
    // The shape starts and ends where the waypoints snapped, and its length is the distance.
    let shape = route.geometry.map { FixedCoordinate(latitude: $0.latitude, longitude: $0.longitude) }
    let length = zip(shape, shape.dropFirst()).reduce(0) { $0 + Geo.distance($1.0, $1.1) }
    #expect(abs(length - route.distance) < 5)
    #expect(route.geometry.first == route.waypoints.first?.location)
    #expect(route.geometry.last == route.waypoints.last?.location)
  }

  @Test func theGraphFileRoundTripsAndRejectsDamage() async throws {
    let path = temporaryFile("monaco.graph")
    defer { try? FileManager.default.removeItem(atPath: path) }
    let engine = try await Self.engine()
    // Seconds of CPU in a debug build: on a thread of its own, not one every test shares.
    let loaded = try await onDedicatedThread(named: "graph-round-trip") {
      try GraphFile.write(engine.network, profile: engine.profile, to: path)
      return try RoutingEngine(graph: path)
    }
    let a = LatLng(latitude: 43.7389, longitude: 7.4224)
    let b = LatLng(latitude: 43.7360, longitude: 7.4389)
    #expect(try loaded.route(from: a, to: b) == engine.route(from: a, to: b))
    #expect(loaded.profile == engine.profile)

    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    for damaged in [bytes.prefix(bytes.count - 7), bytes.prefix(100), Data("FLEETKIT-GRAPH".utf8), bytes + Data([1])] {
      try Data(damaged).write(to: URL(fileURLWithPath: path))
      #expect(throws: GraphFile.FormatError.self) { try RoutingEngine(graph: path) }
    }
    var wrongVersion = bytes
    wrongVersion[16] = 99
    try wrongVersion.write(to: URL(fileURLWithPath: path))
    do {
      _ = try RoutingEngine(graph: path)
      Issue.record("a graph of another format version was loaded")
    } catch let error as GraphFile.FormatError {
      #expect(error.description.contains("rebuild the graph"))
    }
  }

  @Test func nearestNamesTheRoad() async throws {
    // On the Boulevard Albert 1er, by the port.
    let snapped = try await Self.engine().nearest(LatLng(latitude: 43.73655, longitude: 7.42140))
    #expect(snapped.first?.distance ?? 99 < 30)
    #expect(snapped.first?.name.isEmpty == false)
  }

  @Test func impossibleQueriesGetClearErrors() async throws {
    let engine = try await Self.engine()
    let monaco = LatLng(latitude: 43.7384, longitude: 7.4246)
    for bad in [LatLng(latitude: 100, longitude: 7), LatLng(latitude: .infinity, longitude: 7)] {
      do {
        _ = try engine.route(from: monaco, to: bad)
        Issue.record("routed to \(bad)")
      } catch {
        #expect(error.code == .invalidQuery)
      }
    }
    do {
      _ = try engine.route(from: monaco, to: LatLng(latitude: 48.8566, longitude: 2.3522))
      Issue.record("routed from Monaco to Paris on Monaco's map")
    } catch {
      #expect(error.code == .noSegment)
      #expect(error.message.contains("outside the area"))
    }
  }
}
