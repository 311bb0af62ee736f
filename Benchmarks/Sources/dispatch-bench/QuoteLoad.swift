import ArgumentParser
import BenchSupport
import FleetAuth
import FleetCore
import FleetGeometry
import FleetProto
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import SwiftProtobuf

/// QuoteRide against a running fleetd (with --dispatch, a tariff file and zones) while every
/// vehicle reports its position: quotes at a fixed rate (open loop), then SearchVehicles by
/// PICKUP_POINT_ETA (the pickup-ETA part of a quote alone) and GetVehicle (the floor of a gRPC
/// call) at the same rate, in the same run.
struct QuoteLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "quote")

  @Option var host = "127.0.0.1"
  @Option(help: "fleetd gRPC port.") var grpcPort = 50161
  @Option(help: "A server key for the provider 'bench'.") var key: String
  @Option(help: "The road graph fleetd serves (to place vehicles and trips on roads).") var graph: String
  @Option(help: "Online vehicles, all reporting.") var vehicles = 1000
  @Option(help: "Seconds between one vehicle's reports.") var reportEvery = 5.0
  @Option(help: "Calls per second.") var rate = 200.0
  @Option(help: "Seconds per kind of call.") var duration = 20.0
  @Option var connections = 4

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    let token = try TokenSigner(key: try ServiceAccountKey.load(path: key)).token()
    let metadata: Metadata = ["authorization": "Bearer \(token)"]
    var random = Seeded(42)
    let positions = roadPoints(routing, count: vehicles, random: &random)
    let moved = nudged(positions, routing: routing, random: &random)
    let pickups = roadPoints(routing, count: 2000, random: &random)
    let dropoffs = roadPoints(routing, count: 2000, random: &random)

    let client = GRPCClient(
      transport: try HTTP2ClientTransport.Posix(
        target: .ipv4(address: host, port: grpcPort), transportSecurity: .plaintext))
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await client.runConnections() }
      defer { client.beginGracefulShutdown() }
      print("creating \(vehicles) online vehicles on Monaco's roads…")
      try await createOnlineVehicles(
        positions, service: Maps_Fleetengine_V1_VehicleService.Client(wrapping: client), metadata: metadata)
      // Once with grpc-swift's client before the load: what a quote answers.
      let sample = try await Fleetkit_V1_Rides.Client(wrapping: client).quoteRide(
        quote(0, pickups, dropoffs), metadata: metadata)
      print(
        "a quote answers \(sample.quotes.count) products: "
          + sample.quotes.map {
            "\($0.product) \($0.fare.units).\(String(format: "%02d", $0.fare.nanos / 10_000_000)) \($0.fare.currencyCode)\($0.hasPickupEta ? ", car in \(String(format: "%.1f", Double($0.pickupEta.seconds) + Double($0.pickupEta.nanos) / 1e9)) s" : "")"
          }
          .joined(separator: "; "))
    }

    let warmUp = 5.0
    let kinds: [(String, String)] = [
      ("QuoteRide", "/fleetkit.v1.Rides/QuoteRide"),
      ("SearchVehicles PICKUP_POINT_ETA", "/maps.fleetengine.v1.VehicleService/SearchVehicles"),
      ("GetVehicle (gRPC floor)", "/maps.fleetengine.v1.VehicleService/GetVehicle"),
    ]
    let runSeconds = warmUp + duration * Double(kinds.count) + 1
    let start = NIODeadline.now() + .seconds(1)
    func due(_ seconds: Double) -> NIODeadline { start + .microseconds(Int64(seconds * 1_000_000)) }
    var calls = try reportCalls(
      positions: positions, moved: moved, every: reportEvery, for: runSeconds, due: due)
    func body(_ kind: Int, _ i: Int) throws -> ByteBuffer {
      switch kind {
      case 0: return grpcMessage(try quote(i, pickups, dropoffs).serializedBytes())
      case 1:
        var request = Maps_Fleetengine_V1_SearchVehiclesRequest()
        request.parent = "providers/bench"
        request.pickupPoint.point.latitude = pickups[i % pickups.count].latitude
        request.pickupPoint.point.longitude = pickups[i % pickups.count].longitude
        request.pickupRadiusMeters = 3000
        request.count = 10
        request.minimumCapacity = 1
        request.tripTypes = [.exclusive]
        var auto = Maps_Fleetengine_V1_Vehicle.VehicleType()
        auto.category = .auto
        request.vehicleTypes = [auto]
        request.orderBy = .pickupPointEta
        return grpcMessage(try request.serializedBytes())
      default:
        var request = Maps_Fleetengine_V1_GetVehicleRequest()
        request.name = "providers/bench/vehicles/v\(i % vehicles)"
        return grpcMessage(try request.serializedBytes())
      }
    }
    for i in 0..<Int(rate * warmUp) {
      calls.append(
        .init(due: due(Double(i) / rate), path: kinds[0].1, body: try body(0, i + 100_000), label: "warm-up"))
    }
    for (phase, (label, path)) in kinds.enumerated() {
      let begin = warmUp + Double(phase) * duration
      for i in 0..<Int(rate * duration) {
        calls.append(.init(due: due(begin + Double(i) / rate), path: path, body: try body(phase, i), label: label))
      }
    }
    print(
      "\(vehicles) vehicles report every \(reportEvery) s (\(Int(Double(vehicles) / reportEvery)) updates/s); \(Int(warmUp)) s of quotes to warm up; the generator is a lean HTTP/2 client sharing the 2 cores"
    )
    let load = try await OpenLoopClient(
      host: host, port: grpcPort, authorization: "Bearer \(token)", connections: connections)
    let outcomes = try await load.run(calls)
    await load.close()
    print()
    print("| \(Int(rate)) calls/s for \(Int(duration)) s each | calls/s | p50 ms | p90 ms | p99 ms | max ms | errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for (label, _) in kinds {
      let outcome = outcomes[label] ?? .init()
      print(
        "| \(label) | \(String(format: "%.0f", Double(outcome.latencies.count) / duration)) | \(milliseconds(outcome.latencies, 0.5)) | \(milliseconds(outcome.latencies, 0.9)) | \(milliseconds(outcome.latencies, 0.99)) | \(milliseconds(outcome.latencies, 1)) | \(outcome.errors) |"
      )
    }
    let updates = outcomes["update"] ?? .init()
    print()
    print(
      "location updates during the run: \(updates.latencies.count) acknowledged (\(String(format: "%.0f", Double(updates.latencies.count) / runSeconds))/s), \(updates.errors) errors, p50 \(milliseconds(updates.latencies, 0.5)) ms, p99 \(milliseconds(updates.latencies, 0.99)) ms"
    )
  }

  func quote(_ i: Int, _ pickups: [LatLng], _ dropoffs: [LatLng]) -> Fleetkit_V1_QuoteRideRequest {
    var request = Fleetkit_V1_QuoteRideRequest()
    request.parent = "providers/bench"
    request.pickupPoint.point.latitude = pickups[i % pickups.count].latitude
    request.pickupPoint.point.longitude = pickups[i % pickups.count].longitude
    request.dropoffPoint.point.latitude = dropoffs[i % dropoffs.count].latitude
    request.dropoffPoint.point.longitude = dropoffs[i % dropoffs.count].longitude
    request.numberOfPassengers = Int32(1 + i % 3)
    return request
  }
}
