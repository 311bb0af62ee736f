import FleetCore
import FleetGeocoding
import FleetPlaces
import FleetTestSupport
import Foundation
import Testing

/// `fleet geo reverse` and `fleet geo search` as processes: offline from the files, and from a
/// real fleetd with an API key.
@Suite struct FleetGeoCommandTests {
  func fleet(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let outcome = try await ChildProcess.runFleet(arguments)
    return (outcome.status, outcome.output)
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
        "geo", "search", "--http-port", "\(fleetd.httpPort)", "--api-key", key, "--near", "43.7345,7.4230",
        "casino",
      ])
      #expect(status == 0)
      #expect(output.contains("Casino de Monte Carlo [amenity=casino]"))
      let refused = try await fleet([
        "geo", "reverse", "--http-port", "\(fleetd.httpPort)", "--api-key", "fk_x", "1,2",
      ])
      #expect(refused.status != 0)
    } catch {
      try? await fleetd.stop()
      throw error
    }
    try await fleetd.stop()
  }

  /// The southern hemisphere needs no `--`: a negative latitude is a coordinate, not an option.
  @Test func negativeLatitudesAreCoordinates() async throws {
    let (status, output) = try await fleet(["geo", "convert", "--from", "wgs84", "--to", "gcj02", "-33.86,151.21"])
    #expect(status == 0, "\(output)")
    #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "-33.86000000,151.21000000")
  }

  /// Every command names fleetd the same way (--host, --grpc-port, --http-port) and says so
  /// when it is given the other kind of port.
  @Test func theWrongKindOfPortIsNamed() async throws {
    let fleetd = Fleetd()
    try await fleetd.start()
    do {
      let http = try await ChildProcess.runFleet([
        "geo", "reverse", "--http-port", "\(fleetd.grpcPort)", "--api-key", "fk_x", "43.7330,7.4258",
      ])
      #expect(http.status != 0)
      #expect(http.errors.contains("give fleetd's HTTP port with --http-port"), "\(http.errors)")
      let grpc = try await ChildProcess.runFleet([
        "track", "--grpc-port", "\(fleetd.httpPort)", "--provider", "acme", "--key", "/nonexistent.json", "--trip", "t",
      ])
      #expect(grpc.status != 0)
      #expect(grpc.errors.contains("give fleetd's gRPC port with --grpc-port"), "\(grpc.errors)")
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
