import FleetAuth
import FleetClient
import FleetCore
import FleetDispatch
import FleetProto
import FleetRouting
import FleetServer
import FleetSimulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging

/// `fleetd demo`: fleetd with its dispatcher on a city's road graph, simulated drivers on the
/// Driver SDK, and simulated riders booking rides through the booking API — optionally delivery
/// vans working through days of parcels — all in one process over real gRPC on loopback. Prints the fleet page's address, a live trip's sharing page, and
/// the rides' progress, until SIGINT or SIGTERM.
public struct DemoCity: Sendable {
  public struct Configuration: Sendable {
    /// fleetd's own settings: data directory, addresses, road graph, dispatch.
    public var server: ServerConfiguration
    public var provider = "demo"
    public var vehicles = 30
    public var ridersPerMinute = 8.0
    /// Delivery vans running days of parcels (0: none), and each van's parcels a day.
    public var deliveryVans = 0
    public var parcelsPerVan = 12
    /// Simulated seconds per real second, for the drivers.
    public var speedup = 3.0
    /// The city's name, for the first line printed.
    public var cityName = "Monaco"
    /// The extract, for the riders' hotspots (stations, shops, hospitals, named places).
    public var osmPath: String?
    /// Real time between a driver's location reports.
    public var reportInterval: Duration = .seconds(2)
    /// Demand over the day, and the simulated time of day at the start (seconds after midnight).
    public var profile = DemandProfile.flat
    public var startOfDay = 8.0 * 3600

    public init(server: ServerConfiguration) { self.server = server }
  }

  public let configuration: Configuration
  let print: @Sendable (String) -> Void

  public init(configuration: Configuration, print: @escaping @Sendable (String) -> Void) {
    self.configuration = configuration
    self.print = print
  }

  public func run(logger: Logger) async throws {
    var server = configuration.server
    if server.dispatch == nil { server.dispatch = DispatchConfiguration() }
    // The demo's clock runs `speedup` times faster than real time, and so do its cars: at 6× a
    // car on a 50 km/h road moves 83 m a second, which trip progress would distrust as no real
    // car's and then freeze the ride's ETA and distance (seen after a restart).
    server.progress.maximumSpeed *= configuration.speedup
    guard let graph = server.graphPath else { throw FleetError(.failedPrecondition, "the demo needs a road graph") }
    let routing = try await RoutingEngine.load(graph: graph)
    server.routing = routing
    let daemon = try await FleetDaemon.build(configuration: server, logger: logger)
    let keys = try await DemoKeys.load(
      directory: server.dataDirectory, provider: configuration.provider, store: daemon.store)
    let places =
      try configuration.osmPath.map { try CityPlaces.load(routing: routing, osmPath: $0) }
      ?? CityPlaces(routing: routing)
    let (host, dataDirectory) = (server.host, server.dataDirectory)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await daemon.run() }
      group.addTask {
        try await simulate(
          daemon: daemon, host: host, dataDirectory: dataDirectory, routing: routing, keys: keys,
          places: places)
      }
      // fleetd stops on SIGINT/SIGTERM (or fails to start); the simulation stops with it.
      try await group.next()
      group.cancelAll()
    }
  }

  /// Once fleetd listens: the vehicles, the links, then drivers, riders and progress until cancelled.
  func simulate(
    daemon: FleetDaemon, host: String, dataDirectory: String, routing: RoutingEngine, keys: DemoKeys,
    places: CityPlaces
  ) async throws {
    let grpcPort = try await daemon.grpcPort()
    let httpPort = await daemon.restPort()
    try Task.checkCancellation()
    let endpoint = FleetEndpoint(host: ListenHost.loopback(host), port: grpcPort)
    let web = "http://\(Self.displayHost(host)):\(httpPort)"
    let client = GRPCClient(
      transport: try HTTP2ClientTransport.Posix(
        target: .dns(host: endpoint.host, port: endpoint.port), transportSecurity: .plaintext))
    let backend = DemoBackend(
      client: client, provider: configuration.provider, keys: keys,
      tokens: try ServiceAccountTokenProvider(key: keys.serverKey))
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await client.runConnections() }
      defer { client.beginGracefulShutdown() }
      try await backend.createVehicles(count: configuration.vehicles, places: places)
      print(
        """
        FleetKit demo: \(configuration.cityName), \(configuration.vehicles) simulated drivers, \
        \(Self.number(configuration.ridersPerMinute)) riders a minute, \(Self.number(configuration.speedup))× speed.
          fleetd:      gRPC \(endpoint.host):\(grpcPort), HTTP \(web), data in \(dataDirectory)
          Fleet page:  \(web)/fleet#token=\(try keys.server.token(lifetime: 3600))&key=\(keys.places)
        Tokens in these links last an hour. Ctrl-C stops the demo.
        """)
      // The drivers: `fleet simulate`'s, on the report stream, following their waypoints.
      var drivers = SimulatedFleet.Configuration(provider: configuration.provider, vehicles: configuration.vehicles)
      drivers.prefix = DemoBackend.vehiclePrefix
      drivers.reportInterval = configuration.reportInterval
      drivers.speedup = configuration.speedup
      let fleet = SimulatedFleet(
        configuration: drivers, routing: routing, places: places, tokens: backend.tokens, stats: SimulationStats(),
        requested: RequestTimes())
      let starts = try await fleet.prepareVehicles(client: client)
      group.addTask { try await fleet.run(clients: [client], starts: starts) }
      let demand = PoissonDemand(
        perMinute: configuration.ridersPerMinute, profile: configuration.profile, startOfDay: configuration.startOfDay,
        speedup: configuration.speedup, places: places, seed: UInt64.random(in: 0...UInt64.max))
      group.addTask {
        try await RiderStream(
          backend: backend, demand: .poisson(demand),
          priced: configuration.server.fleet.tariffs.providers[configuration.provider] != nil
        ).run()
      }
      group.addTask {
        try await DemoProgress(backend: backend, web: web, print: print).run()
      }
      if configuration.deliveryVans > 0 {
        group.addTask { try await deliveryDays(endpoint: endpoint, web: web, routing: routing, keys: keys) }
      }
      // The first failure ends the demo at once (waitForAll would hold it until every part ends).
      for try await _ in group {}
    }
  }

  /// Days of parcels, one after another, until cancelled: each starts with its parcels' first
  /// tracking page and ends with the day's outcome.
  func deliveryDays(endpoint: FleetEndpoint, web: String, routing: RoutingEngine, keys: DemoKeys) async throws {
    var day = DeliveryDay.Configuration(endpoint: endpoint, providerID: configuration.provider)
    day.vans = configuration.deliveryVans
    day.tasks = configuration.deliveryVans * configuration.parcelsPerVan
    day.speedup = configuration.speedup
    day.interval = .seconds(5)
    let consumer = keys.deliveryConsumer
    let vans = day.vans
    var number = 0
    while !Task.isCancelled {
      number += 1
      day.seed = UInt64(number)
      let summary = try await DeliveryDay(configuration: day, key: keys.serverKey, routing: routing) { _ in }
        .run { trackingIDs in
          guard let parcel = trackingIDs.first else { return }
          let token = (try? consumer.token(trackingID: parcel, lifetime: 3600)) ?? ""
          print(
            "Deliveries: \(trackingIDs.count) parcels on \(vans) vans; track one: \(web)/track/\(parcel)#token=\(token)"
          )
        }
      print("Deliveries: day done, \(summary.succeeded) delivered, \(summary.failed) failed; the next day starts")
    }
  }

  static func displayHost(_ host: String) -> String {
    let host = ListenHost.loopback(host)
    return host.contains(":") ? "[\(host)]" : host
  }

  static func number(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
  }
}

