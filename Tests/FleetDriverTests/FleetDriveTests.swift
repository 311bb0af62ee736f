import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetProto
import FleetRouting
import FleetSimulator
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization
import Testing

final class Lines: Sendable {
  let value = Mutex<[String]>([])
  func append(_ line: String) { value.withLock { $0.append(line) } }
  var all: [String] { value.withLock { $0 } }
}

@Suite("fleet drive")
struct FleetDriveTests {
  /// Trips created through the API are driven end to end on the Driver SDK: the simulated
  /// driver goes online, drives to each waypoint over Monaco's roads and moves each trip
  /// through every status to COMPLETE, then goes offline.
  @Test func completesTripsCreatedThroughTheAPI() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let lines = try await drive(fleetd, trips: 2) { trips, metadata in
        _ = try await trips.createTrip(trip("first", stops: [(43.7370, 7.4250)]), metadata: metadata)
        try await eventually { try await status(of: "first", trips, metadata) == .complete }
        _ = try await trips.createTrip(trip("second", stops: []), metadata: metadata)
        try await eventually { try await status(of: "second", trips, metadata) == .complete }
      }
      #expect(try await fleetd.vehicle("cab").vehicleState == .offline)
      let first = lines.all.filter { $0.contains("trip first:") }.map { String($0.split(separator: " ")[4]) }
      #expect(
        first == [
          "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_INTERMEDIATE_DESTINATION",
          "ARRIVED_AT_INTERMEDIATE_DESTINATION", "ENROUTE_TO_DROPOFF", "COMPLETE",
        ], "\(lines.all)")
      let second = lines.all.filter { $0.contains("trip second:") }.map { String($0.split(separator: " ")[4]) }
      #expect(second == ["ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE"], "\(lines.all)")
      #expect(lines.all.first == "vehicle cab: created at 43.73000,7.42000")
      #expect(lines.all.last == "vehicle cab: OFFLINE")
      // The vehicle ended where the last trip dropped off, on the road.
      let last = try await fleetd.vehicle("cab").lastLocation.location
      #expect(
        LatLng(latitude: last.latitude, longitude: last.longitude).distance(
          to: LatLng(latitude: 43.7395, longitude: 7.4280)) < 60)
    }
  }

  /// A driver has a driver key, for its own vehicle: with it the simulator drives the trips
  /// assigned to that vehicle; a vehicle that does not exist yet it cannot create, and says so.
  @Test func drivesWithTheVehiclesOwnDriverKey() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let key = try await fleetd.key(role: .driver)
      let routing = try await sharedRoutingEngine(graph: try await monacoGraph())
      var missing = SimulatedDriver.Configuration(endpoint: fleetd.endpoint, providerID: "acme", vehicleID: "ghost")
      missing.start = LatLng(latitude: 43.7300, longitude: 7.4200)
      let refused = try SimulatedDriver(configuration: missing, key: key, routing: routing, log: { _ in })
      await #expect(throws: FleetError.self) { try await refused.run() }

      let admin = try await fleetd.signer(role: .admin).token()
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: fleetd.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let metadata: Metadata = ["authorization": "Bearer \(admin)"]
        try await fleetd.createVehicle("cab", at: LatLng(latitude: 43.7300, longitude: 7.4200))

        var configuration = SimulatedDriver.Configuration(
          endpoint: fleetd.endpoint, providerID: "acme", vehicleID: "cab")
        configuration.speedup = 100
        configuration.trips = 1
        let driver = try SimulatedDriver(configuration: configuration, key: key, routing: routing, log: { _ in })
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask { try await driver.run() }
          let trips = Maps_Fleetengine_V1_TripService.Client(wrapping: client)
          try await eventually { (try? await fleetd.vehicle("cab").vehicleState) == .online }
          _ = try await trips.createTrip(trip("only", stops: []), metadata: metadata)
          try await eventually { try await status(of: "only", trips, metadata) == .complete }
          try await group.waitForAll()
        }
      }
      #expect(try await fleetd.vehicle("cab").vehicleState == .offline)
    }
  }

  /// Riders cancel at any moment, also between the driver's app reading its plan and moving a
  /// trip on (fleetd then refuses the move): the driver reads the plan again and drives the
  /// next trip, never leaving an online car that nobody drives.
  @Test func keepsDrivingWhenTripsAreCanceledUnderIt() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let lines = Lines()
      try await drive(fleetd, lines: lines) { trips, metadata in
        // Cancels spread over a trip's whole drive, the moments of arrival included.
        for index in 0..<8 {
          _ = try await trips.createTrip(trip("canceled-\(index)", stops: []), metadata: metadata)
          try await Task.sleep(for: .milliseconds(Int.random(in: 0...2500)))
          var cancel = Maps_Fleetengine_V1_UpdateTripRequest()
          cancel.name = "providers/acme/trips/canceled-\(index)"
          cancel.trip.tripStatus = .canceled
          cancel.updateMask.paths = ["trip_status"]
          // A trip the driver already completed cannot be canceled, and need not be.
          _ = try? await trips.updateTrip(cancel, metadata: metadata)
        }
        _ = try await trips.createTrip(trip("last", stops: []), metadata: metadata)
        try await eventually("the last trip completed", timeout: .seconds(60)) {
          try await status(of: "last", trips, metadata) == .complete
        }
        // fleetd may have completed the trip before the driver heard so (an answer lost under
        // load is retried): the driver is stopped only once it has said so itself.
        try? await eventually("the driver saying the last trip is complete", timeout: .seconds(30)) {
          lines.all.contains { $0.hasPrefix("vehicle cab: trip last: COMPLETE") }
        }
      }
      #expect(lines.all.contains { $0.hasPrefix("vehicle cab: trip last: COMPLETE") }, "\(lines.all)")
    }
  }

  /// A simulated driver of "cab" (a server key, Monaco's roads, 100× speed, starting at
  /// 43.73,7.42) drives while `body` works on trips as the provider's backend, once the vehicle
  /// is online. With `trips`, the driver goes offline by itself after that many and is waited
  /// for; without, it is stopped when `body` returns. Returns the driver's lines.
  /// `lines`: where the driver's lines go (a test may read them while it drives).
  @discardableResult
  func drive(
    _ fleetd: Fleetd, trips completed: Int? = nil, lines: Lines = Lines(),
    _ body: (Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>, Metadata) async throws -> Void
  ) async throws -> Lines {
    var configuration = SimulatedDriver.Configuration(endpoint: fleetd.endpoint, providerID: "acme", vehicleID: "cab")
    configuration.speedup = 100
    configuration.trips = completed
    configuration.start = LatLng(latitude: 43.7300, longitude: 7.4200)
    let driver = try SimulatedDriver(
      configuration: configuration, key: try await fleetd.key(role: .server),
      routing: try await sharedRoutingEngine(graph: try await monacoGraph()), log: lines.append)
    let admin = try await fleetd.signer(role: .admin).token()
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await driver.run() }
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: fleetd.grpcPort), transportSecurity: .plaintext)
      ) { client in
        // The driver creates the vehicle first: until then it is not found.
        try await eventually { (try? await fleetd.vehicle("cab").vehicleState) == .online }
        try await body(Maps_Fleetengine_V1_TripService.Client(wrapping: client), ["authorization": "Bearer \(admin)"])
      }
      // A driver with trips to do stops by itself; one without is stopped (its end is no failure).
      if completed == nil { group.cancelAll() } else { try await group.waitForAll() }
    }
    return lines
  }

  func trip(_ id: String, stops: [(Double, Double)]) -> Maps_Fleetengine_V1_CreateTripRequest {
    var request = Maps_Fleetengine_V1_CreateTripRequest()
    request.parent = "providers/acme"
    request.tripID = id
    request.trip.tripType = .exclusive
    request.trip.vehicleID = "cab"
    request.trip.pickupPoint.point.latitude = 43.7350
    request.trip.pickupPoint.point.longitude = 7.4230
    request.trip.dropoffPoint.point.latitude = 43.7395
    request.trip.dropoffPoint.point.longitude = 7.4280
    request.trip.intermediateDestinations = stops.map { stop in
      var location = Maps_Fleetengine_V1_TerminalLocation()
      location.point.latitude = stop.0
      location.point.longitude = stop.1
      return location
    }
    return request
  }

  func status(
    of id: String, _ trips: Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>, _ metadata: Metadata
  ) async throws -> Maps_Fleetengine_V1_TripStatus {
    var request = Maps_Fleetengine_V1_GetTripRequest()
    request.name = "providers/acme/trips/\(id)"
    return try await trips.getTrip(request, metadata: metadata).tripStatus
  }
}
