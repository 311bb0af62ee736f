import FleetCore
import FleetGeocoding
import FleetTestSupport
import Foundation
import Testing

/// `fleet geo reverse` and `fleet geo search` as processes: offline from the files, and from a
/// real fleetd with an API key.
@Suite struct FleetGeoCommandTests {
  static var fleetBinary: String {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("fleet")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/debug/fleet").path
  }

  /// Runs `fleet` to completion; its exit status and standard output. Waits without holding a
  /// thread: the child may take seconds (it builds a geocoding engine), and a blocked thread is
  /// one of the few the whole test process shares.
  func fleet(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.fleetBinary)
    process.arguments = arguments
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-geo-\(UUID()).out")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardError = FileHandle.nullDevice
    let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
      process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
      do {
        try process.run()
      } catch {
        process.terminationHandler = nil
        continuation.resume(throwing: error)
      }
    }
    return (status, try String(contentsOf: output, encoding: .utf8))
  }

  let osm = sharedData.appendingPathComponent("monaco.osm.pbf").path
  let geoNames = sharedData.appendingPathComponent("cities1000.csv").path

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
