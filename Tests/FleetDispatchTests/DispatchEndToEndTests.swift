import FleetAuth
import FleetCore
import FleetDispatch
import FleetGeometry
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// fleetd with its dispatcher on the Monaco graph, drivers simulated by `fleet drive` (the
/// Driver SDK) and riders booking with `fleet ride --follow` (the Consumer SDK): every ride
/// is completed, none is assigned twice, and a car that goes offline before the pickup has its
/// ride dispatched again.
@Suite("Dispatch end to end")
struct DispatchEndToEndTests {
  let rides: [(id: String, from: LatLng, to: LatLng)] = [
    ("ride-1", LatLng(latitude: 43.7384, longitude: 7.4246), LatLng(latitude: 43.7396, longitude: 7.4275)),
    ("ride-2", LatLng(latitude: 43.7330, longitude: 7.4250), LatLng(latitude: 43.7360, longitude: 7.4230)),
    ("ride-3", LatLng(latitude: 43.7389, longitude: 7.4224), LatLng(latitude: 43.7360, longitude: 7.4389)),
    ("ride-4", LatLng(latitude: 43.7295, longitude: 7.4284), LatLng(latitude: 43.7442, longitude: 7.4441)),
  ]

  func admin<T: Sendable>(
    _ fleetd: Fleetd,
    _ body: (
      Fleetkit_V1_Rides.Client<HTTP2ClientTransport.Posix>,
      Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>, Metadata
    ) async throws -> T
  ) async throws -> T {
    let token = try await fleetd.signer(role: .admin).token()
    return try await withGRPCClient(
      transport: .http2NIOPosix(
        target: .ipv4(address: "127.0.0.1", port: fleetd.grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), .init(wrapping: client), ["authorization": "Bearer \(token)"])
    }
  }

  func ride(_ fleetd: Fleetd, _ id: String) async throws -> Fleetkit_V1_Ride {
    try await admin(fleetd) { rides, _, metadata in
      var request = Fleetkit_V1_GetRideRequest()
      request.name = "providers/acme/rides/\(id)"
      return try await rides.getRide(request, metadata: metadata)
    }
  }

