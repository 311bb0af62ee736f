import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization

/// Riders watching trips while their drivers report: `watchers` WatchTrip streams spread evenly
/// over the vehicles' trips, and location updates at `rate` per second round-robin over the
/// vehicles. Each update carries its send time as the location's update_time; each watcher
/// that receives the trip with it records now minus that time: the latency from a driver's
/// UpdateVehicle to a rider holding the new trip.
struct WatchLoad {
  let host: String
  let port: Int
  let metadata: Metadata
  let provider: String
  let trips: MonacoTrips
  let watchers: Int
  let rate: Double
  let warmup: Double
  let duration: Double
  /// Streams per HTTP/2 connection.
  static let streamsPerConnection = 100

  func run(updating clients: [GRPCClient<HTTP2ClientTransport.Posix>]) async throws {
    let connections = try (0..<max(1, watchers / Self.streamsPerConnection)).map { _ in
      GRPCClient(
        transport: try HTTP2ClientTransport.Posix(
          target: .ipv4(address: host, port: port), transportSecurity: .plaintext))
    }
    let tally = Tally()
    let vehicles = trips.routes.count
    let metadata = metadata
    let provider = provider
    try await withThrowingTaskGroup(of: Void.self) { group in
      for connection in connections { group.addTask { try await connection.runConnections() } }
      let streams = Task {
        try await withThrowingTaskGroup(of: Void.self) { watching in
          for w in 0..<watchers {
            let client = Fleetkit_V1_TripUpdates.Client(wrapping: connections[w % connections.count])
            let request = Fleetkit_V1_WatchTripRequest.with {
              $0.name = "providers/\(provider)/trips/load-trip-\(w % vehicles)"
              $0.view = .journeySharingV1S
            }
            watching.addTask {
              try await client.watchTrip(request, metadata: metadata) { response in
                var first = true
                for try await trip in response.messages {
                  if first {
                    first = false
                    tally.opened.add(1, ordering: .relaxed)
                    continue
                  }
                  guard tally.measuring.load(ordering: .relaxed), trip.lastLocation.hasUpdateTime else { continue }
                  let latency = Date().timeIntervalSince(trip.lastLocation.updateTime.date)
                  tally.latencies.withLock { $0.append(latency) }
                }
              }
            }
          }
          try await watching.waitForAll()
        }
      }
      let openStart = Date()
      while tally.opened.load(ordering: .relaxed) < watchers {
        try await Task.sleep(for: .milliseconds(100))
        if Date().timeIntervalSince(openStart) > 120 { break }
      }
      let openSeconds = Date().timeIntervalSince(openStart)
      print(
        "watchers: \(tally.opened.load(ordering: .relaxed)) of \(watchers) streams open over \(connections.count) connections in \(String(format: "%.1f", openSeconds)) s, \(watchers / vehicles) per trip, \(vehicles) trips"
      )

      // Drivers: open loop at `rate`, each vehicle stepping 10 m along its route per update.
      let service = clients.map { Maps_Fleetengine_V1_VehicleService.Client(wrapping: $0) }
      var steps = [Int](repeating: 0, count: vehicles)
      let start = ContinuousClock.now
      let interval = Swift.Duration.seconds(1 / rate)
      var sent = 0
      var errors = 0
      try await withThrowingTaskGroup(of: Bool.self) { updates in
        var next = start
        var k = 0
        while next < start + .seconds(warmup + duration) {
          if next >= start + .seconds(warmup) { tally.measuring.store(true, ordering: .relaxed) }
          try await Task.sleep(until: next, clock: .continuous)
          let i = k % vehicles
          steps[i] += 1
          let position = trips.position(vehicle: i, step: steps[i])
          var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
          request.name = "providers/\(provider)/vehicles/load-\(i)"
          request.updateMask.paths = ["last_location"]
          request.vehicle.lastLocation.location = .with {
            $0.latitude = position.latitude
            $0.longitude = position.longitude
          }
          request.vehicle.lastLocation.updateTime = .init(date: Date())
          let client = service[k % service.count]
          updates.addTask {
            do {
              _ = try await client.updateVehicle(request, metadata: metadata)
              return true
            } catch {
              return false
            }
          }
          sent += 1
          k += 1
          next = next + interval
        }
        for try await ok in updates where !ok { errors += 1 }
      }
      // Let the last deliveries land, then stop measuring.
      try await Task.sleep(for: .milliseconds(500))
      tally.measuring.store(false, ordering: .relaxed)
      streams.cancel()
      for connection in connections { connection.beginGracefulShutdown() }

      let sorted = tally.latencies.withLock { $0 }.sorted()
      func percentile(_ p: Double) -> String {
        guard !sorted.isEmpty else { return "-" }
        return String(format: "%.1f ms", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1000)
      }
      print(
        "updates: \(sent) at \(Int(rate))/s (\(errors) failed)  deliveries measured: \(sorted.count) (\(String(format: "%.0f", Double(sorted.count) / duration))/s) over \(duration) s after \(warmup) s warm-up"
      )
      print(
        "update -> watcher latency: p50 \(percentile(0.5))  p90 \(percentile(0.9))  p99 \(percentile(0.99))  max \(percentile(1.0))"
      )
      group.cancelAll()
    }
  }
}

/// What the watchers share.
final class Tally: Sendable {
  let opened = Atomic<Int>(0)
  let latencies = Mutex<[Double]>([])
  let measuring = Atomic<Bool>(false)
}
