import ArgumentParser
import FleetAuth
import FleetGeometry
import FleetRouting
import FleetSimulator
import Foundation

struct DeliverCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "deliver",
    abstract: "Run a day of parcel deliveries: vans on the Driver SDK's delivery mode work through the day's tasks.",
    discussion: """
      Plays the delivery company's backend and its drivers against fleetd's Deliveries API. The
      backend creates the vans at a depot (or uses them, when they exist and have no stop left)
      and the day's DELIVERY tasks at street addresses of the graph, gives each van the tasks of
      one sector around the depot and has fleetd order its stops (:optimizeStops, applied). Each
      driver then reports the van's position, drives to each stop, marks it ENROUTE and ARRIVED,
      sets each task's outcome (a few fail: nobody home) and completes the stop. The command ends
      when every van has no stop left, printing the day as fleetd's tasks say; it fails unless
      every task is closed with an outcome. The key is a server key (`fleetd keys add --role server`).
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file with the server role (from `fleetd keys add --role server`).")
  var key: String
  @Option(help: "Road graph (from `fleetd graph build`) to drive on.") var graph: String?
  @Option(help: "OpenStreetMap extract: the road graph when --graph is not given.") var osm: String?
  @Option(help: "Van ID prefix: the vans are ID-1 … ID-N.") var vehicle = "van"
  @Option(help: "Number of vans.") var vehicles = 3
  @Option(help: "Number of the day's delivery tasks, shared between the vans.") var tasks = 30
  @Option(help: "Seconds between a van's location updates (5-60).") var interval = 5
  @Option(help: "Simulated seconds per real second: for driving and the time at each door.") var speedup = 1.0
  @Option(
    parsing: .unconditional, help: "The depot, LAT,LNG (default: the street junction nearest the middle).",
    transform: parsePoint)
  var depot: LatLng?
  @Option(help: "Share of tasks that fail (nobody home), 0-1.") var failureShare = 0.05
  @Option(help: "Seed of the addresses, the times at the door and the failures.") var seed: UInt64 = 1

  func validate() throws {
    guard graph != nil || osm != nil else { throw ValidationError("give --graph (a road graph) or --osm (an extract)") }
    guard vehicles >= 1 else { throw ValidationError("--vehicles must be at least 1") }
    guard tasks >= vehicles else { throw ValidationError("--tasks must be at least --vehicles (\(vehicles))") }
    guard (5...60).contains(interval) else { throw ValidationError("--interval must be 5-60 seconds") }
    guard speedup > 0, speedup.isFinite else { throw ValidationError("--speedup must be positive") }
    guard (0...1).contains(failureShare) else { throw ValidationError("--failure-share must be 0-1") }
  }

  func run() async throws {
    let serviceKey = try ServiceAccountKey.load(path: key)
    try server.checkPort(for: .grpc)
    let routing: RoutingEngine
    if let graph {
      routing = try await RoutingEngine.load(graph: graph)
    } else {
      let (network, _) = try OSMExtractor().extract(path: osm!)
      routing = RoutingEngine(network: network)
    }
    var configuration = DeliveryDay.Configuration(endpoint: server.grpcEndpoint, providerID: provider)
    configuration.vans = vehicles
    configuration.tasks = tasks
    configuration.vanPrefix = vehicle
    configuration.depot = depot
    configuration.speedup = speedup
    configuration.interval = .seconds(interval)
    configuration.failureShare = failureShare
    configuration.seed = seed
    let day = try DeliveryDay(configuration: configuration, key: serviceKey, routing: routing) { line in
      FileHandle.standardOutput.write(Data("\(timestamp()) \(line)\n".utf8))
    }
    let summary = try await day.run()
    print(
      "day done: \(summary.closed)/\(summary.tasks) tasks closed, \(summary.succeeded) succeeded, \(summary.failed) failed; "
        + String(format: "%.1f km driven in %.0f min", summary.driveMetres / 1000, summary.driveSeconds / 60))
    guard summary.closed == summary.tasks, summary.succeeded + summary.failed == summary.tasks else {
      throw ToolFailure("the day ended with tasks open or without an outcome")
    }
  }
}
