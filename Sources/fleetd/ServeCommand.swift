import ArgumentParser
import FleetAuth
import FleetCore
import FleetServer
import Logging

struct ServeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: "Run the gRPC and REST servers on the embedded SQLite store.")

  @Option(help: "Data directory (env FLEETD_DATA_DIR).")
  var dataDir = environment("FLEETD_DATA_DIR") ?? "./fleet-data"
  @Option(help: "Address to listen on (env FLEETD_HOST).")
  var host = environment("FLEETD_HOST") ?? "127.0.0.1"
  @Option(help: "gRPC port; 0 picks one (env FLEETD_GRPC_PORT).")
  var grpcPort = environment("FLEETD_GRPC_PORT").flatMap(Int.init) ?? 50051
  @Option(help: "REST, /metrics and /healthz port; 0 picks one (env FLEETD_HTTP_PORT).")
  var httpPort = environment("FLEETD_HTTP_PORT").flatMap(Int.init) ?? 8080
  @Option(help: "Accepted token audience; repeat for several (default: Fleet Engine's).")
  var audience: [String] = []
  @Option(help: "Per-provider quota per minute, BUCKET=N (create, read, update, search, list, billing).")
  var quota: [String] = []
  @Option(help: "Largest request body in bytes.")
  var maxRequestBytes = 4 * 1024 * 1024
  @Option(help: "Road graph from 'fleetd graph build': serves OSRM's HTTP API on the HTTP port (env FLEETD_GRAPH).")
  var graph: String?
  @Option(help: "OpenStreetMap extract (.osm.pbf) for /v1/geo:reverse and /v1/places:search (env FLEETD_GEO_OSM).")
  var geoOsm: String?
  @Option(help: "GeoNames cities CSV (lat,lon,name,admin1,admin2,cc) for cities worldwide (env FLEETD_GEONAMES).")
  var geonames: String?
  @Option(help: "trace, debug, info, notice, warning, error or critical (env FLEETD_LOG_LEVEL).")
  var logLevel = environment("FLEETD_LOG_LEVEL") ?? "info"

  func run() async throws {
    var configuration = ServerConfiguration()
    configuration.dataDirectory = dataDir
    configuration.host = host
    configuration.grpcPort = grpcPort
    configuration.httpPort = httpPort
    configuration.maximumRequestBytes = maxRequestBytes
    configuration.graphPath = graph ?? environment("FLEETD_GRAPH")
    configuration.geoOSMPath = geoOsm ?? environment("FLEETD_GEO_OSM")
    configuration.geoNamesPath = geonames ?? environment("FLEETD_GEONAMES")
    if !audience.isEmpty { configuration.auth.audiences = Set(audience) }
    for setting in quota { try configuration.quotas.apply(setting) }
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
    let daemon = try await FleetDaemon.build(configuration: configuration, logger: logger)
    logger.notice(
      "fleetd listening",
      metadata: ["grpc": "\(host):\(grpcPort)", "http": "\(host):\(httpPort)", "data.dir": "\(dataDir)"])
    try await daemon.run()
  }
}
