import FleetAuth
import FleetClient
import FleetCore
import FleetDispatch
import FleetGeocoding
import FleetGeometry
import FleetProto
import FleetRouting
import FleetServer
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A real fleetd in the test process, on loopback ports, over a data directory that outlives it,
/// so that a test can stop it and start it again on the same ports and store. The one harness
/// of every test that talks to fleetd: gRPC clients, REST calls, keys and tokens.
public final class Fleetd: Sendable {
  /// What a test may set of `fleetd serve`; everything else is the default.
  public struct Options: Sendable {
    public var graph: String?
    /// A routing engine already built; else one per graph file for the whole test process.
    public var routing: RoutingEngine?
    public var geocoding: GeocodingEngine?
    /// With a dispatcher (`fleetd serve --dispatch`).
    public var dispatch: DispatchConfiguration?
    public var quotas = QuotaConfiguration()
    public var maximumRequestBytes = 4 * 1024 * 1024
    public var reportWindow = 1024
    public var fleet = FleetConfiguration()
    public var corsOrigins: [String] = []
    /// Re-customizes routing with learned traffic this often; off by default, since tests share
    /// one routing engine per graph (a test that sets it gives fleetd its own `routing`).
    public var trafficInterval: Duration?
    /// fleetd's log, for tests that read it; quiet otherwise.
    public var logger: Logger = {
      var logger = Logger(label: "fleetd-test")
      logger.logLevel = .critical
      return logger
    }()

    public init() {}
  }

  public let directory: String
  public let options: Options
  let running = Mutex<(daemon: FleetDaemon, task: Task<Void, any Error>)?>(nil)
  let port = Mutex(0)
  let boundHTTPPort = Mutex(0)
  let adminSigner = Mutex<TokenSigner?>(nil)

  public init(_ options: Options) {
    directory = NSTemporaryDirectory() + "fleetkit-fleetd-\(UUID().uuidString)"
    self.options = options
  }

  public convenience init(
    graph: String? = nil, geocoding: GeocodingEngine? = nil, dispatch: DispatchConfiguration? = nil
  ) {
    var options = Options()
    options.graph = graph
    options.geocoding = geocoding
    options.dispatch = dispatch
    self.init(options)
  }

  deinit { try? FileManager.default.removeItem(atPath: directory) }

  public var graph: String? { options.graph }
  public var dataDirectory: String { directory }
  public var grpcPort: Int { port.withLock { $0 } }
  /// REST, OSRM, geo endpoints and pages; 0 until started.
  public var httpPort: Int { boundHTTPPort.withLock { $0 } }
  public var httpURL: URL { URL(string: "http://127.0.0.1:\(httpPort)")! }
  public var endpoint: FleetEndpoint { FleetEndpoint(host: "127.0.0.1", port: grpcPort) }

  /// GET /metrics as one value per series (the series with its labels, as Prometheus writes it).
  public func metrics() async throws -> [String: Double] {
    let (data, _) = try await URLSession.shared.data(from: httpURL.appendingPathComponent("metrics"))
    var values: [String: Double] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
      let parts = line.split(separator: " ")
      if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    return values
  }

  /// The running daemon.
  public var daemon: FleetDaemon {
    get throws {
      guard let daemon = running.withLock({ $0?.daemon }) else { throw NotRunning() }
      return daemon
    }
  }

  struct NotRunning: Error, CustomStringConvertible {
    var description: String { "fleetd is not running" }
  }

  /// Signs admin tokens of provider "acme"; registered at the first start.
  public var admin: TokenSigner {
    get throws {
      guard let signer = adminSigner.withLock({ $0 }) else { throw NotRunning() }
      return signer
    }
  }

