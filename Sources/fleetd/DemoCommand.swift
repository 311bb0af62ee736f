import ArgumentParser
import FleetDemo
import FleetServer
import Foundation
import Logging

struct DemoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "demo",
    abstract:
      "Run a live city: fleetd with its dispatcher, simulated drivers, riders booking rides; prints the pages to watch.",
    discussion: """
      Runs on the bundled Monaco extract unless --osm names another, with the sample tariffs
      (data/tariffs.json: riders ask for quotes first, and some book ahead) and, on Monaco, the
      sample service area and zones (data/monaco-zones.geojson). fleetd keeps the demo's state
      in its own data directory (./fleet-demo-data), so a second run carries on with the same
      vehicles and links. Open the printed fleet page to watch the fleet and the dispatch queue,
      and the sharing page to follow one ride as its rider would. Ctrl-C stops it.
      """)

  @Option(help: "Data directory of the demo's fleetd (not the one of `fleetd serve`).")
  var dataDir = "./fleet-demo-data"
  @OptionGroup var listen: ListenOptions
  @OptionGroup var rideService: RideServiceOptions
  @Option(help: "OpenStreetMap extract (.osm.pbf) of another city (default: the bundled Monaco).")
  var osm: String?
  @Option(help: "Simulated drivers.") var vehicles = 30
  @Option(help: "Riders booking a ride, per minute on average.") var ridersPerMinute = 8.0
  @Option(help: "Simulated seconds per real second for the drivers.") var speedup = 3.0
  @Option(help: "fleetd's log level (trace … critical); the demo's own progress prints regardless.")
  var logLevel = "warning"

  func validate() throws {
    guard (1...1000).contains(vehicles) else { throw ValidationError("--vehicles must be between 1 and 1000") }
    guard ridersPerMinute >= 0, ridersPerMinute <= 6000 else {
      throw ValidationError("--riders-per-minute must be between 0 and 6000")
    }
    guard speedup > 0, speedup <= 100 else { throw ValidationError("--speedup must be above 0 and at most 100") }
    guard Logger.Level(rawValue: logLevel) != nil else {
      throw ValidationError(
        "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
    }
  }

  func run() async throws {
    let level = Logger.Level(rawValue: logLevel) ?? .warning
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = level
      return handler
    }
    let logger = Logger(label: "fleetd")
    guard let extract = osm ?? Self.bundled("data/monaco.osm.pbf") else {
      throw ValidationError(
        "the bundled Monaco extract (data/monaco.osm.pbf) is not here: run the demo from the repository, or give --osm FILE"
      )
    }
    guard FileManager.default.fileExists(atPath: extract) else { throw ValidationError("no such file: \(extract)") }
    var server = ServerConfiguration()
    server.dataDirectory = dataDir
    listen.apply(to: &server)
    server.graphPath = try GraphCache.graph(for: extract, in: dataDir, logger: logger)
    server.mapAreasOSMPath = extract
    server.geoOSMPath = extract
    try rideService.apply(
      to: &server,
      defaults: (Self.bundled("data/tariffs.json"), osm == nil ? Self.bundled("data/monaco-zones.geojson") : nil))
    var configuration = DemoCity.Configuration(server: server)
    configuration.vehicles = vehicles
    configuration.ridersPerMinute = ridersPerMinute
    configuration.speedup = speedup
    configuration.cityName =
      osm.map { URL(fileURLWithPath: $0).lastPathComponent.replacingOccurrences(of: ".osm.pbf", with: "") } ?? "Monaco"
    try await DemoCity(configuration: configuration) { line in
      FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }.run(logger: logger)
  }

  /// A file the repository ships (`data/…`): in the working directory's repository, or in the
  /// one fleetd was built from.
  static func bundled(_ relative: String) -> String? {
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(relative).path
    return [relative, source].first { FileManager.default.fileExists(atPath: $0) }
  }
}
