import FleetCore
import FleetDriver
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The reporter's updates go over fleetd's location stream, and over UpdateVehicle against a
/// server without it (Fleet Engine), with the same answers.
@Suite struct UpdateChannelTests {
  @Test func updatesGoOverTheStreamWhenFleetdOffersIt() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("s1")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      let api = RidesharingDriverAPI(
        driverContext: DriverContext(
          tokenProvider: tokens, providerID: "acme", vehicleID: "s1", endpoint: fleetd.endpoint), clock: clock)
      let listener = RecordingListener()
      api.vehicleReporter.addListener(listener)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.73, 7.42, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        try await listener.waitFor(1)
        api.vehicleReporter.report(fix(43.731, 7.42, at: 10))
        clock.advance(by: .seconds(10))
        let events = try await listener.waitFor(2)
        #expect(events.allSatisfy { $0.error == nil }, "\(events)")
        // The acknowledgement carries the vehicle as stored, as UpdateVehicle's answer does.
        #expect(events[1].update.vehicle?.lastLocation?.latitude == 43.731)
      }
      #expect(try await fleetd.vehicle("s1").lastLocation.location.latitude == 43.731)
      let metrics = try await requests(at: fleetd.httpURL)
      #expect(metrics["ReportLocations"] == 2)
      #expect(metrics["UpdateVehicle"] == nil)
    }
  }

  @Test func withoutTheStreamUpdatesFallBackToUpdateVehicleForGood() async throws {
    let engine = UnaryOnlyVehicles()
    try await withGRPCServer(
      transport: HTTP2ServerTransport.Posix(
        address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
      services: [engine]
    ) { server in
      let port = try #require(try await server.listeningAddress?.ipv4?.port)
      let clock = ManualClock()
      let api = RidesharingDriverAPI(
        driverContext: DriverContext(
          tokenProvider: StaticTokens(), providerID: "acme", vehicleID: "u1",
          endpoint: FleetEndpoint(host: "127.0.0.1", port: port)),
        clock: clock)
      let listener = RecordingListener()
      api.vehicleReporter.addListener(listener)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.73, 7.42, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        try await listener.waitFor(1)
        for i in 1...3 {
          api.vehicleReporter.report(fix(43.73 + Double(i) / 1000, 7.42, at: Double(i) * 10))
          clock.advance(by: .seconds(10))
          try await listener.waitFor(1 + i)
        }
        let events = listener.all
        #expect(events.allSatisfy { $0.error == nil }, "the stream's absence is not the driver's failure: \(events)")
        #expect(events.last?.update.vehicle?.lastLocation?.latitude == 43.733)
      }
      #expect(engine.updates.load(ordering: .relaxed) == 4)
      server.beginGracefulShutdown()
    }
  }
}

/// A gateway relaying many vehicles over one channel: reports queued while the writer is busy
/// go out together, each still answered alone with its own vehicle.
@Suite struct UpdateChannelBatchingTests {
  @Test func reportsQueuedWhileTheWriterIsBusyShareAMessage() async throws {
    let server = SlowReportStream()
    try await withLoopbackClient(serving: server) { client in
      let channel = UpdateChannel(client: client, timeout: .seconds(10))
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          // The writer starts late, as one busy with earlier messages: the reports queue meanwhile.
          try await Task.sleep(for: .milliseconds(300))
          await channel.run()
        }
        let answered = try await withThrowingTaskGroup(of: (String, String).self) { sends in
          for i in 0..<300 {
            sends.addTask {
              var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
              request.name = "providers/acme/vehicles/v\(i)"
              request.vehicle.lastLocation.location.latitude = Double(i) / 1000
              request.updateMask.paths = ["last_location"]
              let vehicle = try await channel.send(request, token: "gateway")
              return (request.name, vehicle.name)
            }
          }
          var pairs: [(String, String)] = []
          for try await pair in sends { pairs.append(pair) }
          return pairs
        }
        group.cancelAll()
        #expect(answered.count == 300 && answered.allSatisfy { $0.0 == $0.1 }, "each report gets its own vehicle")
      }
    }
    let sizes = server.sizes.withLock { $0 }
    #expect(sizes == [UpdateChannel.maximumBatch, 300 - UpdateChannel.maximumBatch], "\(sizes)")
    // The token travels once, in the first message.
    #expect(server.tokens.withLock { $0 } == ["gateway"])
  }

  @Test func aReportNotAnsweredInTimeFailsItsLateAnswerIsDroppedAndACancelledOneFails() async throws {
    // The deadline leaves room for a loaded machine; the slow answer comes well after it.
    let server = SlowReportStream(slowDelay: .seconds(25))
    try await withLoopbackClient(serving: server) { client in
      let channel = UpdateChannel(client: client, timeout: .seconds(10))
      func update(_ vehicle: String) -> Maps_Fleetengine_V1_UpdateVehicleRequest {
        var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
        request.name = "providers/acme/vehicles/\(vehicle)"
        request.updateMask.paths = ["last_location"]
        return request
      }
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await channel.run() }
        // The stream open and answering (a loaded machine may take a try or two), so that the
        // next report is written at once.
        try await eventually("the stream answering") {
          (try? await channel.send(update("first"), token: "gateway")) != nil
        }
        let answeredBefore = server.answered.load(ordering: .relaxed)
        // Answered after 25 s: the channel gives up at its 10 s deadline (3 s were too few for
        // the test's other reports in a loaded run).
        let late = await #expect(throws: RPCError.self) { try await channel.send(update("slow"), token: "gateway") }
        #expect(late?.code == .deadlineExceeded)
        #expect(server.answered.load(ordering: .relaxed) == answeredBefore)
        // A caller cancelled while its report waits fails with the cancellation.
        let cancelled = Task { try await channel.send(update("v2"), token: "gateway") }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // The late answer arrives and is dropped; the stream goes on answering.
        try await eventually("the late answer") { server.answered.load(ordering: .relaxed) > answeredBefore }
        let vehicle = try await channel.send(update("v3"), token: "gateway")
        #expect(vehicle.name == "providers/acme/vehicles/v3")
        group.cancelAll()
      }
    }
  }
}

