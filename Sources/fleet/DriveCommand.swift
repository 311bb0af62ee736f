import ArgumentParser
import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetRouting
import FleetSimulator
import Foundation

struct DriveCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "drive",
    abstract: "Run simulated drivers on the Driver SDK: online, drive to assigned trips' waypoints, complete them.",
    discussion: """
      The simulation plays both the driver app (location updates, online/offline) and the
      provider's backend (trip statuses). The key is a server key, or the vehicle's own driver key
      (`fleetd keys add --role driver`), which may drive its vehicle and the trips assigned to it
      but not create the vehicle. Trips are created and assigned elsewhere, e.g. through fleetd's
      API or `fleet ride`.
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file (from `fleetd keys add`).") var key: String
  @Option(help: "Vehicle ID; with --vehicles N, the prefix of ID-1 … ID-N.") var vehicle: String
  @Option(help: "Number of vehicles to run at once.") var vehicles = 1
  @Option(help: "Road graph (from `fleetd graph build`) to drive on; without it, straight lines.") var graph: String?
  @Option(help: "Simulated seconds per real second.") var speedup = 1.0
  @Option(help: "Seconds between location updates (5-60).") var interval = 5
  @Option(help: "Complete this many trips per vehicle, then go offline and exit.") var trips: Int?
  @Option(
    parsing: .unconditional, help: "Where new vehicles start, LAT,LNG (default: a road picked from the vehicle ID).",
    transform: parsePoint)
  var start: LatLng?

  func validate() throws {
    guard vehicles >= 1 else { throw ValidationError("--vehicles must be at least 1") }
    guard speedup > 0, speedup.isFinite else { throw ValidationError("--speedup must be positive") }
    if let trips, trips < 1 { throw ValidationError("--trips must be at least 1") }
  }

  func run() async throws {
    let serviceKey = try ServiceAccountKey.load(path: key)
    let routing = try graph.map { try RoutingEngine(graph: $0) }
    try server.checkPort(for: .grpc)
    let endpoint = server.grpcEndpoint
    let ids = vehicles == 1 ? [vehicle] : (1...vehicles).map { "\(vehicle)-\($0)" }
    let drivers = try ids.map { id in
      var configuration = SimulatedDriver.Configuration(endpoint: endpoint, providerID: provider, vehicleID: id)
      configuration.speedup = speedup
      configuration.interval = .seconds(interval)
      configuration.trips = trips
      configuration.start = start
      return try SimulatedDriver(configuration: configuration, key: serviceKey, routing: routing) { line in
        // Written at once, also when the output goes to a file or a pipe.
        FileHandle.standardOutput.write(Data("\(timestamp()) \(line)\n".utf8))
      }
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for driver in drivers { group.addTask { try await driver.run() } }
      try await group.waitForAll()
    }
  }
}

func timestamp() -> String {
  Date().formatted(.iso8601.time(includingFractionalSeconds: true))
}
