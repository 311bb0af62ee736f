import FleetCore
import FleetGeometry
import FleetRideStatus
import FleetTestSupport
import Foundation
import Testing

/// `fleet ride-status` as a process against a real fleetd, the trip driven by `fleet drive` (the
/// Driver SDK on the Monaco road graph).
@Suite struct FleetRideStatusCommandTests {
  let pickupPoint = LatLng(latitude: 43.7330, longitude: 7.4250)
  let dropoffPoint = LatLng(latitude: 43.7360, longitude: 7.4230)

  func keys(_ fleetd: Fleetd, in directory: String) async throws -> (server: String, consumer: String) {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let server = directory + "/server.json"
    let consumer = directory + "/consumer.json"
    try await fleetd.key(role: .server).encoded().write(to: URL(fileURLWithPath: server))
    try await fleetd.key(role: .consumer).encoded().write(to: URL(fileURLWithPath: consumer))
    return (server, consumer)
  }

  @Test func followsADrivenTripFromReceivedToCompleted() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-ride-status-\(UUID().uuidString)"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let (serverKey, consumerKey) = try await keys(fleetd, in: directory)
      try await fleetd.createTrip("ride", vehicle: nil, pickup: pickupPoint, dropoff: dropoffPoint)

      let follow = try ChildProcess.startFleet([
        "ride-status", "--http-port", "\(fleetd.httpPort)", "--provider", "acme", "--key", consumerKey,
        "--trip", "ride", "--follow", "--interval", "1",
      ])
      let drive = try ChildProcess.startFleet([
        "drive", "--grpc-port", "\(fleetd.grpcPort)", "--provider", "acme", "--key", serverKey, "--vehicle",
        "cab", "--graph", fleetd.graph!, "--speedup", "3", "--trips", "1", "--start", "43.7315,7.4210",
      ])
      defer {
        follow.stop()
        drive.stop()
      }
      try await eventually("received printed") { follow.lines.count == 1 }
      try await eventually("the driver online") { (try? await fleetd.vehicle("cab").vehicleState) == .online }
      try await fleetd.updateTrip("ride", vehicle: "cab")
      try await eventually("fleet ride-status exits", timeout: .seconds(180)) { !follow.isRunning }
      #expect(follow.terminationStatus == 0)
      try await eventually("completed printed", timeout: .seconds(10)) {
        follow.lines.last?.contains("\"completed\"") == true
      }

      let statuses = try follow.lines.map { try RideStatusJSON.decode(Data($0.utf8)) }
      let phases = statuses.map(\.phase).reduce(into: [RidePhase]()) { result, phase in
        if result.last != phase { result.append(phase) }
      }
      #expect(phases.first == .received)
      #expect(phases.suffix(3) == [.pickup, .ongoing, .completed])
      #expect(phases.dropFirst().dropLast(3).allSatisfy { [.confirmed, .approachingPickup].contains($0) })
      #expect(phases.contains(.confirmed) || phases.contains(.approachingPickup))
      let validator = RideStatusValidator(rideIdentifier: "ride")
      for status in statuses { #expect(validator.violations(of: status).isEmpty) }
      // ETAs while the vehicle drives to the pickup: minutes at most in Monaco, never far past.
      // The status of the moment of assignment may have none yet (fleetd has not routed the
      // vehicle): the ride option's pickup date stands in, and the next status has one.
      let now = Date()
      let approaching = statuses.filter { [.confirmed, .approachingPickup].contains($0.phase) }
      #expect(approaching.contains { $0.estimatedPickupDate != nil })
      for eta in approaching.compactMap(\.estimatedPickupDate) {
        #expect(eta > now - 300 && eta < now + 600)
      }
      #expect(statuses.last?.completionStatus?.outcome == .completed)
      #expect(statuses.last?.estimatedDropOffDate != nil || statuses.last?.phase == .completed)
    }
  }

  @Test func printsTheStatusOnceAndFailsOnAMissingTrip() async throws {
    try await Fleetd.with { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-ride-status-\(UUID().uuidString)"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let (_, consumerKey) = try await keys(fleetd, in: directory)
      try await fleetd.createTrip("ride", vehicle: nil, pickup: pickupPoint, dropoff: dropoffPoint)
      let arguments = [
        "ride-status", "--http-port", "\(fleetd.httpPort)", "--provider", "acme", "--key", consumerKey,
        // A loaded machine (the whole suite at once) may take seconds to answer.
        "--deadline", "30",
      ]

      let asked = try await ChildProcess.runFleet(arguments + ["--trip", "ride", "--ride-identifier", "b-7"])
      let (status, output, errors) = (asked.status, asked.output, asked.errors)
      #expect(status == 0, "fleet ride-status failed: \(errors)")
      let lines = output.split(separator: "\n")
      #expect(lines.count == 1)
      let ride = try RideStatusJSON.decode(Data(output.utf8))
      #expect(ride.phase == .received)
      #expect(ride.rideIdentifier == "b-7")
      #expect(ride.pickupLocation?.coordinate == pickupPoint)

      let unknown = try await ChildProcess.runFleet(arguments + ["--trip", "nope"])
      let (missing, nothing) = (unknown.status, unknown.output)
      #expect(missing != 0)
      #expect(nothing.isEmpty)
    }
  }
}
