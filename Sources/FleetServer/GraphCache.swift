import Crypto
import FleetRouting
import Foundation
import Logging

/// Road graphs built from OpenStreetMap extracts, kept in the data directory under the
/// extract's content hash: `fleetd serve --osm FILE` builds the graph at its first start and
/// again only when the file's content changes (or the graph format does).
public enum GraphCache {
  /// The graph file for the extract at `osm`, built now when the cache has none of this format.
  public static func graph(for osm: String, in dataDirectory: String, logger: Logger) throws -> String {
    let hash = try contentHash(of: osm)
    let directory = URL(fileURLWithPath: dataDirectory).appendingPathComponent("graphs")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("\(hash).graph").path
    if GraphFile.hasCurrentFormat(path) {
      logger.info("road graph from the cache", metadata: ["osm": "\(osm)", "graph": "\(path)"])
      return path
    }
    logger.notice("building the road graph (once per extract)", metadata: ["osm": "\(osm)", "graph": "\(path)"])
    let started = ContinuousClock.now
    let (network, summary) = try OSMExtractor().extract(path: osm)
    try GraphFile.write(network, profile: CarProfile(), to: path)
    logger.notice(
      "road graph built",
      metadata: [
        "ways": "\(summary.drivableWays)", "edges": "\(network.edges.count)",
        "seconds": "\((ContinuousClock.now - started).components.seconds)",
      ])
    return path
  }

  /// SHA-256 of the file's bytes, as 32 hex digits (128 bits name a file well enough).
  static func contentHash(of path: String) throws -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
    }
    defer { try? handle.close() }
    var hasher = SHA256()
    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
    return hasher.finalize().prefix(16).map { String(format: "%02x", $0) }.joined()
  }
}
