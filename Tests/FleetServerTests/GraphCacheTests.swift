import FleetCore
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
      let first = try GraphCache.graph(for: monacoOSM, in: directory, logger: logger)
      #expect(GraphFile.hasCurrentFormat(first))
      #expect(first.hasPrefix(directory + "/graphs/"))
      let built = try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as? Date
      // Again: the same file, not rebuilt.
      #expect(try GraphCache.graph(for: monacoOSM, in: directory, logger: logger) == first)
      #expect(try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as? Date == built)
      // A cached file of another format is rebuilt in place.
      try Data("FLEETKIT-GRAPH".utf8 + [0, 0, 1, 0, 0, 0]).write(to: URL(fileURLWithPath: first))
      #expect(!GraphFile.hasCurrentFormat(first))
      #expect(try GraphCache.graph(for: monacoOSM, in: directory, logger: logger) == first)
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
}
