import ArgumentParser
import FleetGRPCTransport
import FleetProto
import FleetSimulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf
import Synchronization

/// Messages about the size of fleetd's in a metro run: a report with the driver's route, its
/// acknowledgement with the vehicle's waypoints, a rider's push with the trip's route and stops.
enum FloorMessages {
  /// A 40-point route, encoded (about the length of a drive to a pickup).
  static let route: String = {
    var text = ""
    var previous = (lat: 0, lng: 0)
    func append(_ value: Int) {
      var v = value < 0 ? ~(value << 1) : value << 1
      while v >= 0x20 {
        text.unicodeScalars.append(UnicodeScalar(UInt8((0x20 | (v & 0x1f)) + 63)))
        v >>= 5
      }
      text.unicodeScalars.append(UnicodeScalar(UInt8(v + 63)))
    }
    for i in 0..<40 {
      let point = (lat: Int((-34.92 + Double(i) * 0.0007) * 1e5), lng: Int((138.60 + Double(i % 7) * 0.0004) * 1e5))
      append(point.lat - previous.lat)
      append(point.lng - previous.lng)
      previous = point
    }
    return text
  }()

  static let eta = Google_Protobuf_Timestamp(date: Date())

  static let waypoints: [Maps_Fleetengine_V1_Waypoint] = (0..<2).map { i in
    var waypoint = Maps_Fleetengine_V1_Waypoint()
    waypoint.latLng = .with {
      $0.latitude = -34.92 + Double(i) * 0.01
      $0.longitude = 138.60
    }
    waypoint.eta = eta
    return waypoint
  }

  static func tripWaypoints(trip: String) -> [Maps_Fleetengine_V1_TripWaypoint] {
    [Maps_Fleetengine_V1_WaypointType.pickupWaypointType, .dropOffWaypointType].enumerated().map { i, type in
      var waypoint = Maps_Fleetengine_V1_TripWaypoint()
      waypoint.location.point = .with {
        $0.latitude = -34.92 + Double(i) * 0.01
        $0.longitude = 138.60
      }
      waypoint.tripID = trip
      waypoint.waypointType = type
      return waypoint
    }
  }

  /// What an acknowledgement carries with read_mask `waypoints`.
  static let acknowledgedVehicle: Maps_Fleetengine_V1_Vehicle = {
    var vehicle = Maps_Fleetengine_V1_Vehicle()
    vehicle.waypoints = tripWaypoints(trip: "ride-0")
    return vehicle
  }()

  /// A rider's view of a trip after a report: the position, the route, the stops and ETAs.
  static func push(trip name: String, vehicle: String, location: Maps_Fleetengine_V1_VehicleLocation)
    -> Maps_Fleetengine_V1_Trip
  {
    var trip = Maps_Fleetengine_V1_Trip()
    trip.name = name
    trip.vehicleID = vehicle
    trip.tripStatus = .enrouteToPickup
    trip.tripType = .exclusive
    trip.lastLocation = location
    trip.currentRouteSegment = route
    trip.remainingWaypoints = tripWaypoints(trip: name)
    trip.remainingWaypoints[0].encodedPathToWaypoint = route
    trip.remainingDistanceMeters = .init(2400)
    trip.etaToFirstWaypoint = eta
    trip.remainingTimeToFirstWaypoint = .with { $0.seconds = 300 }
    trip.remainingWaypointsVersion = eta
    return trip
  }
}

/// Streams watching each vehicle's trip: a report is pushed to them at once.
final class FloorWatchers: Sendable {
  typealias Push = AsyncStream<Maps_Fleetengine_V1_VehicleLocation>.Continuation
  let byVehicle = Mutex<[String: [UInt64: Push]]>([:])
  let nextID = Atomic<UInt64>(0)

  func add(_ vehicle: String, _ push: Push) -> UInt64 {
    let id = nextID.add(1, ordering: .relaxed).newValue
    byVehicle.withLock { $0[vehicle, default: [:]][id] = push }
    return id
  }

  func remove(_ vehicle: String, _ id: UInt64) {
    byVehicle.withLock { $0[vehicle]?[id] = nil }
  }

  func push(_ vehicle: String, _ location: Maps_Fleetengine_V1_VehicleLocation) {
    for push in byVehicle.withLock({ $0[vehicle].map { Array($0.values) } ?? [] }) { push.yield(location) }
  }
}

/// The report stream, answering each message at once, each report pushed to its watchers.
struct FloorVehicleUpdates: Fleetkit_V1_VehicleUpdates.SimpleServiceProtocol {
  let watchers: FloorWatchers

