import FleetCore
import FleetGeocoding
import FleetTestSupport
import Foundation
import Testing

/// `fleet geo reverse` and `fleet geo search` as processes: offline from the files, and from a
/// real fleetd with an API key.
@Suite struct FleetGeoCommandTests {
  func fleet(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await FleetProcess.run(arguments)
  }

  let osm = monacoOSM
  let geoNames = projectData.appendingPathComponent("cities1000.csv").path

  @Test func reverseOfflineAsJSON() async throws {
    let (status, output) = try await fleet([
      "geo", "reverse", "--osm", osm, "--geonames", geoNames, "--json", "43.7330,7.4258",
    ])
    #expect(status == 0)
    let address = try JSONDecoder().decode(Address.self, from: Data(output.utf8))
    #expect(address.houseNumber == "6")
    #expect(address.street == "Quai Antoine 1er")
    #expect(address.countryCode == "MC")
  }

  @Test func searchOfflineFindsThePharmacies() async throws {
    let (status, output) = try await fleet(["geo", "search", "--osm", osm, "--city", "Monaco", "--json", "pharmacy"])
    #expect(status == 0)
    let page = try JSONDecoder().decode(PlacePage.self, from: Data(output.utf8))
    #expect(page.places.count >= 5)
    #expect(page.places.allSatisfy { $0.category == "amenity=pharmacy" })
  }

  @Test func searchThroughFleetdWithAKey() async throws {
    let fleetd = Fleetd(geocoding: try await monacoGeocoding())
    try await fleetd.start()
    do {
      let key = try await fleetd.apiKey()
      let (status, output) = try await fleet([
        "geo", "search", "--server", fleetd.httpURL.absoluteString, "--api-key", key, "--near", "43.7345,7.4230",
        "casino",
      ])
      #expect(status == 0)
      #expect(output.contains("Casino de Monte Carlo [amenity=casino]"))
      let refused = try await fleet([
        "geo", "reverse", "--server", fleetd.httpURL.absoluteString, "--api-key", "fk_x", "1,2",
      ])
      #expect(refused.status != 0)
    } catch {
      try? await fleetd.stop()
      throw error
    }
    try await fleetd.stop()
  }

  @Test func withoutASourceTheCommandSaysWhatToGive() async throws {
    let (status, _) = try await fleet(["geo", "reverse", "43.7330,7.4258"])
    #expect(status == 64)
  }
}
