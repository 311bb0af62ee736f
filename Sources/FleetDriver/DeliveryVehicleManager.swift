import FleetCore
import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// A delivery vehicle's stops and tasks from the driver's side, as Fleet Engine's
/// `DeliveryVehicleManager`: the stops as fleetd holds them, and the driver's progress through
/// them. Each change reads the stops and rewrites them with UpdateDeliveryVehicle: the first stop
/// goes ENROUTE, then ARRIVED, and completing it removes it (fleetd then closes its tasks). A
/// task's outcome goes to fleetd with UpdateTask, under a token asked for that task.
///
/// Works while its `DeliveryDriverAPI` runs (a call made before waits for it to connect, up to
/// the call timeout). One change at a time: a change made while another is in flight fails with
/// ABORTED rather than racing it.
public actor DeliveryVehicleManager {
  typealias Service = Maps_Fleetengine_Delivery_V1_DeliveryService.Client<HTTP2ClientTransport.Posix>

  public nonisolated let context: DriverContext
  var service: Service?
  /// The stops as fleetd last answered them (nil: not read yet).
  var known: [VehicleStop]?
  var changing = false
  /// Attempts of a call that fails on the network or the server's load.
  static let attempts = 4

  init(context: DriverContext) { self.context = context }

  func connect(_ service: Service?) { self.service = service }

  // MARK: - Public API

  /// The vehicle as fleetd holds it, with its remaining stops (read now).
  public func vehicle() async throws(FleetClientError) -> ReportedVehicle {
    let request = Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest.with { $0.name = context.deliveryVehicleName }
    let vehicle = try await call(.deliveryVehicle(context.vehicleID)) { service, metadata, options in
      ReportedVehicle(try await service.getDeliveryVehicle(request, metadata: metadata, options: options))
    }
    known = vehicle.stops
    return vehicle
  }

  /// The remaining stops as fleetd last answered them (read from fleetd the first time).
  public func stops() async throws(FleetClientError) -> [VehicleStop] {
    if let known { return known }
    return try await vehicle().stops
  }

  /// Replaces the vehicle's remaining stops: the tasks on them are assigned to the vehicle, and
  /// tasks left off are closed by fleetd.
  @discardableResult
  public func setStops(_ stops: [VehicleStop]) async throws(FleetClientError) -> [VehicleStop] {
    try await change { _ in stops }
  }

  /// The driver set off for the first stop: it goes ENROUTE.
  @discardableResult
  public func enrouteToNextStop() async throws(FleetClientError) -> [VehicleStop] {
    try await change { stops throws(FleetClientError) in try Self.withFirst(stops, .enroute) }
  }

  /// The driver is at the first stop: it goes ARRIVED.
  @discardableResult
  public func arrivedAtStop() async throws(FleetClientError) -> [VehicleStop] {
    try await change { stops throws(FleetClientError) in try Self.withFirst(stops, .arrived) }
  }

  /// The driver is done at the first stop: it is removed, and fleetd closes its tasks (their
  /// outcomes are set with `setTaskOutcome`).
  @discardableResult
  public func completedStop() async throws(FleetClientError) -> [VehicleStop] {
    try await change { stops throws(FleetClientError) in
      guard stops.first?.state == .arrived else {
        throw FleetClientError(.failedPrecondition, "the first stop must be ARRIVED before it is completed")
      }
      return Array(stops.dropFirst())
    }
  }

  /// Records how a task ended: SUCCEEDED or FAILED, when, and where (without a location fleetd
  /// takes the vehicle's last one). Set once: fleetd refuses a different outcome later.
  public func setTaskOutcome(_ outcome: TaskOutcome, taskID: String, time: Date = Date(), location: LatLng? = nil)
    async throws(FleetClientError)
  {
    guard outcome != .unspecified else {
      throw FleetClientError(.invalidArgument, "task outcome must be SUCCEEDED or FAILED")
    }
    let request = Maps_Fleetengine_Delivery_V1_UpdateTaskRequest(
      taskName: "providers/\(context.providerID)/tasks/\(taskID)", outcome: outcome, time: time, location: location)
    _ = try await call(.task(taskID)) { service, metadata, options in
      try await service.updateTask(request, metadata: metadata, options: options)
    }
  }

  // MARK: - Work

  /// The stops with the first one in `state`.
  static func withFirst(_ stops: [VehicleStop], _ state: VehicleStop.State) throws(FleetClientError) -> [VehicleStop] {
    guard var first = stops.first else {
      throw FleetClientError(.failedPrecondition, "the vehicle has no remaining stop")
    }
    first.state = state
    return [first] + stops.dropFirst()
  }

  /// One change of the stops, made to the stops fleetd holds now (read just before: a list the
  /// backend changed meanwhile is not overwritten from an old copy, which would close the tasks
  /// of stops it added); one at a time.
  func change(_ edit: ([VehicleStop]) throws(FleetClientError) -> [VehicleStop]) async throws(FleetClientError)
    -> [VehicleStop]
  {
    guard !changing else {
      throw FleetClientError(.aborted, "another change to the stops is in flight: wait for it first")
    }
    changing = true
    defer { changing = false }
    let request = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest(
      vehicleName: context.deliveryVehicleName, stops: try edit(try await vehicle().stops))
    let vehicle = try await call(.deliveryVehicle(context.vehicleID)) { service, metadata, options in
      ReportedVehicle(try await service.updateDeliveryVehicle(request, metadata: metadata, options: options))
    }
    known = vehicle.stops
    return vehicle.stops
  }

  /// The client of the running `DeliveryDriverAPI`; a call made as the app starts it waits for
  /// its connection, up to the call timeout.
  func connected() async throws(FleetClientError) -> Service {
    let deadline = ContinuousClock.now + context.reporting.callTimeout
    while service == nil, ContinuousClock.now < deadline, !Task.isCancelled {
      try? await Task.sleep(for: .milliseconds(20))
    }
    guard let service else {
      throw FleetClientError(.failedPrecondition, "the DeliveryDriverAPI is not running: call run() first")
    }
    return service
  }

  /// A call with a token for `subject`, retried with backoff while it fails on the network or
  /// the server's load; a refused token is fetched anew once.
  func call<Answer: Sendable>(
    _ subject: AuthorizationContext,
    _ body: (Service, Metadata, CallOptions) async throws -> Answer
  ) async throws(FleetClientError) -> Answer {
    let service = try await connected()
    var options = CallOptions.defaults
    options.timeout = context.reporting.callTimeout
    let backoff = RetryBackoff(
      initial: context.reporting.initialRetryDelay, maximum: context.reporting.maximumRetryDelay)
    var failures = 0
    var refreshedToken = false
    while true {
      do {
        let token: String
        do {
          token = try await context.tokenProvider.token(for: subject)
        } catch {
          throw FleetClientError(.unauthenticated, "no token for \(subject): \(error)")
        }
        return try await body(service, ["authorization": "Bearer \(token)"], options)
      } catch {
        let failure = FleetClientError(error)
        failures += 1
        if failure.code == .unauthenticated, !refreshedToken {
          refreshedToken = true
          await context.tokenProvider.invalidateToken(for: subject)
          continue
        }
        guard failure.isTransient, failure.code != .cancelled, failures < Self.attempts, !Task.isCancelled else {
          throw failure
        }
        try? await Task.sleep(for: backoff.delay(afterFailures: failures, jitter: Double.random(in: 0...1)))
      }
    }
  }
}
