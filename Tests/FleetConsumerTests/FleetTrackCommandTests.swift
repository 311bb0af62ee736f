import FleetAuth
import FleetCore
import FleetTestSupport
import Foundation
import Testing

/// `fleet track` and `fleet drive` as processes against a real fleetd on loopback.
@Suite struct FleetTrackCommandTests {
  @Test("fleet track follows a trip driven by fleet drive from assignment to COMPLETE")
  func tracksADrivenTrip() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-track-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let serverKey = directory + "/server.json"
      let consumerKey = directory + "/consumer.json"
      try await fleetd.key(role: .server).encoded().write(to: URL(fileURLWithPath: serverKey))
      try await fleetd.key(role: .consumer).encoded().write(to: URL(fileURLWithPath: consumerKey))
      let grpcPort = "\(fleetd.grpcPort)"

      try await fleetd.createTrip(
        "ride", vehicle: nil, pickup: TripModelIntegrationTests.pickup, dropoff: TripModelIntegrationTests.dropoff)
      let track = try ChildProcess.startFleet([
        "track", "--grpc-port", grpcPort, "--provider", "acme", "--key", consumerKey, "--trip", "ride", "--json",
      ])
      let drive = try ChildProcess.startFleet([
        "drive", "--grpc-port", grpcPort, "--provider", "acme", "--key", serverKey, "--vehicle", "cab", "--graph",
        fleetd.graph!, "--speedup", "3", "--trips", "1", "--start", "43.7315,7.4210",
      ])
      defer {
        track.stop()
        drive.stop()
      }
      try await eventually("NEW followed") { track.lines.contains { $0.contains("\"NEW\"") } }
      try await eventually("the driver online") { (try? await fleetd.vehicle("cab").vehicleState) == .online }
      try await fleetd.updateTrip("ride", vehicle: "cab")
      try await eventually("fleet track exits", timeout: .seconds(180)) { !track.isRunning }
      #expect(track.terminationStatus == 0)
      // The pipe may still hold the last lines.
      try await eventually("COMPLETE printed", timeout: .seconds(10)) {
        track.lines.contains { $0.contains("\"COMPLETE\"") }
      }

      let objects = try track.lines.map { line in
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
      }
      #expect(
        track.lines.allSatisfy {
          $0.hasPrefix("{\"callback\":") && $0.contains(",\"value\":") && $0.contains(",\"time\":")
        })
      let statuses = objects.filter { $0["callback"] as? String == "didUpdateTripStatus" }.compactMap {
        $0["value"] as? String
      }
      #expect(statuses == ["NEW", "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE"])
      let callbacks = Set(objects.compactMap { $0["callback"] as? String })
      for expected in [
        "didUpdateVehicleLocation", "didUpdateActiveRoute", "didUpdateActiveRouteRemainingDistance",
        "didUpdatePickupETA", "didUpdateDropoffETA", "didUpdateRemainingWaypoints",
      ] {
        #expect(callbacks.contains(expected), "never printed: \(expected)")
      }
      #expect(!callbacks.contains("didFailUpdateTripWithError"))
    }
  }
}
