import ArgumentParser
import FleetAuth
import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore

/// Simulated vehicles sending UpdateVehicle(last_location) over gRPC to a running fleetd, as the
/// Driver SDK does, as fast as each vehicle's previous update is acknowledged (closed loop).
/// Prints acknowledged updates per second and latency percentiles.
@main
struct FleetLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet-load", abstract: "Load generator: concurrent vehicles sending location updates to fleetd.")

  @Option(help: "fleetd gRPC address.") var host = "127.0.0.1"
  @Option(
    help:
      "fleetd gRPC port; repeat it for several instances: the connections go to them in turn, and each vehicle keeps to its connection's instance."
  )
  var grpcPort: [Int] = [50051]
  @Option(help: "Service-account key file (role server or admin).") var key: String
  @Option(help: "Concurrent simulated vehicles.") var vehicles = 200
  @Option(help: "HTTP/2 connections the vehicles share.") var connections = 4
  @Option(help: "Measured seconds.") var duration = 20.0
  @Option(help: "Unmeasured warm-up seconds.") var warmup = 3.0
  @Option(
    help:
      "update (UpdateVehicle with last_location, durable), get (GetVehicle, read-only baseline), stream (fleetkit.v1.VehicleUpdates, one stream per connection), batch (POST vehicles:reportLocations); for the Deliveries API, over grpc-swift's client: delivery-update (UpdateDeliveryVehicle with last_location), task-update (UpdateTask with attributes) or tracking (GetTaskTrackingInfo)."
  )
  var rpc = "update"
  @Option(help: "Deliveries API: closed-loop callers (default: one per vehicle).") var workers: Int?
  @Option(help: "stream and batch: the most reports per message or request.") var batch = 64
  @Option(help: "batch: fleetd's HTTP port.") var httpPort = 8080
  @Option(
    help: "raw (lean HTTP/2 frames on SwiftNIO; the default, so the cores go to fleetd) or grpc (grpc-swift's client).")
  var client = "raw"
  @Option(
    help:
      "Route queries (monaco.requests): each vehicle gets a trip over real roads and drives its route to the pickup (fleetd needs --graph)."
  )
  var requests: String?
  @Option(help: "Watch mode: this many WatchTrip streams over the vehicles' trips; measures update-to-watcher latency.")
  var watchers = 0
  @Option(help: "Watch mode: location updates per second, spread over the vehicles.") var rate = 200.0
  @Option(
    help:
      "Watch mode: the gRPC port the riders watch on (another instance than the drivers', to measure push across instances); default: the first --grpc-port."
  )
  var watchGrpcPort: Int?

  func run() async throws {
    let account = try ServiceAccountKey.load(path: key)
    let provider = account.projectID
    let metadata: Metadata = ["authorization": "Bearer \(try TokenSigner(key: account).token())"]
    let clients = try (0..<connections).map { c in
      GRPCClient(
        transport: try HTTP2ClientTransport.Posix(
          target: .ipv4(address: host, port: grpcPort[c % grpcPort.count]), transportSecurity: .plaintext))
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for client in clients { group.addTask { try await client.runConnections() } }
      defer { for client in clients { client.beginGracefulShutdown() } }

      var trips: MonacoTrips?
      if let requests {
        trips = try await MonacoTrips.setUp(
          count: vehicles, requests: requests, provider: provider, prefix: "load", clients: clients, metadata: metadata)
      }
      if watchers > 0, let trips {
        let watch = WatchLoad(
          host: host, port: watchGrpcPort ?? grpcPort[0], metadata: metadata, provider: provider, trips: trips,
          watchers: watchers, rate: rate,
          warmup: warmup, duration: duration)
        try await watch.run(updating: clients)
        for client in clients { client.beginGracefulShutdown() }
        try await group.waitForAll()
        return
      }
      if DeliveryLoad.rpcs.contains(rpc) {
        let load = DeliveryLoad(provider: provider, metadata: metadata, vehicles: vehicles, clients: clients)
        try await load.setUp()
        let clock = ContinuousClock()
        let measureFrom = clock.now + .seconds(warmup)
        report(
          try await load.run(
            rpc: rpc, workers: workers ?? vehicles, measureFrom: measureFrom, end: measureFrom + .seconds(duration)))
        for client in clients { client.beginGracefulShutdown() }
        try await group.waitForAll()
        return
      }
      // One vehicle per simulated driver; existing ones are reused.
      for i in 0..<vehicles where trips == nil {
        var create = Maps_Fleetengine_V1_CreateVehicleRequest()
        create.parent = "providers/\(provider)"
        create.vehicleID = "load-\(i)"
        create.vehicle.vehicleState = .online
        create.vehicle.supportedTripTypes = [.exclusive]
        create.vehicle.maximumCapacity = 4
        create.vehicle.vehicleType.category = .auto
        do {
          _ = try await Maps_Fleetengine_V1_VehicleService.Client(wrapping: clients[i % connections])
            .createVehicle(create, metadata: metadata)
        } catch let error as RPCError where error.code == .alreadyExists {}
      }

      if rpc == "stream" || rpc == "batch" {
        let clock = ContinuousClock()
        let measureFrom = clock.now + .seconds(warmup)
        let end = measureFrom + .seconds(duration)
        let load = ReportLoad(provider: provider, metadata: metadata, vehicles: vehicles, batch: batch, trips: trips)
        let results =
          rpc == "stream"
          ? try await load.streams(clients, measureFrom: measureFrom, end: end)
          : try await load.batches(
            httpPort: httpPort,
            authorization: metadata[stringValues: "authorization"].first(where: { _ in true }) ?? "",
            connections: connections, measureFrom: measureFrom, end: end)
        report(results)
        for client in clients { client.beginGracefulShutdown() }
        try await group.waitForAll()
        return
      }
      if client == "raw" {
        let measureFrom = NIODeadline.now() + .milliseconds(Int64(warmup * 1000))
        let end = measureFrom + .milliseconds(Int64(duration * 1000))
        let raw = RawGRPCLoad(
          host: host, ports: grpcPort,
          authorization: metadata[stringValues: "authorization"].first(where: { _ in true }) ?? "",
          provider: provider, vehicles: vehicles, connections: connections, rpc: rpc, trips: trips)
        report(try await raw.run(measureFrom: measureFrom, end: end))
        for client in clients { client.beginGracefulShutdown() }
        try await group.waitForAll()
        return
      }
      let clock = ContinuousClock()
      let start = clock.now
      let measureFrom = start + .seconds(warmup)
      let end = measureFrom + .seconds(duration)
      let results = try await withThrowingTaskGroup(of: VehicleResult.self) { drivers in
        for i in 0..<vehicles {
          let service = Maps_Fleetengine_V1_VehicleService.Client(wrapping: clients[i % connections])
          drivers.addTask {
            let name = "providers/\(provider)/vehicles/load-\(i)"
            return await VehicleResult.closedLoop(measureFrom: measureFrom, end: end) { [rpc] step in
              if rpc == "get" {
                _ = try await service.getVehicle(.with { $0.name = name }, metadata: metadata)
                return
              }
              var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
              request.name = name
              request.updateMask.paths = ["last_location"]
              request.vehicle.lastLocation.location.latitude =
                43.73 + (Double(i % 100) + step.truncatingRemainder(dividingBy: 100) / 100) / 10_000
              request.vehicle.lastLocation.location.longitude = 7.42 + Double(i / 100) / 10_000
              request.vehicle.lastLocation.updateTime = .init(date: Date())
              _ = try await service.updateVehicle(request, metadata: metadata)
            }
          }
        }
        return try await VehicleResult.combined(drivers)
      }
      report(results)
      for client in clients { client.beginGracefulShutdown() }
      try await group.waitForAll()
    }
  }

  func report(_ results: VehicleResult) {
    let sorted = results.latencies.sorted()
    func percentile(_ p: Double) -> String {
      guard !sorted.isEmpty else { return "-" }
      let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
      return String(
        format: "%.2f ms", Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000)
    }
    let client =
      rpc == "stream" || rpc == "batch"
      ? "batch \(batch)"
      : DeliveryLoad.rpcs.contains(rpc) ? "client: grpc, workers: \(workers ?? vehicles)" : "client: \(client)"
    print(
      "rpc: \(rpc)  \(client)  vehicles: \(vehicles)\(requests == nil ? "" : " on trips over Monaco roads")  connections: \(connections)  measured: \(duration) s (after \(warmup) s warm-up)"
    )
    print("acknowledged updates: \(sorted.count)  errors: \(results.errors)")
    print(String(format: "throughput: %.0f acknowledged updates/s", Double(sorted.count) / duration))
    print("latency: p50 \(percentile(0.50))  p90 \(percentile(0.90))  p99 \(percentile(0.99))  max \(percentile(1.0))")
  }
}

struct VehicleResult: Sendable {
  var latencies: [Duration] = []
  var errors = 0

  /// One caller's closed loop: `call(step)` again as soon as it answers, until `end`; the calls
  /// sent from `measureFrom` and answered by `end` are timed, the failed ones counted.
  static func closedLoop(
    measureFrom: ContinuousClock.Instant, end: ContinuousClock.Instant, _ call: (Double) async throws -> Void
  ) async -> VehicleResult {
    let clock = ContinuousClock()
    var result = VehicleResult()
    var step = 0.0
    while clock.now < end {
      step += 1
      let sent = clock.now
      do {
        try await call(step)
        if sent >= measureFrom && clock.now <= end { result.latencies.append(clock.now - sent) }
      } catch {
        if sent >= measureFrom { result.errors += 1 }
      }
    }
    return result
  }

  /// Every caller's results together.
  static func combined(_ results: ThrowingTaskGroup<VehicleResult, any Error>) async throws -> VehicleResult {
    var all = VehicleResult()
    for try await result in results {
      all.latencies += result.latencies
      all.errors += result.errors
    }
    return all
  }
}
