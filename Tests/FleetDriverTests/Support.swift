import FleetAuth
import FleetCore
import FleetDriver
import FleetPositioning
import FleetProto
import FleetServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import Synchronization

/// A real fleetd on loopback over a data directory that outlives it, so that a test can stop
/// it and start it again on the same port and storage.
final class Fleetd: Sendable {
  let directory: String
  let running = Mutex<(daemon: FleetDaemon, task: Task<Void, any Error>)?>(nil)
  let port = Mutex(0)

  let graph: String?

  init(graph: String? = nil) {
    directory = NSTemporaryDirectory() + "fleetkit-driver-\(UUID().uuidString)"
    self.graph = graph
  }
  deinit { try? FileManager.default.removeItem(atPath: directory) }

  var grpcPort: Int { port.withLock { $0 } }
  var endpoint: FleetEndpoint { FleetEndpoint(host: "127.0.0.1", port: grpcPort) }

  func start() async throws {
    var configuration = ServerConfiguration()
    configuration.dataDirectory = directory
    configuration.grpcPort = grpcPort
    configuration.httpPort = 0
    configuration.graphPath = graph
    var logger = Logger(label: "fleetd-driver-test")
    logger.logLevel = .critical
    let daemon = try await FleetDaemon.build(configuration: configuration, logger: logger)
    // The daemon's lifetime is the test's: it is stopped (and awaited) in `stop()`.
    let task = Task { try await daemon.run(shutdownSignals: []) }
    let bound = try await daemon.grpcPort()
    port.withLock { $0 = bound }
    running.withLock { $0 = (daemon, task) }
  }

  func stop() async throws {
    guard
      let (daemon, task) = running.withLock({ s in
        defer { s = nil }
        return s
      })
    else { return }
    await daemon.shutdown()
    try await task.value
  }

  func signer(role: Role) async throws -> TokenSigner { try TokenSigner(key: try await key(role: role)) }

  func key(role: Role) async throws -> ServiceAccountKey {
    guard let daemon = running.withLock({ $0?.daemon }) else { throw CancellationError() }
    return try await KeyRing(storage: daemon.storage).add(provider: "acme", role: role)
  }

  /// Runs `body` against a fresh fleetd, stopping it afterwards whatever happens.
  static func with(graph: String? = nil, _ body: (Fleetd) async throws -> Void) async throws {
    let fleetd = Fleetd(graph: graph)
    try await fleetd.start()
    do {
      try await body(fleetd)
    } catch {
      try? await fleetd.stop()
      throw error
    }
    try await fleetd.stop()
  }

  /// Admin calls to set up and inspect the fleet.
  func vehicles<T: Sendable>(
    _ body: (Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>, Metadata) async throws -> T
  ) async throws -> T {
    let token = try await signer(role: .admin).token()
    return try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), ["authorization": "Bearer \(token)"])
    }
  }

  func createVehicle(_ id: String) async throws {
    try await vehicles { client, metadata in
      var request = Maps_Fleetengine_V1_CreateVehicleRequest()
      request.parent = "providers/acme"
      request.vehicleID = id
      request.vehicle.vehicleState = .offline
      request.vehicle.supportedTripTypes = [.exclusive]
      request.vehicle.maximumCapacity = 4
      request.vehicle.vehicleType.category = .auto
      _ = try await client.createVehicle(request, metadata: metadata)
    }
  }

  func createTrip(_ id: String, vehicle: String, pickup: LatLng) async throws {
    let token = try await signer(role: .admin).token()
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      var request = Maps_Fleetengine_V1_CreateTripRequest()
      request.parent = "providers/acme"
      request.tripID = id
      request.trip.tripType = .exclusive
      request.trip.vehicleID = vehicle
      request.trip.pickupPoint.point.latitude = pickup.latitude
      request.trip.pickupPoint.point.longitude = pickup.longitude
      request.trip.dropoffPoint.point.latitude = 43.7395
      request.trip.dropoffPoint.point.longitude = 7.4280
      _ = try await Maps_Fleetengine_V1_TripService.Client(wrapping: client).createTrip(
        request, metadata: ["authorization": "Bearer \(token)"])
    }
  }

  func vehicle(_ id: String) async throws -> Maps_Fleetengine_V1_Vehicle {
    try await vehicles { client, metadata in
      var request = Maps_Fleetengine_V1_GetVehicleRequest()
      request.name = "providers/acme/vehicles/\(id)"
      return try await client.getVehicle(request, metadata: metadata)
    }
  }
}

