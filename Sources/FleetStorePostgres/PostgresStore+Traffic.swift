import FleetCore
import FleetStoreCore
import Foundation
import PostgresNIO

extension PostgresStore: TrafficProfileStore {
  public func trafficProfile(graph: String) async throws -> [TrafficProfileEntry] {
    let rows = try await client.query(
      "SELECT road, bin, slowdown, samples FROM traffic_profile WHERE graph = \(graph)", logger: logger)
    var entries: [TrafficProfileEntry] = []
    for try await (road, bin, slowdown, samples) in rows.decode((Int64, Int32, Double, Int32).self) {
      entries.append(TrafficProfileEntry(road: road, bin: Int(bin), slowdown: slowdown, samples: Int(samples)))
    }
    return entries
  }

  /// One statement per batch: the rows go as arrays and are unnested server-side.
  public func saveTrafficProfile(graph: String, _ entries: [TrafficProfileEntry]) async throws {
    for start in stride(from: 0, to: entries.count, by: TrafficProfileTable.batch) {
      let part = entries[start..<min(entries.count, start + TrafficProfileTable.batch)]
      let roads = part.map(\.road)
      let bins = part.map { Int32($0.bin) }
      let slowdowns = part.map(\.slowdown)
      let samples = part.map { Int32(clamping: $0.samples) }
      try await client.query(
        """
        INSERT INTO traffic_profile (graph, road, bin, slowdown, samples)
        SELECT \(graph), * FROM UNNEST(\(roads)::BIGINT[], \(bins)::INTEGER[], \(slowdowns)::DOUBLE PRECISION[],
          \(samples)::INTEGER[])
        ON CONFLICT (graph, bin, road) DO UPDATE SET slowdown = excluded.slowdown, samples = excluded.samples
        """, logger: logger)
    }
  }
}
