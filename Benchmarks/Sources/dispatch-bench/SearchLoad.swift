import ArgumentParser
import BenchSupport
import FleetAuth
import FleetCore
import FleetGeometry
import FleetProto
import FleetRouting
import FleetSimulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import SwiftProtobuf
import Synchronization

/// SearchVehicles against a running fleetd while part of the fleet reports its position: each
/// order_by at a fixed rate (open loop: latency counts from when a search was due, so a slow
/// server cannot hide its queue), with GetVehicle at the same rate as the floor of a gRPC call.
/// The calls go through `OpenLoopClient`, so that the generator takes little of the cores it
/// shares with fleetd.
struct SearchLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "search")

  @Option var host = "127.0.0.1"
  @Option(help: "fleetd gRPC port.") var grpcPort = 50161
  @Option(help: "A server key for the provider.") var key: String
  @Option(help: "The provider searched.") var provider = "bench"
  @Flag(
    help:
      "Search the provider's fleet as it is (made and reporting elsewhere, e.g. by `fleet simulate`): create no vehicles and send no reports; --vehicles and --vehicle-prefix name the vehicles GetVehicle reads (PREFIX1 … PREFIXN)."
  )
  var existing = false
  @Option(help: "The vehicles' ID prefix.") var vehiclePrefix = "v"
  @Option(help: "The road graph fleetd serves (to place vehicles and pickups on roads).") var graph: String
  @Option var vehicles = 5000
  @Option(help: "How many of the vehicles report their position.") var reporting = 2000
  @Option(help: "Seconds between one vehicle's reports.") var reportEvery = 5.0
  @Option(help: "Searches per second.") var rate = 200.0
  @Option(help: "Seconds per order_by.") var duration = 20.0
  @Option var connections = 4
  @Option var radius: Int32 = 3000
  @Option var count: Int32 = 10
  @Option(
    help:
      "Unix time to begin at: this tool's own setup (loading the graph, placing points) is done first and then it waits, so that the setup's CPU does not land on the load measured."
  )
  var startAt: Double?

  func validate() throws {
    guard existing || provider == "bench" else {
      throw ValidationError("the vehicles this benchmark makes belong to 'bench': another --provider needs --existing")
    }
  }

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    let signer = try TokenSigner(key: try ServiceAccountKey.load(path: key))
    let token = try signer.token()
    let metadata: Metadata = ["authorization": "Bearer \(token)"]
    var random = Seeded(42)
    // The fleet as it is needs no places of its own.
    let positions = existing ? [] : roadPoints(routing, count: vehicles, random: &random)
    let moved = existing ? [] : nudged(Array(positions.prefix(reporting)), routing: routing, random: &random)
    let pickups = roadPoints(routing, count: 2000, random: &random)
    let dropoffs = roadPoints(routing, count: 2000, random: &random)
    if let startAt {
      let wait = startAt - Date().timeIntervalSince1970
      guard wait > 0 else { throw ValidationError("--start-at is \(Int(-wait)) s past: the setup took longer") }
      try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
    }

    let clients = try (0..<connections).map { _ in
      GRPCClient(
        transport: try HTTP2ClientTransport.Posix(
          target: .ipv4(address: host, port: grpcPort), transportSecurity: .plaintext))
    }
    try await withThrowingDiscardingTaskGroup { group in
      for client in clients { group.addTask { try await client.runConnections() } }
      defer { for client in clients { client.beginGracefulShutdown() } }
      let vehicleService = clients.map { Maps_Fleetengine_V1_VehicleService.Client(wrapping: $0) }

      if !existing {
        print("creating \(vehicles) online vehicles on the graph's roads…")
        try await createOnlineVehicles(positions, service: vehicleService[0], metadata: metadata)
      }

      let orders: [(String, Maps_Fleetengine_V1_SearchVehiclesRequest.VehicleMatchOrder?)] = [
        ("GetVehicle (gRPC floor)", nil), ("PICKUP_POINT_STRAIGHT_DISTANCE", .pickupPointStraightDistance),
        ("PICKUP_POINT_ETA", .pickupPointEta), ("PICKUP_POINT_DISTANCE", .pickupPointDistance),
        ("DROPOFF_POINT_ETA", .dropoffPointEta), ("COST", .cost),
      ]
      // What each search returns, checked once with grpc-swift's client before the load.
      var matchesPerSearch: [String: Double] = [:]
      for (label, order) in orders {
        guard let order else { continue }
        var matched = 0
        for i in 0..<20 {
          matched += try await vehicleService[0].searchVehicles(search(order, i, pickups, dropoffs), metadata: metadata)
            .matches.count
        }
        matchesPerSearch[label] = Double(matched) / 20
      }

      // Every call of the run, due at fixed times: the reports spread evenly over the whole run,
      // then a warm-up of searches, then each order in turn.
      let warmUp = 5.0
      let runSeconds = warmUp + duration * Double(orders.count) + 1
      let start = NIODeadline.now() + .seconds(1)
      func due(_ seconds: Double) -> NIODeadline { start + .microseconds(Int64(seconds * 1_000_000)) }
      var calls =
        existing
        ? []
        : try reportCalls(
          positions: Array(positions.prefix(reporting)), moved: moved, every: reportEvery, for: runSeconds, due: due)
      let updateRate = existing ? 0 : Double(reporting) / reportEvery
      let searchPath = "/maps.fleetengine.v1.VehicleService/SearchVehicles"
      for i in 0..<Int(rate * warmUp) {
        calls.append(
          .init(
            due: due(Double(i) / rate), path: searchPath,
            body: grpcMessage(try search(.pickupPointEta, i, pickups, dropoffs).serializedBytes()), label: "warm-up"))
      }
      for (phase, (label, order)) in orders.enumerated() {
        let begin = warmUp + Double(phase) * duration
        for i in 0..<Int(rate * duration) {
          let body: ByteBuffer
          let path: String
          if let order {
            body = grpcMessage(try search(order, i, pickups, dropoffs).serializedBytes())
            path = searchPath
          } else {
            var request = Maps_Fleetengine_V1_GetVehicleRequest()
            request.name = "providers/\(provider)/vehicles/\(vehiclePrefix)\(i % vehicles + (existing ? 1 : 0))"
            body = grpcMessage(try request.serializedBytes())
            path = "/maps.fleetengine.v1.VehicleService/GetVehicle"
          }
          calls.append(.init(due: due(begin + Double(i) / rate), path: path, body: body, label: label))
        }
      }
      print(
        existing
          ? "the fleet as it is: \(Int(warmUp)) s of searches to warm up"
          : "\(reporting) of them report every \(reportEvery) s (\(Int(updateRate)) updates/s); \(Int(warmUp)) s of searches to warm up; the generator is a lean HTTP/2 client sharing the 2 cores"
      )
      let client = try await OpenLoopClient(
        host: host, port: grpcPort, authorization: "Bearer \(token)", connections: connections)
      // This client's own CPU over the calls, reported apart from the server's.
      let usageBefore = ProcessUsage.read()
      let started = ContinuousClock.now
      let outcomes = try await client.run(calls)
      let elapsed = ContinuousClock.now - started
      let usageAfter = ProcessUsage.read()
      await client.close()
      print()
      print(
        "| \(Int(rate)) calls/s for \(Int(duration)) s, count \(count), radius \(radius) m | calls/s | p50 ms | p90 ms | p99 ms | max ms | errors | matches/search |"
      )
      print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
      for (label, _) in orders {
        let outcome = outcomes[label] ?? .init()
        let matched = matchesPerSearch[label].map { String(format: "%.1f", $0) } ?? ""
        print(
          "| \(label) | \(String(format: "%.0f", Double(outcome.latencies.count) / duration)) | \(milliseconds(outcome.latencies, 0.5)) | \(milliseconds(outcome.latencies, 0.9)) | \(milliseconds(outcome.latencies, 0.99)) | \(milliseconds(outcome.latencies, 1)) | \(outcome.errors) | \(matched) |"
        )
      }
      let slow = orders.compactMap { label, _ -> String? in
        let times = outcomes[label]?.slowAnswers ?? []
        guard !times.isEmpty else { return nil }
        return "\(label) \(times.count): \(Self.bySecond(times))"
      }
      if !slow.isEmpty {
        print()
        print("answers slower than \(OpenLoopClient.slowMilliseconds) ms, by the second they came (UTC):")
        for line in slow { print("  \(line)") }
        let parts = orders.flatMap { outcomes[$0.0]?.slowParts ?? [] }
        func spread(_ values: [Duration]) -> String {
          "median \(milliseconds(values, 0.5)), max \(milliseconds(values, 1)) ms"
        }
        print(
          "  where their time went: queued in this client \(spread(parts.map(\.queued))); sent to the answer's first frame \(spread(parts.map(\.answered))); first frame to the end \(spread(parts.map(\.rest)))"
        )
      }
      if let usageBefore, let usageAfter {
        let seconds = elapsed.seconds
        print()
        print(
          String(
            format: "this client: %.2f cores over the %.0f s of calls (its own CPU, apart from the server's)",
            (usageAfter.cpuSeconds - usageBefore.cpuSeconds) / max(seconds, 0.001), seconds))
      }
      let updates = outcomes["update"] ?? .init()
      print()
      print(
        "location updates during the run: \(updates.latencies.count) acknowledged (\(String(format: "%.0f", Double(updates.latencies.count) / runSeconds))/s), \(updates.errors) errors, p50 \(milliseconds(updates.latencies, 0.5)) ms, p99 \(milliseconds(updates.latencies, 0.99)) ms"
      )
    }
  }

  /// "HH:MM:SS ×n" for each second in which answers came, in order.
  static func bySecond(_ times: [Date]) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    var counts: [(String, Int)] = []
    for time in times.sorted() {
      let c = calendar.dateComponents([.hour, .minute, .second], from: time)
      let second = String(format: "%02d:%02d:%02d", c.hour!, c.minute!, c.second!)
      if counts.last?.0 == second { counts[counts.count - 1].1 += 1 } else { counts.append((second, 1)) }
    }
    return counts.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ")
  }

  func search(
    _ order: Maps_Fleetengine_V1_SearchVehiclesRequest.VehicleMatchOrder, _ i: Int, _ pickups: [LatLng],
    _ dropoffs: [LatLng]
  ) -> Maps_Fleetengine_V1_SearchVehiclesRequest {
    var request = Maps_Fleetengine_V1_SearchVehiclesRequest()
    request.parent = "providers/\(provider)"
    let pickup = pickups[i % pickups.count]
    let dropoff = dropoffs[i % dropoffs.count]
    request.pickupPoint.point.latitude = pickup.latitude
    request.pickupPoint.point.longitude = pickup.longitude
    request.dropoffPoint.point.latitude = dropoff.latitude
    request.dropoffPoint.point.longitude = dropoff.longitude
    request.pickupRadiusMeters = radius
    request.count = count
    request.minimumCapacity = 1
    request.tripTypes = [.exclusive]
    var auto = Maps_Fleetengine_V1_Vehicle.VehicleType()
    auto.category = .auto
    request.vehicleTypes = [auto]
    request.orderBy = order
    return request
  }
}
