import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Location reports over fleetkit.v1.VehicleUpdates streams (`--rpc stream`) or the REST batch
/// (`--rpc batch`), closed loop per vehicle as the unary load: a vehicle's next report goes as
/// soon as its previous one is acknowledged. On a stream, the reports that are due when an
/// answer arrives travel together in one message (up to `--batch`), as a gateway relaying many
/// vehicles would send them.
struct ReportLoad {
  let provider: String
  let metadata: Metadata
  let vehicles: Int
  let batch: Int
  let trips: MonacoTrips?

  func report(vehicle i: Int, step: Int, sequence: UInt64) -> Fleetkit_V1_LocationReport {
    var report = Fleetkit_V1_LocationReport()
    report.sequence = sequence
    report.name = "providers/\(provider)/vehicles/load-\(i)"
    if let trips {
      let position = trips.position(vehicle: i, step: step)
      report.vehicle.lastLocation.location.latitude = position.latitude
      report.vehicle.lastLocation.location.longitude = position.longitude
    } else {
      report.vehicle.lastLocation.location.latitude =
        43.73 + (Double(i % 100) + Double(step % 100) / 100) / 10_000
      report.vehicle.lastLocation.location.longitude = 7.42 + Double(i / 100) / 10_000
    }
    report.vehicle.lastLocation.updateTime = .init(date: Date())
    return report
  }

  /// One stream per client connection, each carrying its share of the vehicles.
  func streams(
    _ clients: [GRPCClient<HTTP2ClientTransport.Posix>], measureFrom: ContinuousClock.Instant,
    end: ContinuousClock.Instant
  ) async throws -> VehicleResult {
    try await withThrowingTaskGroup(of: VehicleResult.self) { group in
      for (s, client) in clients.enumerated() {
        let mine = Array(stride(from: s, to: vehicles, by: clients.count))
        group.addTask { try await stream(client, vehicles: mine, measureFrom: measureFrom, end: end) }
      }
      return try await VehicleResult.combined(group)
    }
  }

  func stream(
    _ client: GRPCClient<HTTP2ClientTransport.Posix>, vehicles mine: [Int], measureFrom: ContinuousClock.Instant,
    end: ContinuousClock.Instant
  ) async throws -> VehicleResult {
    let updates = Fleetkit_V1_VehicleUpdates.Client(wrapping: client)
    let (messages, outgoing) = AsyncStream.makeStream(of: Fleetkit_V1_ReportLocationsRequest.self)
    let clock = ContinuousClock()
    return try await updates.reportLocations(
      metadata: metadata,
      requestProducer: { writer in
        for await message in messages { try await writer.write(message) }
      },
      onResponse: { response in
        var result = VehicleResult()
        var inFlight: [UInt64: (vehicle: Int, sent: ContinuousClock.Instant)] = [:]
        var steps = [Int](repeating: 0, count: vehicles)
        var nextSequence: UInt64 = 1
        func send(_ due: [Int]) {
          for chunk in stride(from: 0, to: due.count, by: batch) {
            var message = Fleetkit_V1_ReportLocationsRequest()
            let now = clock.now
            for vehicle in due[chunk..<min(due.count, chunk + batch)] {
              steps[vehicle] += 1
              message.reports.append(report(vehicle: vehicle, step: steps[vehicle], sequence: nextSequence))
              inFlight[nextSequence] = (vehicle, now)
              nextSequence += 1
            }
            outgoing.yield(message)
          }
        }
        send(mine)
        for try await answer in response.messages {
          let now = clock.now
          var due: [Int] = []
          for ack in answer.acknowledged {
            guard let (vehicle, sent) = inFlight.removeValue(forKey: ack.sequence) else { continue }
            if sent >= measureFrom && now <= end { result.latencies.append(now - sent) }
            due.append(vehicle)
          }
          for error in answer.errors {
            guard let (vehicle, sent) = inFlight.removeValue(forKey: error.sequence) else { continue }
            if sent >= measureFrom { result.errors += 1 }
            due.append(vehicle)
          }
          if now < end {
            send(due)
          } else if inFlight.isEmpty {
            break
          }
        }
        outgoing.finish()
        return result
      })
  }

  /// POST vehicles:reportLocations from `connections` relays, each with its share of the
  /// vehicles, one request of up to `--batch` reports at a time.
  func batches(
    httpPort: Int, authorization: String, connections: Int, measureFrom: ContinuousClock.Instant,
    end: ContinuousClock.Instant
  ) async throws -> VehicleResult {
    let url = URL(string: "http://127.0.0.1:\(httpPort)/fleetkit/v1/providers/\(provider)/vehicles:reportLocations")!
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = connections
    let session = URLSession(configuration: configuration)
    return try await withThrowingTaskGroup(of: VehicleResult.self) { group in
      for relay in 0..<connections {
        let mine = Array(stride(from: relay, to: vehicles, by: connections))
        group.addTask {
          let clock = ContinuousClock()
          var result = VehicleResult()
          var step = 0
          while clock.now < end {
            step += 1
            for chunk in stride(from: 0, to: mine.count, by: batch) {
              var message = Fleetkit_V1_ReportLocationsRequest()
              message.reports = mine[chunk..<min(mine.count, chunk + batch)].enumerated().map { pair in
                report(vehicle: pair.element, step: step, sequence: UInt64(pair.offset + 1))
              }
              var request = URLRequest(url: url)
              request.httpMethod = "POST"
              request.setValue(authorization, forHTTPHeaderField: "Authorization")
              request.setValue("application/json", forHTTPHeaderField: "Content-Type")
              request.httpBody = try message.jsonUTF8Data()
              let sent = clock.now
              let (data, response) = try await session.data(for: request)
              let answer = try? Fleetkit_V1_ReportLocationsResponse(jsonUTF8Data: data)
              let now = clock.now
              guard sent >= measureFrom, now <= end else { continue }
              let acknowledged = (response as? HTTPURLResponse)?.statusCode == 200 ? answer?.acknowledged.count ?? 0 : 0
              result.latencies += Array(repeating: now - sent, count: acknowledged)
              result.errors += message.reports.count - acknowledged
            }
          }
          return result
        }
      }
      return try await VehicleResult.combined(group)
    }
  }
}
