import FleetAuth
import FleetClient
import FleetGRPCTransport
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization

/// A city under load, outside fleetd: simulated drivers (`SimulatedFleet`) and riders
/// (`SimulatedRiders`) against a fleetd over gRPC, a line of figures every `printEvery` —
/// its own CPU and memory apart from fleetd's (when fleetd's process is known) — and a summary
/// at the end. `fleet simulate` runs it; `fleetd demo` runs the same models in its process.
public struct CitySimulation: Sendable {
  public struct Configuration: Sendable {
    public var fleet: SimulatedFleet.Configuration
    public var riders: SimulatedRiders.Configuration
    public var watchers = SimulatedWatchers.Configuration()
    public var printEvery: Duration = .seconds(10)
    /// fleetd's process, to report its CPU and memory beside the simulation's.
    public var fleetdPID: Int32?
    /// gRPC connections to fleetd (report streams and calls spread over them).
    public var connections = 2
    public var seed: UInt64 = 1

    public init(fleet: SimulatedFleet.Configuration, riders: SimulatedRiders.Configuration) {
      self.fleet = fleet
      self.riders = riders
    }
  }

  /// A run's figures: the simulation's own view and, where known, fleetd's cost.
  public struct Summary: Sendable, Codable {
    public var seconds = 0.0
    public var vehicles = 0
    public var vehiclesOnline = 0
    public var reportsPerSecond = 0.0
    public var reportsFailed = 0
    public var reportFailures: [String: Int] = [:]
    public var reportP50Milliseconds = 0.0
    public var reportP99Milliseconds = 0.0
    public var ridesRequested = 0
    public var ridesBooked = 0
    public var ridesRefused = 0
    public var refusals: [String: Int] = [:]
    public var bookingP99Milliseconds = 0.0
    public var watchersOpened = 0
    /// The most WatchTrip streams open at once.
    public var watchersPeak = 0
    public var pushP50Milliseconds = 0.0
    public var pushP99Milliseconds = 0.0
    public var watchFailures: [String: Int] = [:]
    public var ridesAssigned = 0
    public var ridesPickedUp = 0
    public var ridesCompleted = 0
    public var meanWaitSeconds = 0.0
    public var p90WaitSeconds = 0.0
    public var kilometresDriven = 0.0
    public var emptyShare = 0.0
    public var simulatorCores = 0.0
    public var simulatorResidentMegabytes = 0.0
    public var fleetdCores: Double?
    public var fleetdResidentMegabytes: Double?
  }

  public let configuration: Configuration
  let routing: RoutingEngine
  let places: CityPlaces
  let demand: Demand
  let tokens: ServiceAccountTokenProvider
  let print: @Sendable (String) -> Void
  public let stats = SimulationStats()

  public init(
    configuration: Configuration, routing: RoutingEngine, places: CityPlaces, demand: Demand, key: ServiceAccountKey,
    print: @escaping @Sendable (String) -> Void
  ) throws {
    self.configuration = configuration
    self.routing = routing
    self.places = places
    self.demand = demand
    tokens = try ServiceAccountTokenProvider(key: key)
    self.print = print
  }

