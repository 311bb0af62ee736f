import FleetCore
import FleetTestSupport
import Foundation
import Testing

/// Tombstones that an earlier version left, without the time they were written, count from the
/// upgrade: kept for `Tombstones.retention` from then, then purged like any other.
@Suite("Tombstones of earlier versions")
struct TombstoneMigrationTests {
  @Test(arguments: StoreKind.allCases)
  func countFromTheUpgrade(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    // A store as an earlier fleetd left it: no tombstone times, no purged revision.
    try await place.with { _ in }
    for table in ["trips", "vehicles", "rides"] {
      if kind == .sqlite { try await place.execute("DROP INDEX \(table)_tombstones") }
      try await place.execute("ALTER TABLE \(table) DROP COLUMN deleted_at")
    }
    try await place.execute("DROP TABLE purged_revision")
    try await place.forget(migration: kind.tombstoneTimes)
    try await place.execute("INSERT INTO trips (provider, id, revision, body) VALUES ('p', 'gone', 9, NULL)")

    try await place.with { upgraded async throws in
      #expect(try await upgraded.purgeTombstones(olderThan: Tombstones.retention, limit: 10) == 0)
      try await Task.sleep(for: .milliseconds(20))
      #expect(try await upgraded.purgeTombstones(olderThan: .zero, limit: 10) == 1)
      #expect(try await upgraded.highestRevision() == 9)
    }
  }
}

extension StoreKind {
  /// The migration that gives tombstones their time.
  var tombstoneTimes: String {
    switch self {
    case .sqlite: "v7: tombstone times"
    case .postgres: "v8: tombstone times"
    }
  }
}
