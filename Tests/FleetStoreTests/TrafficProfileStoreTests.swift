import FleetCore
import FleetTestSupport
import Foundation
import Testing

@Suite("The usual traffic in the store")
struct TrafficProfileStoreTests {
  /// Entries saved in batches larger than one statement come back; saving one again replaces
  /// it; each road graph has its own, on SQLite and PostgreSQL alike.
  @Test(arguments: StoreKind.allCases)
  func entriesComeBackReplacedAndByGraph(_ kind: StoreKind) async throws {
    let place = try await StorePlace.fresh(kind)
    defer { place.remove() }
    try await place.with { store in
      let entries = (0..<4500).map {
        TrafficProfileEntry(road: Int64($0 * 3), bin: $0 % 672, slowdown: 1 + Double($0 % 40) / 10, samples: $0 % 9 + 1)
      }
      try await store.saveTrafficProfile(graph: "a1", entries)
      try await store.saveTrafficProfile(graph: "b2", [TrafficProfileEntry(road: 3, bin: 1, slowdown: 2, samples: 1)])
      try await store.saveTrafficProfile(graph: "a1", [TrafficProfileEntry(road: 3, bin: 1, slowdown: 4.5, samples: 7)])
      let read = try await store.trafficProfile(graph: "a1")
      #expect(read.count == entries.count)
      let byKey = Dictionary(uniqueKeysWithValues: read.map { ("\($0.road)/\($0.bin)", $0) })
      #expect(byKey["3/1"] == TrafficProfileEntry(road: 3, bin: 1, slowdown: 4.5, samples: 7))
      #expect(byKey["2997/327"] == entries[999])
      #expect(try await store.trafficProfile(graph: "b2").map(\.slowdown) == [2])
      #expect(try await store.trafficProfile(graph: "none").isEmpty)
    }
  }
}