  public func start() async throws {
    var configuration = ServerConfiguration()
    configuration.dataDirectory = directory
    configuration.grpcPort = grpcPort  // 0 the first time: any free port
    configuration.httpPort = httpPort
    configuration.graphPath = options.graph
    configuration.routing = options.routing
    if configuration.routing == nil, let graph = options.graph {
      configuration.routing = try await sharedRoutingEngine(graph: graph)
    }
    configuration.geocoding = options.geocoding
    configuration.dispatch = options.dispatch
    configuration.quotas = options.quotas
    configuration.maximumRequestBytes = options.maximumRequestBytes
    configuration.reportWindow = options.reportWindow
    configuration.fleet = options.fleet
    configuration.corsOrigins = options.corsOrigins
    configuration.trafficInterval = options.trafficInterval
    let daemon = try await FleetDaemon.build(configuration: configuration, logger: options.logger)
    // The daemon's lifetime is the test's: it is stopped (and awaited) in `stop()`.
    let task = Task { try await daemon.run(shutdownSignals: []) }
    let bound = try await daemon.grpcPort()
    port.withLock { $0 = bound }
    let http = await daemon.restPort()
    boundHTTPPort.withLock { $0 = http }
    running.withLock { $0 = (daemon, task) }
    if adminSigner.withLock({ $0 }) == nil {
      let signer = try TokenSigner(key: try await KeyRing(store: daemon.store).add(provider: "acme", role: .admin))
      adminSigner.withLock { $0 = signer }
    }
  }

  public func stop() async throws {
    guard
      let (daemon, task) = running.withLock({ s in
        defer { s = nil }
        return s
      })
    else { return }
    await daemon.shutdown()
    try await task.value
  }

  /// A new key of `role` for `provider`, and its signer.
  public func signer(role: Role, provider: String = "acme") async throws -> TokenSigner {
    try TokenSigner(key: try await key(role: role, provider: provider))
  }

  public func key(role: Role, provider: String = "acme") async throws -> ServiceAccountKey {
    try await KeyRing(store: try daemon.store).add(provider: provider, role: role)
  }

  /// A new API key for the geo endpoints.
  public func apiKey(app: String = "test", perMinute: Int = 600, perDay: Int = 100_000) async throws -> String {
    try await APIKeyRing(store: try daemon.store).add(app: app, perMinute: perMinute, perDay: perDay).key
  }

  public func revokeAPIKey(_ key: String) async throws {
    let ring = APIKeyRing(store: try daemon.store)
    guard let record = try await ring.find(key: key) else { return }
    try await ring.revoke(id: record.id)
  }

  /// Runs `body` against a fresh fleetd, stopping it afterwards whatever happens.
  public static func with(
    _ options: Options, isolation: isolated (any Actor)? = #isolation, _ body: (Fleetd) async throws -> Void
  ) async throws {
    let fleetd = Fleetd(options)
    try await fleetd.start()
    do {
      try await body(fleetd)
    } catch {
      try? await fleetd.stop()
      throw error
    }
    try await fleetd.stop()
  }

  /// `with`, setting the options tests set most.
  public static func with(
    graph: String? = nil, routing: RoutingEngine? = nil, dispatch: DispatchConfiguration? = nil,
    quotas: QuotaConfiguration = QuotaConfiguration(), maximumRequestBytes: Int = 4 * 1024 * 1024,
    reportWindow: Int = 1024, corsOrigins: [String] = [], isolation: isolated (any Actor)? = #isolation,
    _ body: (Fleetd) async throws -> Void
  ) async throws {
    var options = Options()
    options.graph = graph
    options.routing = routing
    options.dispatch = dispatch
    options.quotas = quotas
    options.maximumRequestBytes = maximumRequestBytes
    options.reportWindow = reportWindow
    options.corsOrigins = corsOrigins
    try await with(options, body)
  }