/// Signs tokens locally with a service-account key (a provider's token server would).
struct SigningTokenProvider: AuthorizationTokenProvider {
  let signer: TokenSigner
  var vehicleID: String?
  let fetches = Counter()

  func token(for context: AuthorizationContext) async throws -> String {
    fetches.increment()
    return try signer.token(vehicleID: vehicleID ?? context.vehicleID)
  }
}

final class Counter: Sendable {
  let value = Mutex(0)
  func increment() { value.withLock { $0 += 1 } }
  var count: Int { value.withLock { $0 } }
}

/// A reporter clock the test moves by hand.
final class ManualClock: ReporterClock {
  struct Sleeper {
    var deadline: Duration
    var continuation: CheckedContinuation<Void, any Error>
  }

  let state = Mutex<(now: Duration, sleepers: [UUID: Sleeper])>((.zero, [:]))

  var now: Duration { state.withLock { $0.now } }

  func advance(by step: Duration) {
    let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
      s.now += step
      let ready = s.sleepers.filter { $0.value.deadline <= s.now }
      for id in ready.keys { s.sleepers[id] = nil }
      return ready.values.map(\.continuation)
    }
    for continuation in due { continuation.resume() }
  }

  func sleep(until deadline: Duration) async throws {
    let id = UUID()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let resume = state.withLock { s -> Bool in
          if deadline <= s.now || Task.isCancelled { return true }
          s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return false
        }
        if resume { continuation.resume() }
      }
    } onCancel: {
      let sleeper = state.withLock { s in s.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }
}

/// Records what the reporter tells its listeners, and lets a test wait for it.
final class RecordingListener: VehicleReporterListener {
  enum Event: Sendable {
    case succeeded(VehicleUpdate)
    case failed(VehicleUpdate, DriverError)

    var update: VehicleUpdate {
      switch self {
      case .succeeded(let u), .failed(let u, _): u
      }
    }
    var error: DriverError? {
      if case .failed(_, let e) = self { return e }
      return nil
    }
  }

  let events = Mutex<[Event]>([])

  func vehicleReporter(_ reporter: VehicleReporter, didSucceed update: VehicleUpdate) {
    events.withLock { $0.append(.succeeded(update)) }
  }

  func vehicleReporter(_ reporter: VehicleReporter, didFail update: VehicleUpdate, with error: DriverError) {
    events.withLock { $0.append(.failed(update, error)) }
  }

  var all: [Event] { events.withLock { $0 } }

  /// Waits (real time, polling) until there are at least `count` events.
  @discardableResult
  func waitFor(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [Event] {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      let seen = all
      if seen.count >= count { return seen }
      try await Task.sleep(for: .milliseconds(10))
    }
    struct Timeout: Error, CustomStringConvertible {
      var description: String
    }
    throw Timeout(description: "expected \(count) reporter events, saw \(all.count): \(all.map { "\($0)" })")
  }
}

/// A fix at a point, `seconds` after a fixed start.
func fix(_ latitude: Double, _ longitude: Double, at seconds: Double) -> LocationFix {
  LocationFix(
    coordinate: LatLng(latitude: latitude, longitude: longitude), horizontalAccuracy: 5,
    time: Date(timeIntervalSince1970: 1_800_000_000 + seconds))
}

/// Runs a driver API against fleetd while `body` drives it; cancels it afterwards.
func driving(_ api: RidesharingDriverAPI, _ body: () async throws -> Void) async throws {
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await api.run() }
    do {
      try await body()
    } catch {
      group.cancelAll()
      throw error
    }
    group.cancelAll()
    try? await group.waitForAll()
  }
}