/// `service` served over HTTP/2 on loopback while `body` runs with a client connected to it.
func withLoopbackClient(
  serving service: some RegistrableRPCService,
  _ body: (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Void
) async throws {
  try await withGRPCServer(
    transport: HTTP2ServerTransport.Posix(address: .ipv4(host: "127.0.0.1", port: 0), transportSecurity: .plaintext),
    services: [service]
  ) { grpc in
    let port = try #require(try await grpc.listeningAddress?.ipv4?.port)
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext)
    ) { client in try await body(client) }
    grpc.beginGracefulShutdown()
  }
}

/// A report stream that answers each report with its vehicle, 20 ms per message (`slowDelay`
/// for a message with a report of vehicle `slow`).
final class SlowReportStream: Fleetkit_V1_VehicleUpdates.SimpleServiceProtocol {
  let sizes = Mutex<[Int]>([])
  let tokens = Mutex<[String]>([])
  let answered = Atomic<Int>(0)
  let slowDelay: Duration

  init(slowDelay: Duration = .milliseconds(20)) { self.slowDelay = slowDelay }

  func reportLocations(
    request: RPCAsyncSequence<Fleetkit_V1_ReportLocationsRequest, any Error>,
    response: RPCWriter<Fleetkit_V1_ReportLocationsResponse>, context: ServerContext
  ) async throws {
    for try await message in request {
      sizes.withLock { $0.append(message.reports.count) }
      if !message.authorization.isEmpty { tokens.withLock { $0.append(message.authorization) } }
      let slow = message.reports.contains { $0.name.hasSuffix("/slow") }
      try await Task.sleep(for: slow ? slowDelay : .milliseconds(20))
      var answer = Fleetkit_V1_ReportLocationsResponse()
      answer.acknowledged = message.reports.map { report in
        var acknowledgement = Fleetkit_V1_Acknowledgement()
        acknowledgement.sequence = report.sequence
        acknowledgement.vehicle = report.vehicle
        acknowledgement.vehicle.name = report.name
        return acknowledgement
      }
      // Counted before the write: the client may read the answer before this task runs again.
      answered.add(1, ordering: .relaxed)
      try await response.write(answer)
    }
  }
}

/// Requests counted by fleetd's /metrics, by RPC (all codes and transports).
func requests(at url: URL) async throws -> [String: Int] {
  let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("metrics"))
  var counts: [String: Int] = [:]
  for line in String(decoding: data, as: UTF8.self).split(separator: "\n")
  where line.hasPrefix("fleetd_requests_total{") {
    guard let rpc = line.split(separator: "rpc=\"").dropFirst().first?.split(separator: "\"").first,
      let value = line.split(separator: " ").last.flatMap({ Double($0) })
    else { continue }
    counts[String(rpc), default: 0] += Int(value)
  }
  return counts
}

/// Fleet Engine as far as a driver's app sees it: VehicleService, no fleetkit.v1 stream.
final class UnaryOnlyVehicles: Maps_Fleetengine_V1_VehicleService.SimpleServiceProtocol {
  let updates = Atomic<Int>(0)

  func updateVehicle(request: Maps_Fleetengine_V1_UpdateVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  {
    updates.add(1, ordering: .relaxed)
    var vehicle = request.vehicle
    vehicle.name = request.name
    return vehicle
  }

  func createVehicle(request: Maps_Fleetengine_V1_CreateVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  { throw RPCError(code: .unimplemented, message: "") }

  func getVehicle(request: Maps_Fleetengine_V1_GetVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  { throw RPCError(code: .unimplemented, message: "") }

  func deleteVehicle(request: Maps_Fleetengine_V1_DeleteVehicleRequest, context: ServerContext) async throws
    -> Google_Protobuf_Empty
  { throw RPCError(code: .unimplemented, message: "") }

  func updateVehicleAttributes(
    request: Maps_Fleetengine_V1_UpdateVehicleAttributesRequest, context: ServerContext
  ) async throws -> Maps_Fleetengine_V1_UpdateVehicleAttributesResponse {
    throw RPCError(code: .unimplemented, message: "")
  }

  func listVehicles(request: Maps_Fleetengine_V1_ListVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_ListVehiclesResponse
  { throw RPCError(code: .unimplemented, message: "") }

  func searchVehicles(request: Maps_Fleetengine_V1_SearchVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_SearchVehiclesResponse
  { throw RPCError(code: .unimplemented, message: "") }
}
