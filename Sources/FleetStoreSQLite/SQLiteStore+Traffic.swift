import FleetCore
import FleetStoreCore
import Foundation
import GRDB

extension SQLiteStore: TrafficProfileStore {
  public func trafficProfile(graph: String) async throws -> [TrafficProfileEntry] {
    try await pool.read { db in
      try Row.fetchAll(
        db, sql: "SELECT road, bin, slowdown, samples FROM traffic_profile WHERE graph = ?", arguments: [graph]
      ).map { row in
        TrafficProfileEntry(road: row["road"], bin: row["bin"], slowdown: row["slowdown"], samples: row["samples"])
      }
    }
  }

  public func saveTrafficProfile(graph: String, _ entries: [TrafficProfileEntry]) async throws {
    guard !entries.isEmpty else { return }
    try await pool.write { db in
      let statement = try db.cachedStatement(
        sql: """
          INSERT INTO traffic_profile (graph, road, bin, slowdown, samples) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (graph, bin, road) DO UPDATE SET slowdown = excluded.slowdown, samples = excluded.samples
          """)
      for entry in entries {
        try statement.execute(arguments: [graph, entry.road, entry.bin, entry.slowdown, entry.samples])
      }
    }
  }
}
