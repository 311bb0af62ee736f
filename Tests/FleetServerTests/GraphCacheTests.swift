import FleetCore
import FleetGeocoding
import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Logging
import Testing

@testable import FleetServer

/// `fleetd serve --osm`: the road graph is built once per extract and kept by content hash.
@Suite("Graph cache")
struct GraphCacheTests {
  @Test func buildsOncePerExtractAndAgainForANewFormatOrContent() async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-graph-cache-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let logger = Logger(label: "graph-cache-test")
    try await onDedicatedThread(named: "graph-cache-test") {
      let first = try GraphCache.graph(for: monacoPortOSM, in: directory, logger: logger)
      #expect(GraphFile.hasCurrentFormat(first))
      #expect(first.hasPrefix(directory + "/graphs/"))
      let built = try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as? Date
      // Again: the same file, not rebuilt.
      #expect(try GraphCache.graph(for: monacoPortOSM, in: directory, logger: logger) == first)
      #expect(try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as? Date == built)
      // A cached file of another format is rebuilt in place.
      try Data("FLEETKIT-GRAPH".utf8 + [0, 0, 1, 0, 0, 0]).write(to: URL(fileURLWithPath: first))
      #expect(!GraphFile.hasCurrentFormat(first))
      #expect(try GraphCache.graph(for: monacoPortOSM, in: directory, logger: logger) == first)
      #expect(GraphFile.hasCurrentFormat(first))
      _ = try RoutingEngine(graph: first)
    }
    // Another content, another name.
    let a = directory + "/a.bin"
    let b = directory + "/b.bin"
    try Data([1, 2, 3]).write(to: URL(fileURLWithPath: a))
    try Data([1, 2, 4]).write(to: URL(fileURLWithPath: b))
    #expect(try GraphCache.contentHash(of: a) != GraphCache.contentHash(of: b))
    #expect(try GraphCache.contentHash(of: a).count == 32)
  }

  @Test func geocodingDataIsReadOncePerExtract() async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-geo-cache-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let logger = Logger(label: "geo-cache-test")
    let read = try await GeoDataCache.extract(for: monacoOSM, in: directory, logger: logger)
    let files = try FileManager.default.contentsOfDirectory(atPath: directory + "/geocoding")
    #expect(files.count == 1 && files[0].hasSuffix(".geodata"))
    let cache = directory + "/geocoding/" + files[0]
    let written = try FileManager.default.attributesOfItem(atPath: cache)[.modificationDate] as? Date
    // Again: from the cache, the same answers as from the extract.
    let cached = try await GeoDataCache.extract(for: monacoOSM, in: directory, logger: logger)
    #expect(try FileManager.default.attributesOfItem(atPath: cache)[.modificationDate] as? Date == written)
    let fresh = try await GeocodingEngine.load(extract: read, geoNamesPath: nil)
    let again = try await GeocodingEngine.load(extract: cached, geoNamesPath: nil)
    #expect(fresh.summary == again.summary)
    #expect(fresh.summary.streets > 100)
    let casino = LatLng(latitude: 43.7396, longitude: 7.4280)
    #expect(try fresh.reverse(casino) == (try again.reverse(casino)))
    // A damaged cache is read from the extract again.
    try Data("FleetKit geocoding extract 1\ngarbage".utf8).write(to: URL(fileURLWithPath: cache))
    let repaired = try await GeoDataCache.extract(for: monacoOSM, in: directory, logger: logger)
    #expect(try await GeocodingEngine.load(extract: repaired, geoNamesPath: nil).summary == fresh.summary)
    #expect(GeocodingExtract(decoding: try Data(contentsOf: URL(fileURLWithPath: cache))) != nil)
  }
}
