import FleetAuth
import FleetCore
import FleetDispatch
import FleetGRPCTransport
import FleetGeocoding
import FleetGeometry
import FleetMap
import FleetProgress
import FleetRouting
import FleetStorePostgres
import FleetStoreSQLite
import Foundation
import GRPCCore
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import Prometheus
import ServiceLifecycle
import Synchronization
import UnixSignals

/// fleetd: the gRPC and REST servers over one `Fleet`, on the embedded SQLite store or on
/// PostgreSQL. `fleetd serve` builds one and runs it; tests build one on port 0 and read the
/// bound ports.
public final class FleetDaemon: Sendable {
  public let fleet: Fleet
  public let store: any ServerStore
  let grpcTransport: FrameServerTransport
  let grpcServer: GRPCServer<FrameServerTransport>
  let http: HTTPServer
  let httpPort = BoundPort()
  let boundGRPCPort = BoundPort()
  let logger: Logger
  let runningGroup = Mutex<ServiceGroup?>(nil)
  /// The address and the ports the flags asked for (0: any).
  let listening: (host: String, grpcPort: Int, httpPort: Int)
  /// The dispatcher, with `--dispatch`.
  public let dispatcher: Dispatcher?
  let dispatchMetrics: DispatchMetrics?
  let webhooks: WebhookWorker
  let surgeMetrics: SurgeMetrics
  let rideMetrics: RideMetrics
  let lagMetrics: LagMetrics
  /// Re-customizes routing with learned traffic, when fleetd has a graph and an interval.
  let traffic: TrafficService?

  public static func build(configuration: ServerConfiguration, logger: Logger) async throws -> FleetDaemon {
    let store = try await StoreOpener.open(
      dataDirectory: configuration.dataDirectory, postgres: configuration.postgres, logger: logger)
    do {
      return try await build(configuration: configuration, store: store, logger: logger)
    } catch {
      await store.close()
      throw error
    }
  }

  static func build(configuration: ServerConfiguration, store: any ServerStore, logger: Logger) async throws
    -> FleetDaemon
  {
    var routing = configuration.routing
    if routing == nil, let graph = configuration.graphPath {
      routing = try await RoutingEngine.load(graph: graph)
      logger.notice(
        "road graph loaded",
        metadata: ["graph": "\(graph)", "edges": "\(routing!.network.edges.count)"])
    }
    var geocoding = configuration.geocoding
    if geocoding == nil, let osm = configuration.geoOSMPath {
      let extract = try await GeoDataCache.extract(for: osm, in: configuration.dataDirectory, logger: logger)
      geocoding = try await GeocodingEngine.load(
        extract: extract, geoNamesPath: configuration.geoNamesPath, logger: logger)
    } else if geocoding == nil, configuration.geoNamesPath != nil {
      geocoding = try await GeocodingEngine.load(
        osmPath: nil, geoNamesPath: configuration.geoNamesPath, logger: logger)
    }
    // With a road graph, fleetd computes every active trip's route, ETAs and traffic itself,
    // and learns the usual traffic of each time of the week (in fleetd's time zone, TZ).
    let progress = routing.map { routing in
      ProgressEngine(
        routing: routing,
        traffic: TrafficModel(
          weekly: configuration.trafficInterval == nil ? nil : WeeklyTraffic(roads: routing.network.edges.count * 2)),
        configuration: configuration.progress)
    }
    // Vehicle search ranks by road ETAs at the speeds progress learns; straight lines without.
    let travel = progress.map {
      RoadTravelEstimator(routing: $0.routing, learnsTraffic: $0.configuration.learnsTraffic)
    }
    var fleetConfiguration = configuration.fleet
    if let dispatch = configuration.dispatch { fleetConfiguration.dispatchRules = dispatch.rules }
    let fleet = try await Fleet(
      store: store, progress: progress, travel: travel, configuration: fleetConfiguration,
      quoteSealing: try await QuoteSealer.load(from: store))
    var tiles: TileCache?
    if let routing {
      var areas = MapAreas()
      if let path = configuration.mapAreasOSMPath {
        areas = try await onDedicatedThread(named: "map areas") { try MapAreas(reading: PBFReader(path: path)) }
      }
      tiles = TileCache(renderer: TileRenderer(network: routing.network, areas: areas))
    }
    return FleetDaemon(
      configuration: configuration, fleet: fleet, store: store, routing: routing, learned: progress?.traffic,
      geocoding: geocoding, tiles: tiles, logger: logger)
  }