  /// One gRPC client for both of Fleet Engine's services.
  public func withClients(
    _ body: (
      Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>,
      Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>
    ) async throws -> Void
  ) async throws {
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), .init(wrapping: client))
    }
  }

  /// One HTTP exchange; returns the status, the parsed JSON body and the headers.
  public func http(
    _ method: String, _ path: String, token: String?, body: String? = nil, bytes: Data? = nil,
    headers: [String: String] = [:]
  ) async throws -> (Int, [String: Any], [AnyHashable: Any]) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(httpPort)\(path)")!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
    if let body { request.httpBody = Data(body.utf8) }
    if let bytes { request.httpBody = bytes }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return (http.statusCode, json, http.allHeaderFields)
  }

  /// Admin calls to set up and inspect the fleet.
  public func vehicles<T: Sendable>(
    _ body: (Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>, Metadata) async throws -> T
  ) async throws -> T {
    let token = try admin.token()
    return try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), ["authorization": "Bearer \(token)"])
    }
  }

  /// Admin calls on trips.
  public func trips<T: Sendable>(
    _ body: (Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>, Metadata) async throws -> T
  ) async throws -> T {
    let token = try admin.token()
    return try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), ["authorization": "Bearer \(token)"])
    }
  }

  /// Sets a trip's status (and, for a stop, its index), and optionally assigns a vehicle.
  public func updateTrip(_ id: String, status: TripStatus? = nil, vehicle: String? = nil, stop: Int? = nil)
    async throws
  {
    try await trips { client, metadata in
      var request = Maps_Fleetengine_V1_UpdateTripRequest()
      request.name = "providers/acme/trips/\(id)"
      if let status {
        request.trip.tripStatus = Maps_Fleetengine_V1_TripStatus(rawValue: status.rawValue) ?? .unknownTripStatus
        request.updateMask.paths.append("trip_status")
      }
      if let vehicle {
        request.trip.vehicleID = vehicle
        request.updateMask.paths.append("vehicle_id")
      }
      if let stop {
        request.trip.intermediateDestinationIndex = Int32(stop)
        request.updateMask.paths.append("intermediate_destination_index")
      }
      _ = try await client.updateTrip(request, metadata: metadata)
    }
  }

  public func createVehicle(_ id: String, at position: LatLng? = nil) async throws {
    try await vehicles { client, metadata in
      var request = Maps_Fleetengine_V1_CreateVehicleRequest()
      request.parent = "providers/acme"
      request.vehicleID = id
      request.vehicle.vehicleState = .offline
      request.vehicle.supportedTripTypes = [.exclusive]
      request.vehicle.maximumCapacity = 4
      request.vehicle.vehicleType.category = .auto
      if let position {
        request.vehicle.lastLocation.location.latitude = position.latitude
        request.vehicle.lastLocation.location.longitude = position.longitude
      }
      _ = try await client.createVehicle(request, metadata: metadata)
    }
  }

  public func createTrip(
    _ id: String, vehicle: String?, pickup: LatLng, dropoff: LatLng = LatLng(latitude: 43.7395, longitude: 7.4280),
    stops: [LatLng] = []
  ) async throws {
    let token = try admin.token()
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      var request = Maps_Fleetengine_V1_CreateTripRequest()
      request.parent = "providers/acme"
      request.tripID = id
      request.trip.tripType = .exclusive
      request.trip.vehicleID = vehicle ?? ""
      request.trip.pickupPoint.point.latitude = pickup.latitude
      request.trip.pickupPoint.point.longitude = pickup.longitude
      request.trip.dropoffPoint.point.latitude = dropoff.latitude
      request.trip.dropoffPoint.point.longitude = dropoff.longitude
      request.trip.intermediateDestinations = stops.map { stop in
        var location = Maps_Fleetengine_V1_TerminalLocation()
        location.point.latitude = stop.latitude
        location.point.longitude = stop.longitude
        return location
      }
      _ = try await Maps_Fleetengine_V1_TripService.Client(wrapping: client).createTrip(
        request, metadata: ["authorization": "Bearer \(token)"])
    }
  }

  public func vehicle(_ id: String) async throws -> Maps_Fleetengine_V1_Vehicle {
    try await vehicles { client, metadata in
      var request = Maps_Fleetengine_V1_GetVehicleRequest()
      request.name = "providers/acme/vehicles/\(id)"
      return try await client.getVehicle(request, metadata: metadata)
    }
  }

  public func trip(_ id: String) async throws -> Maps_Fleetengine_V1_Trip {
    try await trips { client, metadata in
      var request = Maps_Fleetengine_V1_GetTripRequest()
      request.name = "providers/acme/trips/\(id)"
      return try await client.getTrip(request, metadata: metadata)
    }
  }
}

/// The Monaco geocoding engine (monaco.osm.pbf and cities1000.csv), built once per test process
/// on a thread of its own, so that tests waiting for it hold no thread.
public func monacoGeocoding() async throws -> GeocodingEngine { try await monacoGeocodingBuild.value }

