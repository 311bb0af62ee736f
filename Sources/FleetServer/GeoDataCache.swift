import FleetCore
import FleetGeocoding
import FleetGeometry
import Foundation
import Logging

/// What geocoding reads from an extract, kept in the data directory under the extract's
/// content hash beside the road graphs (`geocoding/`): read at the first start, again only when
/// the file's content changes (or the cache's format does).
public enum GeoDataCache {
  public static func extract(for osm: String, in dataDirectory: String, logger: Logger) async throws
    -> GeocodingExtract
  {
    try await onDedicatedThread(named: "geocoding-extract") {
      let hash = try GraphCache.contentHash(of: osm)
      let directory = URL(fileURLWithPath: dataDirectory).appendingPathComponent("geocoding")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let path = directory.appendingPathComponent("\(hash).geodata")
      let started = ContinuousClock.now
      if let bytes = FileManager.default.contents(atPath: path.path), let cached = GeocodingExtract(decoding: bytes) {
        logger.info(
          "geocoding data from the cache",
          metadata: [
            "osm": "\(osm)", "cache": "\(path.path)",
            "ms": "\(Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded()))",
          ])
        return cached
      }
      let extract = try GeocodingExtract(osmPath: osm)
      try extract.encoded().write(to: path, options: .atomic)
      logger.notice(
        "geocoding data read from the extract (once per extract)",
        metadata: [
          "osm": "\(osm)", "cache": "\(path.path)",
          "ms": "\(Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded()))",
        ])
      return extract
    }
  }
}
