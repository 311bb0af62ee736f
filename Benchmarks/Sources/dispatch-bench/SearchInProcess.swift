import ArgumentParser
import BenchSupport
import FleetCore
import FleetProgress
import FleetRouting
import FleetStoreSQLite
import Foundation
import Logging

/// SearchVehicles in process, one search at a time on one core: what each order_by costs
/// fleetd itself, without the transport or other load.
struct SearchInProcess: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "search-cpu")

  @Option(help: "The road graph (from `fleetd graph build`).") var graph: String
  @Option var vehicles = 5000
  @Option var searches = 2000
  @Option var radius: Int32 = 3000
  @Option var count: Int32 = 10

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    var random = Seeded(42)
    let positions = roadPoints(routing, count: vehicles, random: &random)
    let pickups = roadPoints(routing, count: 500, random: &random)
    let dropoffs = roadPoints(routing, count: 500, random: &random)
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    let directory = base + "fleetkit-search-cpu-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var logger = Logger(label: "search-cpu")
    logger.logLevel = .critical
    let progress = ProgressEngine(routing: routing)
    let fleet = try await Fleet(
      store: try SQLiteStore(directory: directory, logger: logger), progress: progress,
      travel: RoadTravelEstimator(routing: routing))
    let admin = Caller.admin(of: "bench")
    for (i, position) in positions.enumerated() {
      var v = Vehicle(provider: "bench", id: "v\(i)")
      v.state = .online
      v.supportedTripTypes = [.exclusive, .shared]
      v.maximumCapacity = 4
      v.category = .auto
      v.lastLocation = VehicleLocation(location: position)
      _ = try await fleet.createVehicle(
        caller: admin, provider: "bench", vehicleID: v.id, vehicle: VehicleInput(vehicle: v))
    }
    print(
      "| in process, \(vehicles) vehicles, count \(count), radius \(radius) m | searches/s (1 core) | p50 ms | p99 ms | vehicles considered |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for order in VehicleMatchOrder.allCases where order != .unknown {
      var latencies: [Duration] = []
      let clock = ContinuousClock()
      let started = clock.now
      for i in 0..<searches {
        var search = VehicleSearch()
        search.pickupPoint = TerminalLocation(point: pickups[i % pickups.count])
        search.dropoffPoint = TerminalLocation(point: dropoffs[i % dropoffs.count])
        search.pickupRadiusMeters = radius
        search.count = count
        search.minimumCapacity = 1
        search.tripTypes = [.exclusive]
        search.vehicleTypes = [.auto]
        search.orderBy = order
        let t = clock.now
        _ = try fleet.searchVehicles(caller: admin, provider: "bench", search: search)
        latencies.append(clock.now - t)
      }
      let total = clock.now - started
      let perSecond = Double(searches) / total.seconds
      print(
        "| \(order.wireName) | \(Int(perSecond)) | \(milliseconds(latencies, 0.5)) | \(milliseconds(latencies, 0.99)) | \(positions.filter { $0.distance(to: pickups[0]) <= Double(radius) }.count) |"
      )
    }
  }
}