  func reportLocations(
    request: RPCAsyncSequence<Fleetkit_V1_ReportLocationsRequest, any Error>,
    response: RPCWriter<Fleetkit_V1_ReportLocationsResponse>, context: ServerContext
  ) async throws {
    var first = true
    for try await message in request {
      var answer = Fleetkit_V1_ReportLocationsResponse()
      if first { answer.window = 64 }
      first = false
      for report in message.reports {
        var acknowledgement = Fleetkit_V1_Acknowledgement()
        acknowledgement.sequence = report.sequence
        if message.returnVehicles { acknowledgement.vehicle = FloorMessages.acknowledgedVehicle }
        answer.acknowledged.append(acknowledgement)
        watchers.push(report.name, report.vehicle.lastLocation)
      }
      try await response.write(answer)
    }
  }
}

/// WatchTrip: trip `providers/P/trips/T` follows vehicle `providers/P/vehicles/T`; a reader that
/// falls behind gets the newest state, as fleetd's.
struct FloorTripUpdates: Fleetkit_V1_TripUpdates.SimpleServiceProtocol {
  let watchers: FloorWatchers

  func watchTrip(
    request: Fleetkit_V1_WatchTripRequest, response: RPCWriter<Maps_Fleetengine_V1_Trip>, context: ServerContext
  ) async throws {
    let vehicle = request.name.replacingOccurrences(of: "/trips/", with: "/vehicles/")
    let vehicleID = String(vehicle.split(separator: "/").last ?? "")
    let (locations, push) = AsyncStream.makeStream(
      of: Maps_Fleetengine_V1_VehicleLocation.self, bufferingPolicy: .bufferingNewest(1))
    let id = watchers.add(vehicle, push)
    defer { watchers.remove(vehicle, id) }
    try await response.write(
      FloorMessages.push(trip: request.name, vehicle: vehicleID, location: Maps_Fleetengine_V1_VehicleLocation()))
    for await location in locations {
      try await response.write(FloorMessages.push(trip: request.name, vehicle: vehicleID, location: location))
    }
  }
}

