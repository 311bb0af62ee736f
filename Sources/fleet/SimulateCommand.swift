import ArgumentParser
import FleetAuth
import FleetCore
import FleetRouting
import FleetSimulator
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

struct SimulateCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "simulate",
    abstract: "Load a fleetd with a city: many simulated drivers on the report stream and riders booking rides.",
    discussion: """
      Drivers report every --interval seconds over the Driver SDK's report stream and follow the
      waypoints fleetd answers with: drive there over the road graph, move the trip through its
      statuses, wait at pickups. Riders book through the booking API at the times of a demand
      model (Poisson, --riders-per-minute at the --profile's busiest hour, from the extract's
      stations, shops, hospitals and named places and from its streets) or of a --replay CSV file
      (time,pickup_lat,pickup_lng,dropoff_lat,dropoff_lng,passengers). With --watchers-per-ride,
      riders' apps follow each booked ride over WatchTrip until it ends, timing each pushed
      location from the driver's report. Every --print-every seconds a line gives reports, rides
      and waits (and watchers and push latency), this process's CPU and memory, and fleetd's when
      --fleetd-pid names its process. Ctrl-C (or --duration) ends it with a summary.
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file with the server role (from `fleetd keys add --role server`).")
  var key: String
  @Option(help: "Road graph (from `fleetd graph build`) to drive on.") var graph: String?
  @Option(help: "OpenStreetMap extract: the riders' hotspots, and the road graph when --graph is not given.")
  var osm: String?
  @Option(help: "Vehicle ID prefix: the vehicles are ID-1 … ID-N.") var vehicle = "sim"
  @Option(help: "Number of vehicles.") var vehicles = 100
  @Option(help: "Seconds between a vehicle's location updates (1-60).") var interval = 5.0
  @Option(help: "Simulated seconds per real second: for driving, stops and the demand's clock.") var speedup = 1.0
  @Option(help: "Riders booking a ride, per minute (real time) at the profile's busiest hour.")
  var ridersPerMinute = 60.0
  @Option(help: "Demand over the day: flat, commute, or 24 comma-separated hourly numbers.")
  var profile = "commute"
  @Option(help: "Simulated time of day at the start, HH:MM (the profile's hour).") var clock = "08:00"
  @Option(
    help:
      "Replay these requests instead of the model: CSV time,pickup_lat,pickup_lng,dropoff_lat,dropoff_lng,passengers.")
  var replay: String?
  @Option(help: "Share of riders booking a SHARED ride, 0-1.") var sharedFraction = 0.0
  @Option(
    help:
      "WatchTrip streams following each booked ride until it ends (0-10): the rider's app and those it is shared with.")
  var watchersPerRide = 0
  @Option(help: "Stop after this many seconds (default: at Ctrl-C).") var duration: Double?
  @Option(help: "Seconds between the printed lines.") var printEvery = 10.0
  @Option(help: "fleetd's process ID, to print its CPU and memory beside the simulator's.") var fleetdPid: Int32?
  @Option(help: "Write the run's summary as JSON to this file.") var summary: String?
  @Option(help: "Seed of the demand model and the riders' choices.") var seed: UInt64 = 1
  @Option(help: "gRPC connections to fleetd that carry the report streams and the calls.") var connections = 2

  func validate() throws {
    guard (1...100_000).contains(vehicles) else { throw ValidationError("--vehicles must be between 1 and 100000") }
    if let problem = settings.problem { throw ValidationError(problem) }
    guard (0...1).contains(sharedFraction) else { throw ValidationError("--shared-fraction must be between 0 and 1") }
    guard (0...10).contains(watchersPerRide) else {
      throw ValidationError("--watchers-per-ride must be between 0 and 10")
    }
    if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
    guard (1...64).contains(connections) else { throw ValidationError("--connections must be between 1 and 64") }
    guard printEvery >= 1 else { throw ValidationError("--print-every must be at least 1 second") }
    guard graph != nil || osm != nil else { throw ValidationError("give --graph (a road graph) or --osm (an extract)") }
  }

  var settings: CityRunSettings {
    CityRunSettings(
      interval: interval, speedup: speedup, ridersPerMinute: ridersPerMinute, profile: profile, clock: clock)
  }

  func run() async throws {
    let serviceKey = try ServiceAccountKey.load(path: key)
    try server.checkPort(for: .grpc)
    let say: @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data("\($0)\n".utf8)) }
    let started = ContinuousClock.now
    let routing: RoutingEngine
    if let graph {
      routing = try await RoutingEngine.load(graph: graph)
    } else {
      say("building the road graph of \(osm!) (give --graph to skip this)")
      let (network, _) = try OSMExtractor().extract(path: osm!)
      routing = RoutingEngine(network: network)
    }
    let places =
      try osm.map { try CityPlaces.load(routing: routing, osmPath: $0) } ?? CityPlaces(routing: routing)
    let demand: Demand
    if let replay {
      let text: String
      do {
        text = try String(contentsOfFile: replay, encoding: .utf8)
      } catch {
        throw ToolFailure("--replay: cannot read \(replay): \(error.localizedDescription)")
      }
      do {
        var replayed = try ReplayDemand(csv: text, source: replay)
        replayed.speedup = speedup
        demand = .replay(replayed)
      } catch {
        throw ToolFailure("--replay: \(error.message)")
      }
    } else {
      demand = .poisson(
        PoissonDemand(
          perMinute: ridersPerMinute, profile: try DemandProfile.named(profile), startOfDay: settings.startOfDay ?? 0,
          speedup: speedup, places: places, seed: seed))
    }
    say(
      "\(places.points.count) street points, \(places.hotspots.count) hotspots; ready in \(Int((ContinuousClock.now - started).seconds)) s"
    )

    var fleet = SimulatedFleet.Configuration(provider: provider, vehicles: vehicles)
    fleet.prefix = vehicle
    fleet.reportInterval = .milliseconds(Int64(interval * 1000))
    fleet.speedup = speedup
    var riders = SimulatedRiders.Configuration(
      provider: provider, prefix: "\(vehicle)-ride-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))")
    riders.sharedFraction = sharedFraction
    var configuration = CitySimulation.Configuration(fleet: fleet, riders: riders)
    configuration.watchers.perRide = watchersPerRide
    configuration.printEvery = .milliseconds(Int64(printEvery * 1000))
    configuration.fleetdPID = fleetdPid
    configuration.seed = seed
    configuration.connections = connections
    let simulation = try CitySimulation(
      configuration: configuration, routing: routing, places: places, demand: demand, key: serviceKey, print: say)
    let endpoint = server.grpcEndpoint
    let result = try await withThrowingTaskGroup(of: CitySimulation.Summary?.self) { group in
      group.addTask { try await simulation.run(endpoint: endpoint) }
      group.addTask {
        await Self.interrupted(within: duration)
        return nil
      }
      // Whichever ends first: the other is cancelled, and the simulation hands in its summary.
      var summary: CitySimulation.Summary?
      while let next = try await group.next() {
        if let next { summary = next } else { group.cancelAll() }
      }
      return summary
    }
    guard let result else { return }
    say(Self.describe(result))
    if let summary {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      try encoder.encode(result).write(to: URL(fileURLWithPath: summary))
    }
  }

  /// Returns at SIGINT or SIGTERM, or after `duration` seconds.
  static func interrupted(within duration: Double?) async {
    let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number)
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      sources.append(source)
    }
    defer { sources.forEach { $0.cancel() } }
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        for await _ in signals { return }
      }
      if let duration { group.addTask { try? await Task.sleep(for: .milliseconds(Int64(duration * 1000))) } }
      await group.next()
      group.cancelAll()
      continuation.finish()
    }
  }

  static func describe(_ s: CitySimulation.Summary) -> String {
    var text = String(
      format: """
        summary: %.0f s, %d vehicles (%d online); reports %.0f/s, %d failed, p50 %.1f ms, p99 %.1f ms
          rides: %d requested, %d booked, %d refused, %d assigned, %d picked up, %d completed; \
        wait mean %.0f s, p90 %.0f s; booking p99 %.0f ms
          driven %.0f km, %.0f %% empty; simulator %.2f cores, %.0f MB
        """, s.seconds, s.vehicles, s.vehiclesOnline, s.reportsPerSecond, s.reportsFailed, s.reportP50Milliseconds,
      s.reportP99Milliseconds, s.ridesRequested, s.ridesBooked, s.ridesRefused, s.ridesAssigned, s.ridesPickedUp,
      s.ridesCompleted, s.meanWaitSeconds, s.p90WaitSeconds, s.bookingP99Milliseconds, s.kilometresDriven,
      s.emptyShare * 100, s.simulatorCores, s.simulatorResidentMegabytes)
    if let cores = s.fleetdCores, let megabytes = s.fleetdResidentMegabytes {
      text += String(format: "; fleetd %.2f cores, %.0f MB", cores, megabytes)
    }
    if s.watchersOpened > 0 {
      text += String(
        format: "\n  watchers: %d opened, at most %d at once; push p50 %.1f ms, p99 %.1f ms", s.watchersOpened,
        s.watchersPeak, s.pushP50Milliseconds, s.pushP99Milliseconds)
      if !s.watchFailures.isEmpty { text += "; failed: " + Self.byCode(s.watchFailures) }
    }
    if !s.reportFailures.isEmpty { text += "\n  reports failed: " + Self.byCode(s.reportFailures) }
    if !s.refusals.isEmpty { text += "\n  refused: " + Self.byCode(s.refusals) }
    return text
  }

  /// Counts by gRPC code (or error type), as `CODE N, CODE N`.
  static func byCode(_ counts: [String: Int]) -> String {
    counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
  }
}