  init(
    configuration: ServerConfiguration, fleet: Fleet, store: any ServerStore, routing: RoutingEngine?,
    learned: TrafficModel?, geocoding: GeocodingEngine?, tiles: TileCache?, logger: Logger
  ) {
    self.fleet = fleet
    self.store = store
    self.logger = logger
    let registry = PrometheusCollectorRegistry()
    let verifier = TokenVerifier(configuration: configuration.auth) { keyID in try await store.signingKey(id: keyID) }
    let metrics = RequestMetrics(registry: registry)
    let shared = store as? any SharedFleetStore
    let quotaShare: @Sendable () -> Int = { shared?.liveInstances ?? 1 }
    let barrier: @Sendable () async throws -> Void = {
      if let shared, shared.liveInstances > 1 { try await fleet.catchUpWithOtherInstances() }
    }
    let gate = RequestGate(
      verifier: verifier, quotas: configuration.quotas, quotaShare: quotaShare, barrier: barrier, metrics: metrics,
      logger: logger)
    var rpcs = FleetRPCs(fleet: fleet)
    rpcs.dispatching = configuration.dispatch != nil
    dispatcher = configuration.dispatch.map { Dispatcher(fleet: fleet, configuration: $0, logger: logger) }
    dispatchMetrics = dispatcher.map { _ in DispatchMetrics(registry: registry) }
    surgeMetrics = SurgeMetrics(registry: registry)
    let rideMetrics = RideMetrics(registry: registry)
    fleet.observeEvents { events in rideMetrics.record(events) }
    self.rideMetrics = rideMetrics
    lagMetrics = LagMetrics(registry: registry)
    if let routing, let learned, let interval = configuration.trafficInterval {
      traffic = TrafficService(
        routing: routing, traffic: learned, store: store, interval: interval,
        metrics: TrafficMetricsRecorder(registry: registry), logger: logger)
    } else {
      traffic = nil
    }
    webhooks = WebhookWorker(
      store: store, configuration: configuration.webhooks, metrics: WebhookMetrics(registry: registry),
      logger: logger)

    let grpcFront = GRPCFront(gate: gate, rpcs: rpcs)
    let intake = ReportIntake(gate: gate, fleet: fleet)
    var transportConfiguration = FrameServerTransport.Configuration()
    transportConfiguration.maximumRequestBytes = configuration.maximumRequestBytes
    grpcTransport = FrameServerTransport(
      host: configuration.host, port: configuration.grpcPort, configuration: transportConfiguration)
    grpcServer = GRPCServer(
      transport: grpcTransport,
      services: [
        TripServiceHandler(front: grpcFront), VehicleServiceHandler(front: grpcFront),
        TripUpdatesHandler(front: grpcFront), RidesHandler(front: grpcFront), DeliveryServiceHandler(front: grpcFront),
        TaskTrackingHandler(front: grpcFront), StopOrderingHandler(front: grpcFront),
        VehicleUpdatesHandler(intake: intake, window: configuration.reportWindow, balancer: LoopBalancer()),
      ])

    let router = Router(context: FleetRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routes = Routes(router: router, table: RouteTable(), onLoop: LoopRoutes())
    // Before the routes: it applies to those added after it.
    router.add(middleware: RouteGuard(routes: routes.table, corsOrigins: Set(configuration.corsOrigins)))
    RESTFront(
      gate: gate, rpcs: rpcs, intake: intake, maximumRequestBytes: configuration.maximumRequestBytes,
      maximumReports: configuration.reportWindow
    ).addRoutes(to: routes)
    let osrm = OSRMFront(engine: routing)
    osrm.addRoutes(to: routes)
    GeoFront(
      engine: geocoding, keys: APIKeyGate(ring: APIKeyRing(store: store), quotaShare: quotaShare), metrics: metrics
    )
    .addRoutes(to: routes)
    WebFront(tiles: tiles, leafletDirectory: configuration.leafletDirectory).addRoutes(to: routes)
    KeysFront(store: store).addRoutes(to: routes)
    routes.add("/healthz", crossOrigin: false) { _, _ -> Response in
      let healthy = fleet.isHealthy
      return Response(
        status: healthy ? .ok : .serviceUnavailable,
        body: .init(byteBuffer: ByteBuffer(string: healthy ? "ok\n" : "store failed\n")))
    }
    routes.add("/metrics", crossOrigin: false) { _, _ -> Response in
      var headers = HTTPFields()
      headers[.contentType] = "text/plain; version=0.0.4"
      return Response(
        status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }
    listening = (configuration.host, configuration.grpcPort, configuration.httpPort)
    let httpPort = self.httpPort
    http = HTTPServer(
      host: configuration.host, port: configuration.httpPort, router: router, routes: routes.onLoop,
      corsOrigins: Set(configuration.corsOrigins), warmUpPaths: ["/healthz"] + osrm.warmUpPaths,
      onListening: { httpPort.set($0) }, logger: logger)
  }

  /// Runs both servers until SIGTERM/SIGINT (graceful: in-flight requests finish) or cancellation.
  /// A graceful shutdown that takes longer than `stopGrace` (a client holding a stream open) is
  /// escalated to cancellation; every acknowledged write is already in the store by then.
  public func run(shutdownSignals: [UnixSignal] = [.sigterm, .sigint]) async throws {
    var services: [(String, any Service)] = [
      ("grpc", GRPCService(server: grpcServer, transport: grpcTransport, port: boundGRPCPort)), ("http", http),
    ]
    let shared = store as? any SharedFleetStore
    if let shared { services.append(("sharing", SharingService(fleet: fleet, store: shared))) }
    if let dispatcher, let dispatchMetrics {
      services.append(
        (
          "dispatch",
          DispatchService(fleet: fleet, dispatcher: dispatcher, lease: shared?.dispatchLease, metrics: dispatchMetrics)
        ))
    }
    services.append(("webhooks", WebhookService(worker: webhooks, lease: shared?.webhookLease)))
    services.append(("gauges", GaugeService(fleet: fleet, surge: surgeMetrics, rides: rideMetrics)))
    services.append(("retention", RetentionService(fleet: fleet, store: store, logger: logger)))
    services.append(("lag", LagService(metrics: lagMetrics, logger: logger)))
    if let traffic { services.append(("traffic", traffic)) }
    var configuration = ServiceGroupConfiguration(
      services: services.map { name, service in .init(service: StopWatch(service: service, name: name, logger: logger))
      },
      gracefulShutdownSignals: shutdownSignals, logger: logger)
    configuration.maximumGracefulShutdownDuration = Self.stopGrace
    let group = ServiceGroup(configuration: configuration)
    runningGroup.withLock { $0 = group }
    do {
      try await Self.checkPortsFree(listening)
      try await group.run()
    } catch {
      await closeStore()
      throw ListenFailure(error) ?? error
    }
    await closeStore()
  }

  /// A port the flags fixed that is taken is said before any service starts. A service that
  /// failed at once would have the service group cancel the others while its merged event
  /// sequence still registers its first wait, which can deadlock in swift-async-algorithms'
  /// `merge` (apple/swift-async-algorithms#430; seen once here: fleetd hung instead of exiting).
  static func checkPortsFree(_ listening: (host: String, grpcPort: Int, httpPort: Int)) async throws {
    let host = listening.host == "localhost" ? "127.0.0.1" : listening.host
    for (server, port) in [(ListenFailure.Server.grpc, listening.grpcPort), (.http, listening.httpPort)] where port != 0
    {
      let channel: any Channel
      do {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
          .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
          .bind(host: host, port: port).get()
      } catch let error as IOError {
        guard let reason = ListenFailure.reason(error.errnoCode) else { continue }
        throw ListenFailure(server: server, reason: reason)
      } catch {
        continue  // the server's own bind says what is wrong
      }
      try? await channel.close()
    }
  }

  /// How long a graceful shutdown may take before what is left is cancelled.
  static let stopGrace: Duration = .seconds(8)

  /// Closes the store, waiting at most a few seconds: its writes are all committed, and a
  /// connection stuck on a server that went away must not keep the process from exiting.
  func closeStore() async {
    let store = self.store
    do {
      try await TimeLimit.run(.seconds(3), CancellationError()) { await store.close() }
    } catch {
      logger.warning("the store did not close within 3 s; exiting without waiting for it")
    }
  }

  /// Shuts down gracefully, as SIGTERM does: stop accepting, finish in-flight requests, return.
  public func shutdown() async {
    await runningGroup.withLock { $0 }?.triggerGracefulShutdown()
  }

  /// The bound gRPC port (waits until the server listens).
  public func grpcPort() async throws -> Int {
    try await grpcTransport.listeningAddress.port ?? 0
  }

  /// The bound HTTP port (waits until the server listens).
  public func restPort() async -> Int { await httpPort.get() }

  /// Both bound ports once both servers listen, for `run`'s caller to announce; nil when
  /// cancelled first (a server that failed to bind makes `run` throw, and its caller cancels).
  public func boundPorts() async -> (grpc: Int, http: Int)? {
    let grpc = await boundGRPCPort.get()
    let http = await httpPort.get()
    return Task.isCancelled ? nil : (grpc, http)
  }
}

/// grpc-swift's server as a swift-service-lifecycle service.
struct GRPCService: Service {
  let server: GRPCServer<FrameServerTransport>
  let transport: FrameServerTransport
  /// Set once the transport listens. Learned beside `serve`, whose end resolves the
  /// transport's address either way, so the child never outlives it.
  let port: BoundPort

  func run() async throws {
    try await withGracefulShutdownHandler {
      try await withThrowingDiscardingTaskGroup { group in
        group.addTask {
          guard let address = try? await transport.listeningAddress else { return }
          port.set(address.port ?? 0)
        }
        try await server.serve()
      }
    } onGracefulShutdown: {
      server.beginGracefulShutdown()
    }
  }
}

/// The dispatcher's rounds as a swift-service-lifecycle service: stops between rounds on
/// graceful shutdown, so that no round is cut in the middle of its writes. On a shared store it
/// runs only while this instance holds the dispatch lease, after reading every commit made
/// before it took the lease.
struct DispatchService: Service {
  let fleet: Fleet
  let dispatcher: Dispatcher
  let lease: (any Lease)?
  let metrics: DispatchMetrics

  func run() async throws {
    await cancelWhenGracefulShutdown {
      guard let lease else { return await dispatcher.run { round in metrics.record(round) } }
      await lease.whileLeading(probe: .seconds(1)) {
        do {
          try await fleet.catchUpWithOtherInstances()
        } catch {
          return
        }
        await dispatcher.run { round in metrics.record(round) }
      }
    }
  }
}

/// On a shared store: applies the other instances' commits as they come, and keeps this
/// instance counted and the change log pruned.
struct SharingService: Service {
  let fleet: Fleet
  let store: any SharedFleetStore

  func run() async throws {
    await cancelWhenGracefulShutdown {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { await store.follower.follow(fleet, every: .seconds(1)) }
        group.addTask { await store.maintain(interval: .seconds(2), keepChanges: .seconds(15 * 60)) }
      }
    }
  }
}

/// A port learned once a server is bound; readers wait for it (0 when they are cancelled first).
final class BoundPort: Sendable {
  struct State {
    var port: Int?
    var waiters: [UInt64: CheckedContinuation<Int, Never>] = [:]
    var nextWaiter: UInt64 = 0
  }

  let state = Mutex(State())

  func set(_ port: Int) {
    let waiters = state.withLock { s in
      s.port = port
      defer { s.waiters = [:] }
      return s.waiters.values
    }
    for waiter in waiters { waiter.resume(returning: port) }
  }

  func get() async -> Int {
    let id = state.withLock { s in
      defer { s.nextWaiter += 1 }
      return s.nextWaiter
    }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let port = state.withLock { s -> Int? in
          if let port = s.port { return port }
          if Task.isCancelled { return 0 }
          s.waiters[id] = continuation
          return nil
        }
        if let port { continuation.resume(returning: port) }
      }
    } onCancel: {
      state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: 0)
    }
  }
}
