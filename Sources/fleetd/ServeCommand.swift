import ArgumentParser
import FleetAuth
import FleetCore
import FleetDispatch
import FleetServer
import Logging

struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve",
    abstract: "Run the gRPC and REST servers, on the embedded SQLite store or on PostgreSQL (--store).")

  @OptionGroup var store: StoreOptions
  @OptionGroup var listen: ListenOptions
  @OptionGroup var rideService: RideServiceOptions
  @Option(help: "Accepted token audience; repeat for several (default: Fleet Engine's).")
  var audience: [String] = []
  @Option(help: "Per-provider quota per minute, BUCKET=N (create, read, update, search, list, billing).")
  var quota: [String] = []
  @Option(help: "Largest request body in bytes.")
  var maxRequestBytes = 4 * 1024 * 1024
  @Option(
    help:
      "Most location reports a fleetkit.v1.VehicleUpdates stream may have unanswered, and most reports per REST batch."
  )
  var reportWindow = 1024
  @Option(
    help:
      "OpenStreetMap extract (.osm.pbf) to route and geocode on: its road graph is built at the first start and kept in the data directory, rebuilt when the file changes (env FLEETD_OSM)."
  )
  var osm: String?
  @Option(help: "Road graph from 'fleetd graph build': serves OSRM's HTTP API on the HTTP port (env FLEETD_GRAPH).")
  var graph: String?
  @Option(
    help:
      "OpenStreetMap extract (.osm.pbf) for /fleetkit/v1/geo:reverse and /fleetkit/v1/places:search (env FLEETD_GEO_OSM)."
  )
  var geoOsm: String?
  @Option(help: "GeoNames cities CSV (lat,lon,name,admin1,admin2,cc) for cities worldwide (env FLEETD_GEONAMES).")
  var geonames: String?
  @Flag(
    help: "Run the dispatcher and serve the booking API (fleetkit.v1.Rides, /fleetkit/v1/…) (env FLEETD_DISPATCH=1).")
  var dispatch = false
  @Option(help: "How the dispatcher matches rides: batched (all waiting rides at once) or greedy (nearest first).")
  var dispatchPolicy = "batched"
  @Option(help: "Seconds between dispatch rounds.")
  var dispatchInterval = 2.0
  @Option(help: "Seconds a ride may wait for a vehicle before it is NO_VEHICLE_FOUND.")
  var dispatchTimeout = 300.0
  @Option(
    help:
      "Seconds of pickup drive each second a ride has waited is worth when rides outnumber cars (0-10; 0: nearest rides first)."
  )
  var dispatchWaitWeight = 1.0
  @Option(
    help: """
      Metres (straight line, \(VehicleSearch.pickupRadii.lowerBound)-\(VehicleSearch.pickupRadii.upperBound)) \
      within which vehicles are offered a ride that has just begun to wait.
      """)
  var dispatchRadius: Int32 = DispatchRules().pickupRadiusMeters
  @Option(
    help:
      """
      Metres (\(DispatchRules.radiusGrowthsPerMinute.lowerBound)-\(DispatchRules.radiusGrowthsPerMinute.upperBound)) \
      the dispatch radius grows by for each minute a ride has waited, up to \(DispatchRules.widestPickupRadiusMeters) \
      (0: it never grows).
      """
  )
  var dispatchRadiusGrowth: Int32 = DispatchRules().pickupRadiusGrowthPerMinute
  @Option(help: "Shared rides: seconds a rider waits at most for a car that also carries others (from the request).")
  var poolMaxWait = 300.0
  @Option(help: "Shared rides: time aboard at most this many times the direct drive (1-3).")
  var poolMaxDetour = 1.5
  @Option(
    help:
      "Move a ride not yet picked up to a free car that reaches its pickup at least this many seconds sooner (30-3600), once per ride; off unless given."
  )
  var reassignSaving: Double?
  @Option(
    help:
      "SearchVehicles' COST weights, [PROVIDER=]SECONDS,METRES: points per second of pickup ETA and per metre in a straight line (default 1,0.1)."
  )
  var searchCost: [String] = []
  @Flag(help: "Deliver webhooks to loopback, private and link-local addresses too (development and tests).")
  var allowPrivateWebhooks = false
  @Option(help: "Hours a webhook delivery is tried again, with backoff, before it is given up.")
  var webhookRetryHours = 24.0
  @Option(
    help:
      "Days an ended trip (COMPLETE or CANCELED) and its ride are kept after their last change, as Fleet Engine's 7; 0 keeps them."
  )
  var tripRetentionDays = FleetConfiguration.fleetEngineTripRetention / 86_400
  @Option(
    help:
      "Seconds between re-customizations of routing with the traffic learned from the fleet (10-3600); 0: route at free-flow speeds."
  )
  var trafficInterval = 60.0
  @Option(help: "Where Leaflet and Leaflet.markercluster are, for the web pages (Debian's libjs-leaflet: the default).")
  var leafletDir = "/usr/share/javascript/leaflet"
  @Option(help: "trace, debug, info, notice, warning, error or critical (env FLEETD_LOG_LEVEL).")
  var logLevel = environment("FLEETD_LOG_LEVEL") ?? "info"

  func run() async throws {
    var configuration = ServerConfiguration()
    configuration.dataDirectory = store.dataDir
    configuration.postgres = try store.postgres
    listen.apply(to: &configuration)
    configuration.maximumRequestBytes = maxRequestBytes
    guard reportWindow >= 1 else { throw ValidationError("--report-window must be at least 1, got \(reportWindow)") }
    configuration.reportWindow = reportWindow
    let extract = osm ?? environment("FLEETD_OSM")
    configuration.graphPath = graph ?? environment("FLEETD_GRAPH")
    guard extract == nil || configuration.graphPath == nil else {
      throw ValidationError("give --osm (the graph is built from it) or --graph, not both")
    }
    configuration.geoOSMPath = geoOsm ?? environment("FLEETD_GEO_OSM") ?? extract
    configuration.mapAreasOSMPath = extract
    configuration.leafletDirectory = leafletDir
    configuration.geoNamesPath = geonames ?? environment("FLEETD_GEONAMES")
    if !audience.isEmpty { configuration.auth.audiences = Set(audience) }
    for setting in quota { try configuration.quotas.apply(setting) }
    for setting in searchCost { try Self.applyCost(setting, to: &configuration.fleet) }
    try rideService.apply(to: &configuration)
    configuration.webhooks.allowPrivateTargets = allowPrivateWebhooks
    guard webhookRetryHours > 0, webhookRetryHours <= 24 * 30 else {
      throw ValidationError("--webhook-retry-hours must be above 0 and at most 720")
    }
    configuration.webhooks.retry.window = .milliseconds(Int64(webhookRetryHours * 3_600_000))
    guard tripRetentionDays >= 0, tripRetentionDays <= 3650 else {
      throw ValidationError("--trip-retention-days must be between 0 (keep every trip) and 3650")
    }
    configuration.fleet.tripRetention = tripRetentionDays == 0 ? nil : tripRetentionDays * 86_400
    guard trafficInterval == 0 || (10...3600).contains(trafficInterval) else {
      throw ValidationError("--traffic-interval must be 0 (free flow) or between 10 and 3600 seconds")
    }
    configuration.trafficInterval = trafficInterval == 0 ? nil : .milliseconds(Int64(trafficInterval * 1000))
    if dispatch || environment("FLEETD_DISPATCH") == "1" {
      var settings = DispatchConfiguration()
      guard let policy = DispatchPolicy(rawValue: dispatchPolicy) else {
        throw ValidationError("--dispatch-policy must be batched or greedy, got '\(dispatchPolicy)'")
      }
      settings.policy = policy
      guard dispatchInterval > 0, dispatchInterval <= 3600 else {
        throw ValidationError("--dispatch-interval must be above 0 and at most 3600 seconds, got \(dispatchInterval)")
      }
      settings.interval = .milliseconds(Int64(dispatchInterval * 1000))
      guard dispatchTimeout > 0, dispatchTimeout <= 86_400 else {
        throw ValidationError("--dispatch-timeout must be above 0 and at most 86400 seconds, got \(dispatchTimeout)")
      }
      settings.noVehicleTimeout = .milliseconds(Int64(dispatchTimeout * 1000))
      guard (0...10).contains(dispatchWaitWeight) else {
        throw ValidationError("--dispatch-wait-weight must be between 0 and 10, got \(dispatchWaitWeight)")
      }
      settings.waitWeight = dispatchWaitWeight
      let radii = VehicleSearch.pickupRadii
      guard radii.contains(dispatchRadius) else {
        throw ValidationError(
          "--dispatch-radius must be between \(radii.lowerBound) and \(radii.upperBound) metres, got \(dispatchRadius)")
      }
      settings.rules.pickupRadiusMeters = dispatchRadius
      let growths = DispatchRules.radiusGrowthsPerMinute
      guard growths.contains(dispatchRadiusGrowth) else {
        throw ValidationError(
          "--dispatch-radius-growth must be between \(growths.lowerBound) and \(growths.upperBound) metres a minute, got \(dispatchRadiusGrowth)"
        )
      }
      settings.rules.pickupRadiusGrowthPerMinute = dispatchRadiusGrowth
      let waits = PoolingBounds.waitSeconds
      let detours = PoolingBounds.detours
      guard poolMaxWait >= Double(waits.lowerBound), poolMaxWait <= Double(waits.upperBound) else {
        throw ValidationError(
          "--pool-max-wait must be between \(waits.lowerBound) and \(waits.upperBound) seconds, got \(poolMaxWait)")
      }
      guard detours.contains(poolMaxDetour) else {
        throw ValidationError(
          "--pool-max-detour must be between \(detours.lowerBound) and \(detours.upperBound) (times the direct drive), got \(poolMaxDetour)"
        )
      }
      settings.rules.pooling = PoolingBounds(
        maximumWait: .milliseconds(Int64(poolMaxWait * 1000)), maximumDetour: poolMaxDetour)
      if let reassignSaving {
        guard reassignSaving >= 30, reassignSaving <= 3600 else {
          throw ValidationError("--reassign-saving must be between 30 and 3600 seconds, got \(reassignSaving)")
        }
        settings.reassignment = Reassignment(minimumSaving: .milliseconds(Int64(reassignSaving * 1000)))
      }
      configuration.dispatch = settings
    }
    guard let level = Logger.Level(rawValue: logLevel) else {
      throw ValidationError(
        "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = level
      return handler
    }
    let logger = Logger(label: "fleetd")
    if let extract {
      configuration.graphPath = try GraphCache.graph(for: extract, in: store.dataDir, logger: logger)
    }
    let daemon = try await FleetDaemon.build(configuration: configuration, logger: logger)
    let (host, dataDir) = (listen.host, store.dataDir)
    let storeName = configuration.postgres?.description ?? "sqlite"
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask {
        // Said once both servers are bound, with the ports they got (port 0 asks for any).
        guard let ports = await daemon.boundPorts() else { return }
        logger.notice(
          "fleetd listening",
          metadata: [
            "grpc": "\(host):\(ports.grpc)", "http": "\(host):\(ports.http)", "data.dir": "\(dataDir)",
            "store": "\(storeName)",
          ])
      }
      do {
        try await daemon.run()
      } catch {
        throw listen.explain(error)
      }
      group.cancelAll()
    }
  }

  /// `[PROVIDER=]SECONDS,METRES`.
  static func applyCost(_ setting: String, to configuration: inout FleetConfiguration) throws {
    let (provider, weights) =
      setting.contains("=")
      ? (String(setting.prefix { $0 != "=" }), String(setting.drop { $0 != "=" }.dropFirst())) : (nil, setting)
    let numbers = weights.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard numbers.count == 2, numbers.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
      throw ValidationError(
        "--search-cost must be [PROVIDER=]SECONDS,METRES with two non-negative numbers, got '\(setting)'")
    }
    let cost = MatchCostWeights(secondsOfETA: numbers[0], metresOfStraightLine: numbers[1])
    if let provider { configuration.providerCostWeights[provider] = cost } else { configuration.costWeights = cost }
  }
}
