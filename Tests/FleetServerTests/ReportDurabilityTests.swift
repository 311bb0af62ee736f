import FleetAuth
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every report fleetd acknowledged on a stream is on disk, even when fleetd is killed (SIGKILL)
/// with reports in flight: a real fleetd process, restarted on the same data directory.
@Suite struct ReportDurabilityTests {
  // Two starts of fleetd, each given up to two minutes on a busy machine.
  @Test(.timeLimit(.minutes(6)))
  func everyAcknowledgedReportSurvivesKill9() async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-kill9-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let keyFile = directory + "/server.json"
    let added = try await ChildProcess.run(
      ChildProcess.built("fleetd"),
      ["keys", "add", "--data-dir", directory, "--provider", "acme", "--role", "server", "--out", keyFile])
    #expect(added.status == 0, "\(added.errors)")
    let metadata = auth(try TokenSigner(key: try ServiceAccountKey.load(path: keyFile)).token())
    let vehicles = (0..<50).map { "k\($0)" }
    let acknowledged = AcknowledgedSteps()

    let first = try await FleetdInstance.start(directory: directory)
    try await first.withClient { client in
      let service = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
      for id in vehicles {
        _ = try await service.createVehicle(newVehicleRequest(id), metadata: metadata)
      }
      // Each vehicle reports its next step as soon as the previous one is acknowledged; fleetd
      // is killed while they go on.
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          let updates = Fleetkit_V1_VehicleUpdates.Client(wrapping: client)
          let (messages, outgoing) = AsyncStream.makeStream(of: Fleetkit_V1_ReportLocationsRequest.self)
          do {
            try await updates.reportLocations(
              metadata: metadata,
              requestProducer: { writer in for await message in messages { try await writer.write(message) } },
              onResponse: { response in
                var steps: [UInt64: (String, Int)] = [:]
                var sequence: UInt64 = 0
                func send(_ id: String, step: Int) {
                  sequence += 1
                  steps[sequence] = (id, step)
                  var message = Fleetkit_V1_ReportLocationsRequest()
                  message.reports = [locationReport(sequence, id, 43.7 + Double(step) / 100_000, 7.42)]
                  outgoing.yield(message)
                }
                for id in vehicles { send(id, step: 1) }
                for try await answer in response.messages {
                  #expect(answer.errors.isEmpty)
                  for ack in answer.acknowledged {
                    guard let (id, step) = steps.removeValue(forKey: ack.sequence) else { continue }
                    acknowledged.steps.withLock { $0[id] = max($0[id] ?? 0, step) }
                    send(id, step: step + 1)
                  }
                }
              })
          } catch {
            // The server was killed: the stream fails, and what it acknowledged is counted.
          }
          outgoing.finish()
        }
        try await Task.sleep(for: .seconds(2))
        first.kill()
        try await group.waitForAll()
      }
    }
    let counted = acknowledged.steps.withLock { $0 }
    #expect(counted.count == vehicles.count, "every vehicle had reports acknowledged before the kill")

    let second = try await FleetdInstance.start(directory: directory)
    defer { second.kill() }
    try await second.withClient { client in
      let service = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
      for (id, step) in counted {
        let stored = try await service.getVehicle(
          .with { $0.name = "providers/acme/vehicles/\(id)" }, metadata: metadata)
        let storedStep = Int(((stored.lastLocation.location.latitude - 43.7) * 100_000).rounded())
        #expect(storedStep >= step, "vehicle \(id): report \(step) was acknowledged, fleetd has \(storedStep)")
      }
    }
  }
}

/// The newest step acknowledged for each vehicle.
final class AcknowledgedSteps: Sendable {
  let steps = Mutex<[String: Int]>([:])
}

struct FleetdDidNotStart: Error {
  let directory: String
  /// What fleetd printed.
  let output: String
}

