import FleetCore
import FleetDriver
import FleetGeometry
import FleetRouting
import Foundation

/// A delivery driver and their app, simulated on the Driver SDK's delivery mode: reports the
/// van's position while it works through the stops fleetd holds for it, in order — ENROUTE,
/// a drive over the road graph at road speeds (times `speedup`), ARRIVED, the tasks' time at the
/// stop, each task's outcome, the stop completed — until none is left. The stops are read again
/// before each one, so a plan changed meanwhile (reordered, a stop added) is followed.
public struct SimulatedCourier: Sendable {
  public struct Configuration: Sendable {
    public var endpoint: FleetEndpoint
    public var providerID: String
    public var vehicleID: String
    /// Simulated seconds per real second.
    public var speedup: Double = 1
    /// Between location updates (5…60 s, real time).
    public var interval: Duration = .seconds(5)
    /// The share of tasks that fail (nobody home), drawn from `seed`.
    public var failureShare = 0.05
    public var seed: UInt64 = 1

    public init(endpoint: FleetEndpoint, providerID: String, vehicleID: String) {
      self.endpoint = endpoint
      self.providerID = providerID
      self.vehicleID = vehicleID
    }
  }

  /// What the courier did.
  public struct Summary: Sendable, Hashable {
    public var stops = 0
    public var succeeded = 0
    public var failed = 0
    public var driveMetres = 0.0
    public var driveSeconds = 0.0
  }

  public let configuration: Configuration
  let tokens: any AuthorizationTokenProvider
  let routing: RoutingEngine
  let log: @Sendable (String) -> Void

  public init(
    configuration: Configuration, tokens: any AuthorizationTokenProvider, routing: RoutingEngine,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.configuration = configuration
    self.tokens = tokens
    self.routing = routing
    self.log = log
  }

  func say(_ text: String) { log("\(configuration.vehicleID): \(text)") }

  /// Works through the van's stops from `start` until none is left.
  public func run(from start: LatLng) async throws -> Summary {
    let car = SimulatedLocationProvider.driving(from: start, speedup: configuration.speedup)
    let context = DriverContext(
      tokenProvider: tokens, providerID: configuration.providerID, vehicleID: configuration.vehicleID,
      endpoint: configuration.endpoint, locationProvider: car, navigation: CarNavigation(car: car))
    let api = DeliveryDriverAPI(driverContext: context)
    api.vehicleReporter.locationUpdateInterval = configuration.interval
    return try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await api.run() }
      api.vehicleReporter.locationTrackingEnabled = true
      defer { group.cancelAll() }
      let summary = try await work(api.vehicleManager, car: car)
      api.vehicleReporter.locationTrackingEnabled = false
      return summary
    }
  }

  func work(_ manager: DeliveryVehicleManager, car: SimulatedLocationProvider) async throws -> Summary {
    var summary = Summary()
    var random = SplitMix64(seed: configuration.seed)
    while true {
      try Task.checkCancellation()
      let stops = try await manager.vehicle().stops
      guard let stop = stops.first else { break }
      let tasks = stop.tasks.map(\.taskID).joined(separator: ", ")
      if stop.state != .arrived {
        if stop.state != .enroute { try await manager.enrouteToNextStop() }
        let drive = SimulatedDriver.plannedDrive(on: routing, from: car.position, to: stop.plannedLocation)
        car.drive(drive)
        while !car.hasArrived { try await Task.sleep(for: .milliseconds(250)) }
        summary.driveMetres += drive.distance
        summary.driveSeconds += drive.duration
        try await manager.arrivedAtStop()
        say(
          "ARRIVED at \(format(stop.plannedLocation)) for \(tasks) (\(Int(drive.distance)) m in \(Int(drive.duration)) s)"
        )
      }
      let work = stop.tasks.reduce(0) { $0 + ($1.duration ?? 60) }
      try await sleep(simulated: work, speedup: configuration.speedup)
      for task in stop.tasks {
        let outcome: TaskOutcome = random.nextUnit() < configuration.failureShare ? .failed : .succeeded
        try await manager.setTaskOutcome(outcome, taskID: task.taskID, location: car.position)
        if outcome == .succeeded { summary.succeeded += 1 } else { summary.failed += 1 }
        say("task \(task.taskID): \(outcome.wireName)")
      }
      try await manager.completedStop()
      summary.stops += 1
    }
    say("no stop left: \(summary.stops) stops, \(summary.succeeded + summary.failed) tasks")
    return summary
  }
}