let monacoGeocodingBuild = Task {
  try await GeocodingEngine.load(
    osmPath: monacoOSM, geoNamesPath: projectData.appendingPathComponent("cities1000.csv").path)
}

/// The repository's `data/` folder: the Monaco extract, its route queries, GeoNames' places.
public let projectData: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("data")

/// The Monaco extract's path.
public var monacoOSM: String { projectData.appendingPathComponent("monaco.osm.pbf").path }

/// A small cut of it (the port and La Condamine), for tests about building rather than routing:
/// its graph builds in a fraction of a second, Monaco's in seconds.
public var monacoPortOSM: String { projectData.appendingPathComponent("monaco-port.osm.pbf").path }

/// The Monaco road graph's file, built once per test process from
/// `data/monaco.osm.pbf` on a thread of its own (as `monacoGeocoding()`), so that
/// tests waiting for it hold none of the few threads every task in the process shares.
public func monacoGraph() async throws -> String { try await monacoGraphBuild.value }

let monacoGraphBuild = Task {
  try await onDedicatedThread(named: "monaco-graph-build") {
    let path = monacoGraphPath()
    let (network, _) = try OSMExtractor().extract(path: monacoOSM)
    try GraphFile.write(network, profile: CarProfile(), to: path)
    // Removed when the test process ends, so runs leave no graphs behind.
    atexit { unlink(monacoGraphPath()) }
    return path
  }
}

/// One file per test process.
func monacoGraphPath() -> String { NSTemporaryDirectory() + "fleetkit-tests-monaco-\(getpid()).graph" }

/// One routing engine per graph file for the whole test process. Building one is seconds of
/// CPU in a debug build; a dozen daemons each building their own at once on two cores stalled
/// every other test for longer than their timeouts.
public func sharedRoutingEngine(graph path: String) async throws -> RoutingEngine {
  let build = sharedRoutingEngines.withLock { engines in
    if let build = engines[path] { return build }
    let build = Task { try await RoutingEngine.load(graph: path) }
    engines[path] = build
    return build
  }
  return try await build.value
}

let sharedRoutingEngines = Mutex<[String: Task<RoutingEngine, any Error>]>([:])

public struct ConditionNotMet: Error, CustomStringConvertible {
  public var description: String
}

/// Waits (real time, polling) until `condition` holds; throws after `timeout`.
public func eventually(
  _ what: String = "condition", timeout: Duration = .seconds(60), isolation: isolated (any Actor)? = #isolation,
  _ condition: () async throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if try await condition() { return }
    try await Task.sleep(for: .milliseconds(50))
  }
  throw ConditionNotMet(description: "\(what) not met within \(timeout)")
}

/// A counter shared between tasks.
public final class Counter: Sendable {
  let value = Mutex(0)
  public init() {}
  public func increment() { value.withLock { $0 += 1 } }
  public var count: Int { value.withLock { $0 } }
}

/// A wall clock that tests move by hand.
public final class TestTime: Sendable {
  let value = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
  public init() {}
  public var now: Date { value.withLock { $0 } }
  public func advance(_ seconds: TimeInterval) { value.withLock { $0 += seconds } }
  /// `now` as a clock function, for what takes one.
  public var read: @Sendable () -> Date { { self.now } }
}

/// Log lines kept for tests that read what fleetd logged.
public final class LogCapture: Sendable {
  public struct Line: Sendable {
    public let level: Logger.Level
    public let message: String
    public let metadata: [String: String]
  }

  let kept = Mutex<[Line]>([])
  public init() {}

  public var lines: [Line] { kept.withLock { $0 } }

  /// A logger that keeps every line at `level` and above.
  public func logger(level: Logger.Level = .debug) -> Logger {
    var logger = Logger(label: "fleetd-test") { _ in Handler(capture: self) }
    logger.logLevel = level
    return logger
  }

  struct Handler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let merged = metadata.merging(event.metadata ?? [:]) { $1 }
      let line = Line(
        level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
      capture.kept.withLock { $0.append(line) }
    }
  }
}