  /// Runs until cancelled (a replay's riders end on their own; the drivers drive on), and
  /// returns the summary.
  public func run(endpoint: FleetEndpoint) async throws -> Summary {
    let clients = try (0..<max(1, configuration.connections)).map { _ in try Self.connect(to: endpoint) }
    let requested = RequestTimes()
    let fleet = SimulatedFleet(
      configuration: configuration.fleet, routing: routing, places: places, tokens: tokens, stats: stats,
      requested: requested)
    let watchers = SimulatedWatchers(
      configuration: configuration.watchers, provider: configuration.riders.provider, tokens: tokens, stats: stats)
    let riders = SimulatedRiders(
      configuration: configuration.riders, tokens: tokens, stats: stats, requested: requested, watchers: watchers)
    let started = ContinuousClock.now
    let usage = UsageMeter(fleetdPID: configuration.fleetdPID)
    return await withTaskGroup(of: Summary?.self) { group in
      for client in clients {
        group.addTask {
          try? await client.runConnections()
          return nil
        }
      }
      group.addTask {
        await withThrowingTaskGroup(of: Void.self) { work in
          work.addTask {
            let starts = try await fleet.prepareVehicles(client: clients[0])
            print("\(configuration.fleet.vehicles) vehicles ready")
            try await withThrowingTaskGroup(of: Void.self) { simulation in
              simulation.addTask { try await fleet.run(clients: clients, starts: starts) }
              simulation.addTask {
                try await watchers.run { Self.watcherClient(to: endpoint) }
                // Watching ends only with the simulation.
                try await Task.sleep(for: .seconds(86_400 * 365))
              }
              simulation.addTask {
                try await riders.run(demand: demand, client: clients[clients.count - 1], seed: configuration.seed)
                // A replay has ended: the drivers finish the rides it booked.
                try await Task.sleep(for: .seconds(86_400 * 365))
              }
              try await simulation.next()
            }
          }
          work.addTask {
            while true {
              try await Task.sleep(for: configuration.printEvery)
              print(line(usage: usage, since: started))
            }
          }
          do {
            try await work.next()
          } catch {
            if !(error is CancellationError) { print("simulation stopped: \(error)") }
          }
          work.cancelAll()
        }
        let summary = makeSummary(usage: usage, since: started)
        for client in clients { client.beginGracefulShutdown() }
        return summary
      }
      var summary = Summary()
      for await result in group { if let result { summary = result } }
      return summary
    }
  }

  /// A client of fleetd's gRPC endpoint, reconnecting within seconds when fleetd restarts.
  static func connect(to endpoint: FleetEndpoint) throws -> GRPCClient<HTTP2ClientTransport.Posix> {
    GRPCClient(
      transport: try HTTP2ClientTransport.Posix(
        target: .dns(host: endpoint.host, port: endpoint.port),
        transportSecurity: endpoint.usesTLS ? .tls : .plaintext,
        config: .defaults {
          $0.backoff = .init(initial: .milliseconds(250), max: .seconds(5), multiplier: 1.6, jitter: 0.2)
        }))
  }

  /// A client for riders' streams: thousands of them, each a push per report, on the lean
  /// frame transport (grpc-swift's own client, with a channel per stream, cost the machine more
  /// than the server it loaded: docs/benchmarks.md). The messages are the same on the wire.
  static func watcherClient(to endpoint: FleetEndpoint) -> GRPCClient<FrameClientTransport> {
    var configuration = FrameClientTransport.Configuration()
    configuration.usesTLS = endpoint.usesTLS
    return GRPCClient(
      transport: FrameClientTransport(host: endpoint.host, port: endpoint.port, configuration: configuration))
  }

  /// One period's line: the fleet, reports, rides, and each process's cost.
  func line(usage: UsageMeter, since started: ContinuousClock.Instant) -> String {
    let (period, total) = stats.takePeriod()
    let (online, onTrip) = stats.fleet
    let seconds = configuration.printEvery.seconds
    let cost = usage.sample()
    var text = String(
      format: "%5.0f s  online %d, on a trip %d | reports %.0f/s, failed %d, p50 %.1f ms, p99 %.1f ms",
      (ContinuousClock.now - started).seconds, online, onTrip, Double(period.reportsSent) / seconds,
      period.reportsFailed, period.reportLatency.percentile(0.5) * 1000, period.reportLatency.percentile(0.99) * 1000)
    text += String(
      format: " | rides %.0f/min: booked %d, refused %d, assigned %d, picked up %d, completed %d; wait mean %.0f s",
      Double(period.ridesRequested) * 60 / seconds, period.ridesBooked, period.ridesRefused, period.ridesAssigned,
      period.ridesPickedUp, period.ridesCompleted, total.pickupWait.mean)
    if configuration.watchers.perRide > 0 {
      text += String(
        format: " | watching %d, push p50 %.1f ms, p99 %.1f ms", stats.watching.load(ordering: .relaxed),
        period.pushLatency.percentile(0.5) * 1000, period.pushLatency.percentile(0.99) * 1000)
    }
    text += String(format: " | simulator %.2f cores, %.0f MB", cost.simulatorCores, cost.simulatorMegabytes)
    if let cores = cost.fleetdCores, let megabytes = cost.fleetdMegabytes {
      text += String(format: " | fleetd %.2f cores, %.0f MB", cores, megabytes)
    }
    return text
  }

