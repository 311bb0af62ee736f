import ArgumentParser
import FleetAuth
import FleetCore
import FleetProto
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf
import Synchronization

/// SearchVehicles against a running fleetd while part of the fleet reports its position: each
/// order_by at a fixed rate (open loop: latency counts from when a search was due, so a slow
/// server cannot hide its queue), with GetVehicle at the same rate as the floor of a gRPC call.
struct SearchLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "search")

  @Option var host = "127.0.0.1"
  @Option var port = 50161
  @Option(help: "A server key for the provider 'bench'.") var key: String
  @Option(help: "The road graph fleetd serves (to place vehicles and pickups on roads).") var graph: String
  @Option var vehicles = 5000
  @Option(help: "How many of the vehicles report their position.") var reporting = 2000
  @Option(help: "Seconds between one vehicle's reports.") var reportEvery = 5.0
  @Option(help: "Searches per second.") var rate = 200.0
  @Option(help: "Seconds per order_by.") var duration = 20.0
  @Option var connections = 4
  @Option var radius: Int32 = 3000
  @Option var count: Int32 = 10

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    let signer = try TokenSigner(key: try ServiceAccountKey.load(path: key))
    let token = try signer.token()
    let metadata: Metadata = ["authorization": "Bearer \(token)"]
    var random = Seeded(42)
    let positions = roadPoints(routing, count: vehicles, random: &random)
    let moved = roadPoints(routing, count: reporting, random: &random).enumerated().map { i, far in
      // About 40 m towards another road point, snapped back onto a road.
      let start = positions[i]
      let f = min(1, 40 / max(1, start.distance(to: far)))
      let toward = LatLng(
        latitude: start.latitude + (far.latitude - start.latitude) * f,
        longitude: start.longitude + (far.longitude - start.longitude) * f)
      return (try? routing.nearest(toward).first?.location) ?? start
    }
    let pickups = roadPoints(routing, count: 2000, random: &random)
    let dropoffs = roadPoints(routing, count: 2000, random: &random)

    let clients = try (0..<connections).map { _ in
      GRPCClient(
        transport: try HTTP2ClientTransport.Posix(
          target: .ipv4(address: host, port: port), transportSecurity: .plaintext))
    }
    try await withThrowingDiscardingTaskGroup { group in
      for client in clients { group.addTask { try await client.runConnections() } }
      defer { for client in clients { client.beginGracefulShutdown() } }
      let vehicleService = clients.map { Maps_Fleetengine_V1_VehicleService.Client(wrapping: $0) }

      print("creating \(vehicles) online vehicles on Monaco's roads…")
      try await withThrowingTaskGroup(of: Void.self) { creating in
        for i in 0..<vehicles {
          if i >= 64 { try await creating.next() }
          creating.addTask {
            var request = Maps_Fleetengine_V1_CreateVehicleRequest()
            request.parent = "providers/bench"
            request.vehicleID = "v\(i)"
            request.vehicle.vehicleState = .online
            request.vehicle.supportedTripTypes = [.exclusive, .shared]
            request.vehicle.maximumCapacity = 4
            request.vehicle.vehicleType.category = .auto
            request.vehicle.lastLocation.location.latitude = positions[i].latitude
            request.vehicle.lastLocation.location.longitude = positions[i].longitude
            _ = try await vehicleService[i % vehicleService.count].createVehicle(request, metadata: metadata)
          }
        }
        try await creating.waitForAll()
      }

      let orders: [(String, Maps_Fleetengine_V1_SearchVehiclesRequest.VehicleMatchOrder?)] = [
        ("GetVehicle (gRPC floor)", nil), ("PICKUP_POINT_STRAIGHT_DISTANCE", .pickupPointStraightDistance),
        ("PICKUP_POINT_ETA", .pickupPointEta), ("PICKUP_POINT_DISTANCE", .pickupPointDistance),
        ("DROPOFF_POINT_ETA", .dropoffPointEta), ("COST", .cost),
      ]
      let warmUp = 5.0
      let ingestSeconds = warmUp + duration * Double(orders.count) + 2
      async let ingest = openLoop(rate: Double(reporting) / reportEvery, seconds: ingestSeconds) { i in
          let vehicle = i % reporting
          let round = i / reporting
          var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
          request.name = "providers/bench/vehicles/v\(vehicle)"
          let point = round % 2 == 0 ? moved[vehicle] : positions[vehicle]
          request.vehicle.lastLocation.location.latitude = point.latitude
          request.vehicle.lastLocation.location.longitude = point.longitude
          request.vehicle.lastLocation.updateTime = Google_Protobuf_Timestamp(date: Date())
          request.updateMask.paths = ["last_location"]
          _ = try await vehicleService[i % vehicleService.count].updateVehicle(request, metadata: metadata)
      }
      print(
        "\(reporting) of them report every \(reportEvery) s (\(Int(Double(reporting) / reportEvery)) updates/s); warming up \(Int(warmUp)) s…"
      )
      _ = await openLoop(rate: rate, seconds: warmUp) { i in
        _ = try await vehicleService[i % vehicleService.count].searchVehicles(
          search(.pickupPointEta, i, pickups, dropoffs), metadata: metadata)
      }
      print()
      print("| \(Int(rate)) calls/s for \(Int(duration)) s, count \(count), radius \(radius) m | calls/s | p50 ms | p90 ms | p99 ms | max ms | errors | matches/search |")
      print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
      for (label, order) in orders {
        let matched = Mutex(0)
        let result = await openLoop(rate: rate, seconds: duration) { i in
          let client = vehicleService[i % vehicleService.count]
          if let order {
            let response = try await client.searchVehicles(search(order, i, pickups, dropoffs), metadata: metadata)
            matched.withLock { $0 += response.matches.count }
          } else {
            var request = Maps_Fleetengine_V1_GetVehicleRequest()
            request.name = "providers/bench/vehicles/v\(i % vehicles)"
            _ = try await client.getVehicle(request, metadata: metadata)
          }
        }
        let perSearch = order == nil ? "" : String(format: "%.1f", Double(matched.withLock { $0 }) / Double(max(1, result.latencies.count)))
        print(
          "| \(label) | \(String(format: "%.0f", Double(result.latencies.count) / duration)) | \(milliseconds(result.latencies, 0.5)) | \(milliseconds(result.latencies, 0.9)) | \(milliseconds(result.latencies, 0.99)) | \(milliseconds(result.latencies, 1)) | \(result.errors) | \(perSearch) |"
        )
      }
      let updates = await ingest
      print()
      print(
        "location updates during the run: \(updates.latencies.count) acknowledged (\(String(format: "%.0f", Double(updates.latencies.count) / ingestSeconds))/s), \(updates.errors) errors, p50 \(milliseconds(updates.latencies, 0.5)) ms, p99 \(milliseconds(updates.latencies, 0.99)) ms"
      )
    }
  }

  func search(
    _ order: Maps_Fleetengine_V1_SearchVehiclesRequest.VehicleMatchOrder, _ i: Int, _ pickups: [LatLng],
    _ dropoffs: [LatLng]
  ) -> Maps_Fleetengine_V1_SearchVehiclesRequest {
    var request = Maps_Fleetengine_V1_SearchVehiclesRequest()
    request.parent = "providers/bench"
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

struct LoadResult: Sendable {
  var latencies: [Duration] = []
  var errors = 0
}

/// Calls `call(i)` at `rate` per second for `seconds`, each when it is due whatever the ones
/// before it are doing; a call's latency runs from when it was due to when it returned.
func openLoop(rate: Double, seconds: Double, _ call: @escaping @Sendable (Int) async throws -> Void) async
  -> LoadResult
{
  let clock = ContinuousClock()
  let start = clock.now
  let total = Int(rate * seconds)
  return await withTaskGroup(of: Duration?.self) { group in
    for i in 0..<total {
      let due = start + .microseconds(Int64(Double(i) / rate * 1_000_000))
      try? await Task.sleep(until: due, clock: clock)
      group.addTask {
        do {
          try await call(i)
          return clock.now - due
        } catch {
          return nil
        }
      }
    }
    var result = LoadResult()
    for await latency in group {
      if let latency { result.latencies.append(latency) } else { result.errors += 1 }
    }
    return result
  }
}