/// The ports fleetd listens on: one for gRPC, another for HTTP.
@Suite struct ListenPortTests {
  /// Both on one port was taken before: each server bound it, and half the health checks went to
  /// the gRPC server (a test harness handed out one free port twice).
  @Test(.timeLimit(.minutes(1))) func oneListenPortForBothServersIsRefusedNamingTheFlags() async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-ports-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try PostgresCluster.freePort()
    let refused = try await ChildProcess.run(
      ChildProcess.built("fleetd"),
      ["serve", "--data-dir", directory, "--grpc-port", "\(port)", "--http-port", "\(port)"])
    #expect(refused.status != 0)
    #expect(refused.errors.contains("--grpc-port and --http-port are both \(port)"), "\(refused.errors)")
  }

  /// A port another program holds: fleetd exits at once with one line naming the flag and why,
  /// not the transport's error, and without saying it listens.
  @Test(.timeLimit(.minutes(1)), arguments: ["--grpc-port", "--http-port"])
  func aPortInUseIsRefusedNamingItsFlag(flag: String) async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-ports-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let held = try ListeningSocket()
    let other = flag == "--grpc-port" ? "--http-port" : "--grpc-port"
    let refused = try await ChildProcess.run(
      ChildProcess.built("fleetd"), ["serve", "--data-dir", directory, flag, "\(held.port)", other, "0"])
    #expect(refused.status == 1)
    #expect(
      refused.errors.contains(
        "Error: \(flag) \(held.port) on 127.0.0.1: the port is in use (another fleetd, or another program)"),
      "\(refused.errors)")
    #expect(!refused.errors.contains("fleetd listening"), "\(refused.errors)")
    #expect(!refused.errors.contains("webhook delivery stalled"), "\(refused.errors)")
    #expect(!refused.errors.contains("tombstones failed"), "\(refused.errors)")
  }

  /// "fleetd listening" is said once both servers are bound, with the ports they got: port 0
  /// asks for any, and the line is how a user learns which.
  @Test(.timeLimit(.minutes(3))) func listeningIsSaidOnceBoundWithTheBoundPorts() async throws {
    let directory = NSTemporaryDirectory() + "fleetkit-ports-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let fleetd = try await FleetdInstance.start(directory: directory)
    defer { fleetd.kill() }
    let (line, httpPort, grpcPort) = (fleetd.listening, fleetd.httpPort, fleetd.grpcPort)
    #expect(httpPort != 0 && grpcPort != 0 && httpPort != grpcPort, "\(line)")
    let (_, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(httpPort)/healthz")!)
    #expect((response as? HTTPURLResponse)?.statusCode == 200)
    // The gRPC server answers there: a call without a token is refused by fleetd, not by the network.
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      var get = Maps_Fleetengine_V1_GetTripRequest()
      get.name = "providers/acme/trips/t"
      let trips = Maps_Fleetengine_V1_TripService.Client(wrapping: client)
      #expect(await rpcCode { _ = try await trips.getTrip(get) } == .unauthenticated)
    }
  }
}

/// A `fleetd serve` process on loopback ports of its own.
struct FleetdInstance: Sendable {
  let process: ChildProcess
  let grpcPort: Int
  let httpPort: Int
  /// The line fleetd said once both servers were bound.
  let listening: String

  /// Starts fleetd on ports the system picks (port 0: no free port to race another test for)
  /// and waits for the line that says it listens, which names them. It waits as long as fleetd
  /// runs, up to two minutes: on two cores busy with the rest of the suite, a start has taken
  /// over thirty seconds; a fleetd that hangs is what the cap is for.
  static func start(directory: String) async throws -> FleetdInstance {
    let logPath = directory + ".log"
    guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
      throw FleetdDidNotStart(directory: directory, output: "cannot write \(logPath)")
    }
    defer { try? FileManager.default.removeItem(atPath: logPath) }
    let process = try ChildProcess(
      ChildProcess.built("fleetd"),
      ["serve", "--data-dir", directory, "--grpc-port", "0", "--http-port", "0", "--log-level", "notice"],
      errors: try FileHandle(forWritingTo: URL(fileURLWithPath: logPath)))
    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    let deadline = ContinuousClock.now + .seconds(120)
    while true {
      // Read before asking whether it runs: a line written just before an exit is still seen.
      let said = log().split(separator: "\n").first { $0.contains("fleetd listening") }
      if let said {
        func port(_ key: String) -> Int? {
          said.split(separator: " ").first { $0.hasPrefix(key + "=") }?.split(separator: ":").last.flatMap { Int($0) }
        }
        guard let grpcPort = port("grpc"), let httpPort = port("http") else { break }
        return FleetdInstance(process: process, grpcPort: grpcPort, httpPort: httpPort, listening: String(said))
      }
      guard process.isRunning, ContinuousClock.now < deadline else { break }
      try await Task.sleep(for: .milliseconds(100))
    }
    process.kill()
    throw FleetdDidNotStart(directory: directory, output: log())
  }

  func withClient(_ body: (GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Void) async throws {
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in try await body(client) }
  }

  /// SIGKILL: no graceful shutdown, no flush.
  func kill() { process.kill() }
}
