import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting
@testable import FleetServer

/// The routing API's responses written in one pass (`StreamingJSONEncoder`) read back as the
/// same JSON as Foundation's `JSONEncoder` writes them.
@Suite("Streaming JSON")
struct StreamingJSONEncoderTests {
  func same(_ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let streamed = try StreamingJSONEncoder().encode(value)
    let foundation = try JSONEncoder().encode(value)
    // Read back and written again with sorted keys: the same JSON gives the same bytes.
    func canonical(_ data: Data) throws -> Data {
      try JSONSerialization.data(
        withJSONObject: try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
        options: [.sortedKeys, .fragmentsAllowed])
    }
    #expect(
      try canonical(streamed) == canonical(foundation), "\(String(decoding: streamed, as: UTF8.self).prefix(300))",
      sourceLocation: sourceLocation)
  }

  @Test func routingResponsesReadBackAsJSONEncodersDo() async throws {
    let engine = try await RoutingEngine.load(graph: try await monacoGraph())
    let front = OSRMFront(engine: engine)
    let points = "7.4200,43.7300;7.4280,43.7395;7.4300,43.7400"
    func query(_ service: String, _ coordinates: String, _ options: String) throws -> OSRMQuery {
      try OSRMQuery(service: service, path: "/\(service)/v1/driving/\(coordinates)", query: options)
    }
    for options in [
      "overview=full&steps=true&annotations=true&alternatives=true", "geometries=geojson&overview=simplified",
      "overview=false&skip_waypoints=true", "steps=true&geometries=polyline6",
    ] {
      try same(try front.route(engine, try query("route", points, options)))
    }
    try same(try front.nearest(engine, try query("nearest", "7.4200,43.7300", "number=3")))
    try same(
      try front.match(
        engine,
        try query("match", "7.4180,43.7290;7.4190,43.7292;7.4200,43.7294;7.4400,43.7600", "steps=true&annotations=true")
      ))
    try same(
      try front.isochrone(engine, try query("isochrone", "7.4280,43.7395", "contours_minutes=2,4&polygons=false")))
    try same(OSRMError("InvalidQuery", "a \"quoted\" message with a \\ and a\nnew line and ünïcödé"))
    let numbers: [String: [Double]] = ["a": [1.5, -0.25, 1e-9, 123_456_789.125], "b": [Double.pi, 2, 0]]
    try same(numbers)
    let table = try front.table(engine, try query("table", points, "annotations=duration,distance"))
    let streamed = try JSONSerialization.jsonObject(with: try table.jsonData()) as? [String: Any]
    #expect((streamed?["sources"] as? [[String: Any]])?.count == 3)
    #expect((streamed?["durations"] as? [[Double]])?.count == 3)
  }

  /// A value written through nested containers and super encoders, as a hand-written
  /// `encode(to:)` may be: each closed where its parent writes on.
  struct Nested: Encodable {
    enum Keys: String, CodingKey { case name, position, points, tail }
    enum Position: String, CodingKey { case lat, lng }

    func encode(to encoder: any Encoder) throws {
      var top = encoder.container(keyedBy: Keys.self)
      try top.encode("a", forKey: .name)
      var position = top.nestedContainer(keyedBy: Position.self, forKey: .position)
      try position.encode(43.7, forKey: .lat)
      try position.encode(7.42, forKey: .lng)
      var points = top.nestedUnkeyedContainer(forKey: .points)
      var first = points.nestedUnkeyedContainer()
      try first.encode(1.5)
      try first.encodeNil()
      var second = points.nestedContainer(keyedBy: Position.self)
      try second.encode(2, forKey: .lat)
      try points.encode("three")
      var base = top.superEncoder().container(keyedBy: Position.self)
      try base.encode(0, forKey: .lng)
      try ["x", "y"].encode(to: top.superEncoder(forKey: .tail))
    }
  }

  @Test func nestedContainersAndSuperEncodersReadBackAsJSONEncodersDo() throws {
    try same(Nested())
    try same([Nested(), Nested()])
  }

  @Test func strayControlCharactersAreEscaped() throws {
    let value: [String: String] = ["name": "tab\there\u{01}"]
    let data = try StreamingJSONEncoder().encode(value)
    #expect(String(decoding: data, as: UTF8.self) == #"{"name":"tab\there\u0001"}"#)
  }
}
