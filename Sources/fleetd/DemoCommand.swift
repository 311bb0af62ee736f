import ArgumentParser
import FleetDemo
import FleetServer
import FleetSimulator
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
      and the sharing page to follow one ride as its rider would. With --deliveries, delivery
      vans work through days of parcels beside the rides (`fleet deliver`'s day, one after
      another), each day printing a parcel's tracking page. Ctrl-C stops it.
      """)

  @Option(help: "Data directory of the demo's fleetd (not the one of `fleetd serve`).")
  var dataDir = "./fleet-demo-data"
  @OptionGroup var listen: ListenOptions
  @OptionGroup var rideService: RideServiceOptions
  @Option(help: "OpenStreetMap extract (.osm.pbf) of another city (default: the bundled Monaco).")
  var osm: String?
  @Option(help: "Simulated drivers (up to \(Self.maximumVehicles)).") var vehicles = 30
  @Option(help: "Delivery vans running days of parcels beside the rides (up to \(Self.maximumVans); 0: none).")
  var deliveries = 0
  @Option(help: "Parcels per van and day, with --deliveries.") var parcels = 12
  @Option(
    help:
      "Seconds between a driver's location updates, 1-60 (default: 2 up to 1,000 vehicles, for smooth pages; 5 above, as drivers' apps report)."
  )
  var interval: Double?
  @Option(help: "Riders booking a ride, per minute (real time) at the profile's busiest hour.")
  var ridersPerMinute = 8.0
  @Option(help: "Demand over the day: flat, commute, or 24 comma-separated hourly numbers.") var profile = "flat"
  @Option(help: "Simulated time of day at the start, HH:MM (the profile's hour).") var clock = "08:00"
  @Option(help: "Simulated seconds per real second: for driving, stops and the demand's clock.") var speedup = 3.0
  @Option(help: "fleetd's log level (trace … critical); the demo's own progress prints regardless.")
  var logLevel = "warning"

  func validate() throws {
    guard (1...Self.maximumVehicles).contains(vehicles) else {
      throw ValidationError("--vehicles must be between 1 and \(Self.maximumVehicles)")
    }
    guard (0...Self.maximumVans).contains(deliveries) else {
      throw ValidationError("--deliveries must be between 0 and \(Self.maximumVans)")
    }
    guard (1...300).contains(parcels) else { throw ValidationError("--parcels must be between 1 and 300") }
    if let problem = settings.problem { throw ValidationError(problem) }
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
    configuration.deliveryVans = deliveries
    configuration.parcelsPerVan = parcels
    configuration.speedup = speedup
    configuration.reportInterval = .milliseconds(Int64((interval ?? (vehicles <= 1000 ? 2 : 5)) * 1000))
    configuration.profile = try DemandProfile.named(profile)
    configuration.startOfDay = settings.startOfDay ?? 0
    configuration.osmPath = extract
    configuration.cityName =
      osm.map { URL(fileURLWithPath: $0).lastPathComponent.replacingOccurrences(of: ".osm.pbf", with: "") } ?? "Monaco"
    do {
      try await DemoCity(configuration: configuration) { line in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
      }.run(logger: logger)
    } catch {
      throw listen.explain(error)
    }
  }

  /// The most simulated drivers the demo runs: measured on a 2-core machine (docs/benchmarks.md).
  static let maximumVehicles = 10_000
  /// Vans: each is a Driver SDK app with its own connection, unlike the rides' shared streams.
  static let maximumVans = 100

  var settings: CityRunSettings {
    CityRunSettings(
      interval: interval, speedup: speedup, ridersPerMinute: ridersPerMinute, profile: profile, clock: clock)
  }

  /// A file the repository ships (`data/…`): in the working directory's repository, or in the
  /// one fleetd was built from.
  static func bundled(_ relative: String) -> String? {
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(relative).path
    return [relative, source].first { FileManager.default.fileExists(atPath: $0) }
  }
}