/// The demo's keys, kept in its data directory (`demo-keys/`) so that links stay valid across
/// restarts: a server key for the simulation and the fleet page, a consumer key for riders, an
/// API key for the fleet page's place search.
struct DemoKeys: Sendable {
  let serverKey: ServiceAccountKey
  let server: TokenSigner
  let consumer: TokenSigner
  /// Tracking pages' tokens (`deliveryconsumer`).
  let deliveryConsumer: TokenSigner
  /// The fleet page's API key for searching places.
  let places: String

  static func load(directory: String, provider: String, store: any ServerStore) async throws -> DemoKeys {
    let folder = URL(fileURLWithPath: directory).appendingPathComponent("demo-keys")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let ring = KeyRing(store: store)
    let registered = try await ring.list().filter { $0.revokeTime == nil }.map(\.keyID)
    func key(_ role: Role) async throws -> ServiceAccountKey {
      let path = folder.appendingPathComponent("\(provider)-\(role.rawValue).json").path
      if let existing = try? ServiceAccountKey.load(path: path), registered.contains(existing.privateKeyID) {
        return existing
      }
      let file = try await ring.add(provider: provider, role: role)
      try file.encoded().write(to: URL(fileURLWithPath: path), options: .atomic)
      try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
      return file
    }
    let serverKey = try await key(.server)
    return DemoKeys(
      serverKey: serverKey, server: try TokenSigner(key: serverKey),
      consumer: try TokenSigner(key: try await key(.consumer)),
      deliveryConsumer: try TokenSigner(key: try await key(.deliveryConsumer)),
      places: try await placesKey(folder: folder, store: store))
  }

  /// An API key for the fleet page's place search (the geo endpoints take API keys, not tokens).
  static func placesKey(folder: URL, store: any APIKeyStore) async throws -> String {
    let ring = APIKeyRing(store: store)
    let path = folder.appendingPathComponent("fleet-page.apikey")
    if let existing = try? String(contentsOf: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
      try await ring.find(key: existing) != nil
    {
      return existing
    }
    let key = try await ring.add(app: "fleetd demo: the fleet page's place search").key
    try Data(key.utf8).write(to: path, options: .atomic)
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path.path)
    return key
  }
}

extension TokenSigner {
  func token(lifetime: TimeInterval) throws -> String { try token(tripID: nil, vehicleID: nil, lifetime: lifetime) }
}