/// A metro's message mix against a server: vehicles reporting over the report stream every
/// `--interval` seconds, riders watching their trips (a push per report), and SearchVehicles at
/// a steady rate; `--scale` multiplies the reports' rate, the watchers and the searches. Prints
/// each kind's latency percentiles and the CPU of this process and of the server
/// (`--server-pid`).
struct MetroLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "metro", abstract: "A metro's report, push and search mix; latencies and both processes' CPU.")

  @Option(help: "gRPC port of the server.") var grpcPort = 50171
  @Option(help: "The server's process ID, for its CPU.") var serverPid: Int32?
  @Option(help: "Vehicles reporting.") var vehicles = 10_000
  @Option(help: "Vehicles relayed on one report stream, as `fleet simulate` does.") var vehiclesPerStream = 1000
  @Option(help: "Seconds between a vehicle's reports.") var interval = 5.0
  @Option(help: "Streams watching trips, two per vehicle from the first.") var watchers = 9_000
  @Option(help: "SearchVehicles calls a second.") var searches = 200.0
  @Option(
    help:
      "Multiplies the report rate (the interval shortens), watchers and searches, as dev/metro-bench.sh's headroom run."
  )
  var scale = 1.0
  @Option(
    help:
      "The client transport: `nio` (grpc-swift's own HTTP/2 transport) or `frames` (FleetGRPCTransport's FrameClientTransport)."
  )
  var clientTransport = "nio"
  @Option(help: "Seconds to let every stream open before measuring.") var warmUp = 20.0
  @Option(help: "Seconds measured.") var duration = 60.0
  @Option(help: "Label of the printed row.") var label = "grpc-floor"

  func run() async throws {
    let watcherCount = watcherTotal
    let stats = MetroStats()
    switch clientTransport {
    case "nio":
      try await run(stats, watcherCount) {
        GRPCClient(
          transport: try HTTP2ClientTransport.Posix(
            target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext))
      }
    case "frames":
      try await run(stats, watcherCount) {
        GRPCClient(transport: FrameClientTransport(host: "127.0.0.1", port: grpcPort))
      }
    default:
      throw ValidationError("--client-transport takes nio or frames, not '\(clientTransport)'")
    }
  }

  func run<Transport: ClientTransport>(
    _ stats: MetroStats, _ watcherCount: Int, _ connect: () throws -> GRPCClient<Transport>
  ) async throws {
    // As `fleet simulate`: the reports on two connections, watchers 100 to a connection,
    // searches on their own.
    let reportClients = try (0..<2).map { _ in try connect() }
    let watchClients = try (0..<max(1, (watcherCount + 99) / 100)).map { _ in try connect() }
    let searchClient = try connect()
    let clients = reportClients + watchClients + [searchClient]
    let started = ContinuousClock.now
    do {
      try await measure(clients, reportClients, watchClients, searchClient, stats, started: started)
    } catch is Finished {}
  }

  /// Thrown when the window is measured and printed, to end every stream.
  struct Finished: Error {}

  func measure<Transport: ClientTransport>(
    _ clients: [GRPCClient<Transport>], _ reportClients: [GRPCClient<Transport>],
    _ watchClients: [GRPCClient<Transport>], _ searchClient: GRPCClient<Transport>,
    _ stats: MetroStats, started: ContinuousClock.Instant
  ) async throws {
    let vehicleCount = vehicles
    let watcherCount = watcherTotal
    let searchRate = searches * scale
    let measureFrom = started + .milliseconds(Int64(warmUp * 1000))
    let measureUntil = measureFrom + .milliseconds(Int64(duration * 1000))
    try await withThrowingDiscardingTaskGroup { group in
      for client in clients { group.addTask { try await client.runConnections() } }
      let streams = (vehicleCount + vehiclesPerStream - 1) / vehiclesPerStream
      for stream in 0..<streams {
        let client = reportClients[stream % reportClients.count]
        let indexes = Array(stride(from: stream, to: vehicleCount, by: streams))
        group.addTask { await reportStream(indexes, client, stats, from: measureFrom, until: measureUntil) }
      }
      for j in 0..<watcherCount {
        let client = watchClients[j / 100]
        group.addTask { await watch(vehicle: j / 2, client, stats, from: measureFrom, until: measureUntil) }
      }
      group.addTask { await searchLoop(searchRate, searchClient, stats, from: measureFrom, until: measureUntil) }
      group.addTask {
        try await Task.sleep(until: measureFrom)
        let cpu = (own: cpuSeconds(nil), server: serverPid.map { cpuSeconds($0) })
        try await Task.sleep(until: measureUntil)
        let seconds = duration
        let own = (cpuSeconds(nil) - cpu.own) / seconds
        let server = serverPid.map { (cpuSeconds($0) - cpu.server!) / seconds }
        let memory = serverPid.map { (ProcessUsage.read(pid: $0)?.residentBytes ?? 0) >> 20 }
        print(stats.row(label: label, scale: scale, seconds: seconds, server: server, memory: memory, client: own))
        for client in clients { client.beginGracefulShutdown() }
        throw Finished()
      }
    }
  }

  var watcherTotal: Int { Int(Double(watchers) * scale) }

  /// A process's CPU seconds so far (`pid` nil: this one).
  func cpuSeconds(_ pid: Int32?) -> Double { ProcessUsage.read(pid: pid)?.cpuSeconds ?? 0 }

  func vehicleName(_ i: Int) -> String { "providers/floor/vehicles/v-\(i)" }

  /// One report stream carrying `vehiclesPerStream` vehicles, as `fleet simulate` relays its
  /// drivers: each vehicle reports every interval, the vehicles' phases spread evenly over it, and
  /// the reports due at each 10 ms tick go out together in one message; each acknowledgement is
  /// timed from its report's send.
  func reportStream<Transport: ClientTransport>(
    _ vehicleIndexes: [Int], _ client: GRPCClient<Transport>, _ stats: MetroStats,
    from: ContinuousClock.Instant, until: ContinuousClock.Instant
  ) async {
    let client = Fleetkit_V1_VehicleUpdates.Client(wrapping: client)
    let sent = Mutex<[UInt64: ContinuousClock.Instant]>([:])
    let period = Duration.milliseconds(Int64(interval / scale * 1000))
    let count = vehicleIndexes.count
    let request = StreamingClientRequest<Fleetkit_V1_ReportLocationsRequest> { writer in
      let start = ContinuousClock.now
      var due = (0..<count).map { start + period * (Double($0) / Double(count)) }
      var cursor = 0
      var sequence: UInt64 = 0
      var tick = start
      while !Task.isCancelled {
        tick += .milliseconds(10)
        try await Task.sleep(until: tick)
        let now = ContinuousClock.now
        var message = Fleetkit_V1_ReportLocationsRequest()
        if sequence == 0 {
          message.returnVehicles = true
          message.readMask.paths = ["waypoints"]
        }
        while due[cursor] <= now {
          sequence += 1
          message.reports.append(report(vehicleIndexes[cursor], sequence: sequence))
          due[cursor] += period
          cursor = (cursor + 1) % count
        }
        guard !message.reports.isEmpty else { continue }
        let first = message.reports[0].sequence
        sent.withLock { times in for s in first...sequence { times[s] = now } }
        try await writer.write(message)
      }
    }
    _ = try? await client.reportLocations(request: request) { response in
      for try await answer in response.messages {
        let now = ContinuousClock.now
        for acknowledgement in answer.acknowledged {
          guard let at = sent.withLock({ $0.removeValue(forKey: acknowledgement.sequence) }) else { continue }
          if at >= from && at < until { stats.record(.report, (now - at).seconds) }
        }
      }
    }
  }

  /// A driver's report: its position now, its route to the next stop.
  func report(_ i: Int, sequence: UInt64) -> Fleetkit_V1_LocationReport {
    var report = Fleetkit_V1_LocationReport()
    report.sequence = sequence
    report.name = vehicleName(i)
    report.vehicle.lastLocation.location = .with {
      $0.latitude = -34.92 + Double(i % 100) * 0.001
      $0.longitude = 138.60 + Double(i / 100) * 0.001
    }
    report.vehicle.lastLocation.updateTime = .init(date: Date())
    report.vehicle.lastLocation.speed = .init(11)
    report.vehicle.currentRouteSegment = FloorMessages.route
    report.vehicle.remainingDistanceMeters = .init(2400)
    report.vehicle.remainingTimeSeconds = .init(300)
    report.updateMask.paths = [
      "last_location", "current_route_segment", "remaining_distance_meters", "remaining_time_seconds",
    ]
    return report
  }

  /// One rider's stream on vehicle `vehicle`'s trip; each push timed from its report's send.
  func watch<Transport: ClientTransport>(
    vehicle: Int, _ client: GRPCClient<Transport>, _ stats: MetroStats,
    from: ContinuousClock.Instant, until: ContinuousClock.Instant
  ) async {
    var request = Fleetkit_V1_WatchTripRequest()
    request.name = "providers/floor/trips/v-\(vehicle)"
    request.view = .journeySharingV1S
    request.routeFormatType = .encodedPolylineType
    _ = try? await Fleetkit_V1_TripUpdates.Client(wrapping: client).watchTrip(request) { response in
      for try await trip in response.messages {
        guard trip.lastLocation.hasUpdateTime else { continue }
        let now = ContinuousClock.now
        guard now >= from && now < until else { continue }
        stats.record(.push, Date().timeIntervalSince(trip.lastLocation.updateTime.date))
      }
    }
  }

  /// SearchVehicles at `rate` a second, open loop: a call starts on time however long the
  /// others take.
  func searchLoop<Transport: ClientTransport>(
    _ rate: Double, _ client: GRPCClient<Transport>, _ stats: MetroStats,
    from: ContinuousClock.Instant, until: ContinuousClock.Instant
  ) async {
    guard rate > 0 else { return }
    let vehicles = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
    var request = Maps_Fleetengine_V1_SearchVehiclesRequest()
    request.parent = "providers/floor"
    request.pickupPoint.point = .with {
      $0.latitude = -34.92
      $0.longitude = 138.60
    }
    request.pickupRadiusMeters = 3000
    request.count = 10
    request.minimumCapacity = 1
    request.tripTypes = [.exclusive]
    request.orderBy = .pickupPointEta
    let search = request
    let gap = Duration.seconds(1 / rate)
    await withDiscardingTaskGroup { group in
      var next = ContinuousClock.now
      while ContinuousClock.now < until {
        try? await Task.sleep(until: next)
        next += gap
        group.addTask {
          let start = ContinuousClock.now
          guard (try? await vehicles.searchVehicles(search)) != nil else { return }
          if start >= from && start < until { stats.record(.search, (ContinuousClock.now - start).seconds) }
        }
      }
    }
  }
}

/// Latencies by kind, over the measured window.
final class MetroStats: Sendable {
  enum Kind: Int { case report, push, search }
  let samples = Mutex<[[Double]]>([[], [], []])

  func record(_ kind: Kind, _ seconds: Double) { samples.withLock { $0[kind.rawValue].append(seconds) } }

  func row(label: String, scale: Double, seconds: Double, server: Double?, memory: Int?, client: Double) -> String {
    let all = samples.withLock { $0 }
    func cells(_ kind: Kind) -> String {
      let sorted = all[kind.rawValue].sorted()
      guard !sorted.isEmpty else { return "0 | - " }
      func at(_ q: Double) -> String {
        String(format: "%.1f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1000)
      }
      return String(format: "%.0f", Double(sorted.count) / seconds) + " | \(at(0.5)) / \(at(0.99))"
    }
    return
      "| \(label) | \(scale)× | \(cells(.report)) | \(cells(.push)) | \(cells(.search)) | \(server.map { String(format: "%.2f", $0) } ?? "-") | \(memory.map(String.init) ?? "-") | \(String(format: "%.2f", client)) |"
  }
}

extension Duration {
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