  func makeSummary(usage: UsageMeter, since started: ContinuousClock.Instant) -> Summary {
    let total = stats.takePeriod().total
    let seconds = (ContinuousClock.now - started).seconds
    let whole = usage.whole()
    var summary = Summary()
    summary.seconds = seconds
    summary.vehicles = configuration.fleet.vehicles
    summary.vehiclesOnline = stats.fleet.online
    summary.reportsPerSecond = Double(total.reportsSent) / max(seconds, 1)
    summary.reportsFailed = total.reportsFailed
    summary.reportFailures = total.reportFailures
    summary.reportP50Milliseconds = total.reportLatency.percentile(0.5) * 1000
    summary.reportP99Milliseconds = total.reportLatency.percentile(0.99) * 1000
    summary.ridesRequested = total.ridesRequested
    summary.ridesBooked = total.ridesBooked
    summary.ridesRefused = total.ridesRefused
    summary.refusals = total.refusals
    summary.bookingP99Milliseconds = total.bookingLatency.percentile(0.99) * 1000
    summary.watchersOpened = total.watchersOpened
    summary.watchersPeak = stats.watchingPeak.load(ordering: .relaxed)
    summary.pushP50Milliseconds = total.pushLatency.percentile(0.5) * 1000
    summary.pushP99Milliseconds = total.pushLatency.percentile(0.99) * 1000
    summary.watchFailures = total.watchFailures
    summary.ridesAssigned = total.ridesAssigned
    summary.ridesPickedUp = total.ridesPickedUp
    summary.ridesCompleted = total.ridesCompleted
    summary.meanWaitSeconds = total.pickupWait.mean
    summary.p90WaitSeconds = total.pickupWait.percentile(0.9)
    summary.kilometresDriven = total.metresDriven / 1000
    summary.emptyShare = total.metresDriven > 0 ? total.metresEmpty / total.metresDriven : 0
    summary.simulatorCores = whole.simulatorCores
    summary.simulatorResidentMegabytes = whole.simulatorMegabytes
    summary.fleetdCores = whole.fleetdCores
    summary.fleetdResidentMegabytes = whole.fleetdMegabytes
    return summary
  }
}

/// CPU shares and memory of the simulation's process and of fleetd's, per period and over the run.
final class UsageMeter: Sendable {
  struct Sample: Sendable {
    var simulatorCores = 0.0
    var simulatorMegabytes = 0.0
    var fleetdCores: Double?
    var fleetdMegabytes: Double?
  }

  struct Mark: Sendable {
    var at = ContinuousClock.now
    var simulator: ProcessUsage?
    var fleetd: ProcessUsage?
  }

  let fleetdPID: Int32?
  let first: Mark
  let last: Mutex<Mark>

  init(fleetdPID: Int32?) {
    self.fleetdPID = fleetdPID
    let mark = Mark(simulator: ProcessUsage.read(), fleetd: fleetdPID.flatMap { ProcessUsage.read(pid: $0) })
    first = mark
    last = Mutex(mark)
  }

  func now() -> Mark { Mark(simulator: ProcessUsage.read(), fleetd: fleetdPID.flatMap { ProcessUsage.read(pid: $0) }) }

  /// Since the last sample.
  func sample() -> Sample {
    let mark = now()
    let previous = last.withLock { kept in
      defer { kept = mark }
      return kept
    }
    return Self.between(previous, mark)
  }

  /// Since the start.
  func whole() -> Sample { Self.between(first, now()) }

  static func between(_ a: Mark, _ b: Mark) -> Sample {
    let seconds = max((b.at - a.at).seconds, 0.001)
    var sample = Sample()
    if let x = a.simulator, let y = b.simulator {
      sample.simulatorCores = (y.cpuSeconds - x.cpuSeconds) / seconds
      sample.simulatorMegabytes = Double(y.residentBytes) / 1_048_576
    }
    if let x = a.fleetd, let y = b.fleetd {
      sample.fleetdCores = (y.cpuSeconds - x.cpuSeconds) / seconds
      sample.fleetdMegabytes = Double(y.residentBytes) / 1_048_576
    }
    return sample
  }
}