  @Test(.timeLimit(.minutes(10))) func drivenAndBookedRidesAllComplete() async throws {
    var dispatch = DispatchConfiguration()
    dispatch.interval = .milliseconds(500)
    try await Fleetd.with(graph: try await monacoGraph(), dispatch: dispatch) { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-dispatch-\(UUID().uuidString)"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let key = directory + "/server.json"
      try await fleetd.key(role: .server).encoded().write(to: URL(fileURLWithPath: key))

      // A wait that fails says what each process printed: the drivers' and the riders' view.
      var started: [ChildProcess] = []
      do {
        let drive = try ChildProcess.startFleet([
          "drive", "--grpc-port", "\(fleetd.grpcPort)", "--provider", "acme", "--key", key, "--vehicle", "cab",
          "--vehicles", "3", "--graph", fleetd.graph!, "--speedup", "20", "--interval", "5",
        ])
        defer { drive.stop() }
        started.append(drive)
        for i in 1...3 {
          try await eventually("cab-\(i) online") { (try? await fleetd.vehicle("cab-\(i)").vehicleState) == .online }
        }

        // A car parked right at the first pickup, online, with no driver app behind it: the
        // dispatcher gives it the first ride; it then goes offline before the pickup.
        try await admin(fleetd) { _, vehicles, metadata in
          var request = Maps_Fleetengine_V1_CreateVehicleRequest()
          request.parent = "providers/acme"
          request.vehicleID = "parked"
          request.vehicle.vehicleState = .online
          request.vehicle.supportedTripTypes = [.exclusive]
          request.vehicle.maximumCapacity = 4
          request.vehicle.vehicleType.category = .auto
          request.vehicle.lastLocation.location.latitude = rides[0].from.latitude
          request.vehicle.lastLocation.location.longitude = rides[0].from.longitude
          _ = try await vehicles.createVehicle(request, metadata: metadata)
        }
        func book(_ ride: (id: String, from: LatLng, to: LatLng)) throws -> ChildProcess {
          try ChildProcess.startFleet([
            "ride", "--grpc-port", "\(fleetd.grpcPort)", "--provider", "acme", "--key", key, "--ride", ride.id,
            "--from", "\(ride.from.latitude),\(ride.from.longitude)", "--to",
            "\(ride.to.latitude),\(ride.to.longitude)",
            "--follow", "--interval", "0.5",
          ])
        }
        let first = try book(rides[0])
        started.append(first)
        defer { first.stop() }
        try await eventually("the parked car assigned") { (try? await ride(fleetd, "ride-1").vehicleID) == "parked" }
        // `fleet ride --follow` polls: the car goes offline only once it has shown the assignment,
        // which a slow poll could otherwise miss (it did once, on a freshly built clone).
        try await eventually("the follower shows the parked car") {
          first.lines.contains { $0.contains("ASSIGNED to vehicle parked") }
        }
        try await admin(fleetd) { _, vehicles, metadata in
          var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
          request.name = "providers/acme/vehicles/parked"
          request.vehicle.vehicleState = .offline
          request.updateMask.paths = ["vehicle_state"]
          _ = try await vehicles.updateVehicle(request, metadata: metadata)
        }
        let others = try rides.dropFirst().map(book)
        started += others
        defer { others.forEach { $0.stop() } }
        let all = [first] + others
        try await eventually("every fleet ride exits", timeout: .seconds(400)) { all.allSatisfy { !$0.isRunning } }

        for (process, ride) in zip(all, rides) {
          #expect(process.terminationStatus == 0, "\(ride.id): \(process.text)")
          // Booked WAITING, then assigned (the ride's and the trip's lines interleave as they come).
          let waiting = process.lines.firstIndex { $0.contains("ride \(ride.id): WAITING") }
          let assigned = process.lines.firstIndex { $0.contains("ride \(ride.id): ASSIGNED to vehicle") }
          #expect(waiting != nil && assigned != nil && waiting! < assigned!, "\(process.text)")
          #expect(process.lines.contains { $0.contains("trip \(ride.id): ENROUTE_TO_PICKUP") }, "\(process.text)")
          #expect(process.lines.last?.contains("ride \(ride.id): COMPLETED by vehicle cab-") == true, "\(process.text)")
          let final = try await self.ride(fleetd, ride.id)
          #expect(final.state == .completed)
        }
        // The first ride went to the parked car, then to a driven one.
        #expect(first.lines.contains { $0.contains("ASSIGNED to vehicle parked") })
        #expect(try await fleetd.vehicle("parked").currentTrips.isEmpty)
        // Each ride was assigned once, the first twice: five assignments, one re-dispatch.
        let (metrics, _) = try await URLSession.shared.data(from: fleetd.httpURL.appendingPathComponent("metrics"))
        let text = String(decoding: metrics, as: UTF8.self)
        #expect(text.contains("fleetd_dispatch_assignments_total 5"), "\(text)")
        #expect(text.contains("fleetd_dispatch_redispatches_total 1"))
        // Every cab was within the dispatch radius of every pickup.
        #expect(text.contains("fleetd_dispatch_widened_assignments_total 0"))
        // No car ever had two riders' trips at once: each vehicle's trip lines come in blocks.
        for cab in 1...3 {
          let trips = drive.lines.filter { $0.contains("vehicle cab-\(cab): trip ") }.map {
            String($0.split(separator: " ")[4].dropLast())
          }
          let blocks = trips.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
          #expect(Set(blocks).count == blocks.count, "cab-\(cab): \(trips)")
        }
        let served = Set(
          drive.lines.filter { $0.contains(": COMPLETE") }.map { String($0.split(separator: " ")[4].dropLast()) })
        #expect(served == Set(rides.map(\.id)))
      } catch {
        let printed = started.map { "--- " + $0.lines.suffix(60).joined(separator: "\n") }
        Issue.record(Comment(rawValue: "\(error)\n" + printed.joined(separator: "\n")))
        throw error
      }
    }
  }

  @Test func fleetRideTakesSouthernLatitudesAndSaysWhenFleetdDoesNotDispatch() async throws {
    try await Fleetd.with { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-ride-\(UUID().uuidString)"
      defer { try? FileManager.default.removeItem(atPath: directory) }
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let key = directory + "/server.json"
      try await fleetd.key(role: .server).encoded().write(to: URL(fileURLWithPath: key))
      let status = try await ChildProcess.runFleet([
        "ride", "--grpc-port", "\(fleetd.grpcPort)", "--provider", "acme", "--key", key,
        "--from", "-33.8688,151.2093", "--to", "-33.8568,151.2153",
      ]).status
      // Not a usage error (64): the arguments parsed, and fleetd answered UNIMPLEMENTED.
      #expect(status == 1)
    }
  }
}
