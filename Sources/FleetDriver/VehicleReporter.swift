import FleetCore
import FleetPositioning
import FleetProto
import Foundation
import GRPCCore
import Synchronization

/// Keeps fleetd told where the vehicle is and whether it takes rides, as Fleet Engine's
/// `GMTDVehicleReporter`: with tracking enabled it sends the newest position every
/// `locationUpdateInterval`; it sends state changes at once; through an outage it keeps the
/// positions fleetd missed and delivers them, in order, once fleetd answers again.
///
/// The same reporter serves a delivery vehicle (`DeliveryDriverAPI`): positions and route
/// progress as UpdateDeliveryVehicle, with no vehicle state (a delivery vehicle has none).
///
/// The reporter works while its driver API runs. Properties and methods may be used from any
/// thread.
public final class VehicleReporter: Sendable {
  /// Which of Fleet Engine's vehicles the reporter keeps current.
  enum Kind: Sendable {
    /// A rides vehicle (`maps.fleetengine.v1.Vehicle`): positions and online/offline.
    case rides
    /// A delivery vehicle (`maps.fleetengine.delivery.v1.DeliveryVehicle`): positions only.
    case deliveries
  }

  struct State {
    var machine: ReporterMachine
    var listeners: [WeakListener] = []
    var lastVehicle: ReportedVehicle?
  }

  struct WeakListener {
    weak var listener: (any VehicleReporterListener)?
  }

  /// Sends one update with a token and answers the vehicle as fleetd stored it; the real one
  /// is a gRPC call.
  typealias Send = @Sendable (VehicleUpdate, String) async throws -> ReportedVehicle

  public let context: DriverContext
  let kind: Kind
  let clock: any ReporterClock
  let state: Mutex<State>
  let wakeup = Wakeup()
  let backlogStore: BacklogFile?

  init(context: DriverContext, kind: Kind = .rides, clock: any ReporterClock) {
    self.context = context
    self.kind = kind
    self.clock = clock
    backlogStore = context.reporting.backlogFile.map(BacklogFile.init)
    let saved = backlogStore?.load() ?? []
    let machine = ReporterMachine(configuration: context.reporting, backlog: saved, reportsState: kind == .rides)
    state = Mutex(State(machine: machine))
  }

  /// Whom the reporter's tokens are asked for.
  var tokenContext: AuthorizationContext {
    switch kind {
    case .rides: .vehicle(context.vehicleID)
    case .deliveries: .deliveryVehicle(context.vehicleID)
    }
  }

  // MARK: - Public API

  /// Whether positions are reported. Turning it off stops them and, for a rides vehicle, sends a
  /// final update that sets the vehicle OFFLINE.
  public var locationTrackingEnabled: Bool {
    get { state.withLock { $0.machine.trackingEnabled } }
    set {
      let now = clock.now
      if state.withLock({ $0.machine.setTracking(newValue, now: now) }) { wakeup.signal() }
    }
  }

  /// Time between position updates; 10 s by default, kept within 5…60 s.
  public var locationUpdateInterval: Duration {
    get { state.withLock { $0.machine.interval } }
    set {
      let now = clock.now
      state.withLock { $0.machine.setInterval(newValue, now: now) }
      wakeup.signal()
    }
  }

  /// Takes the vehicle online (ready for trips) or offline. Going online needs location
  /// tracking: fleetd cannot match a vehicle whose position it does not know.
  public func updateVehicleState(_ newState: VehicleState) throws(FleetClientError) {
    guard kind == .rides else {
      throw FleetClientError(
        .failedPrecondition, "a delivery vehicle has no vehicle state: its stops and tasks say what it does")
    }
    guard newState == .online || newState == .offline else {
      throw FleetClientError(.invalidArgument, "vehicle state must be online or offline")
    }
    try state.withLock { (s: inout State) throws(FleetClientError) in try s.machine.requestState(newState) }
    wakeup.signal()
  }

  /// Hands the reporter a position (for apps with their own location source).
  public func report(_ fix: LocationFix) {
    if state.withLock({ $0.machine.record(fix) }) { wakeup.signal() }
  }

  public func addListener(_ listener: any VehicleReporterListener) {
    state.withLock { s in
      s.listeners.removeAll { $0.listener == nil || $0.listener === listener }
      s.listeners.append(WeakListener(listener: listener))
    }
  }

  public func removeListener(_ listener: any VehicleReporterListener) {
    state.withLock { s in s.listeners.removeAll { $0.listener == nil || $0.listener === listener } }
  }

  /// The vehicle as fleetd last acknowledged it.
  public var lastReportedVehicle: ReportedVehicle? { state.withLock { $0.lastVehicle } }

  /// Positions waiting to be delivered after an outage.
  public var backlogCount: Int { state.withLock { $0.machine.backlog.count } }

  // MARK: - Work

  /// Reports until cancelled: reads the location provider, if any, and sends updates.
  func run(send: @escaping Send) async {
    await withDiscardingTaskGroup { group in
      if let provider = context.locationProvider {
        group.addTask { [self] in
          do {
            for try await fix in provider.fixes() { report(fix) }
          } catch {
            // The source failed; positions can still come through report(_:).
          }
        }
      }
      await loop(send: send)
      group.cancelAll()
    }
  }

  func loop(send: @escaping Send) async {
    while !Task.isCancelled {
      let now = clock.now
      switch state.withLock({ $0.machine.next(now: now) }) {
      case .wait(let deadline):
        await waitForChange(until: deadline)
      case .send(let plan):
        let update = await prepare(plan)
        let outcome: ReporterMachine.Outcome
        var vehicle: ReportedVehicle?
        do {
          let token: String
          do {
            token = try await context.tokenProvider.token(for: tokenContext)
          } catch {
            throw FleetClientError(.unauthenticated, "no token: \(error)")
          }
          vehicle = try await send(update, token)
          outcome = .acknowledged
        } catch {
          let failure = FleetClientError(error)
          if failure.code == .unauthenticated {
            await context.tokenProvider.invalidateToken(for: tokenContext)
          }
          outcome = .failed(failure)
        }
        if Task.isCancelled, case .failed(let error) = outcome, error.code == .cancelled { return }
        let finishedAt = clock.now
        let (listeners, backlog, backlogChanged) = state.withLock { s in
          let before = s.machine.backlog
          s.machine.finished(outcome, now: finishedAt, jitter: Double.random(in: 0...1))
          if let vehicle { s.lastVehicle = vehicle }
          s.listeners.removeAll { $0.listener == nil }
          return (s.listeners.compactMap(\.listener), s.machine.backlog, s.machine.backlog != before)
        }
        // The file changes only with the backlog: no disk write on an ordinary update.
        if backlogChanged { backlogStore?.save(backlog) }
        var told = update
        told.vehicle = vehicle
        for listener in listeners {
          switch outcome {
          case .acknowledged: listener.vehicleReporter(self, didSucceed: told)
          case .failed(let error): listener.vehicleReporter(self, didFail: told, with: error)
          }
        }
      }
    }
  }

  /// The update for a plan, with the navigation's route when it leads to the vehicle's next
  /// waypoint or stop (Fleet Engine's Driver SDK sends route progress only then).
  func prepare(_ plan: PlannedUpdate) async -> VehicleUpdate {
    var mask: [String] = []
    if plan.state != nil { mask.append("vehicle_state") }
    if plan.location != nil { mask.append("last_location") }
    if !plan.past.isEmpty { mask.append("past_locations") }
    var route: NavigationProgress?
    if plan.mayCarryRoute, plan.location != nil, let navigation = context.navigation,
      let progress = await navigation.currentProgress(),
      let next = state.withLock({ $0.lastVehicle?.nextDestination }),
      next.distance(to: progress.destination) <= 50
    {
      route = progress
      switch kind {
      case .rides: mask += ["current_route_segment", "remaining_distance_meters", "remaining_time_seconds"]
      case .deliveries:
        mask += [
          "current_route_segment", "current_route_segment_end_point", "remaining_distance_meters",
          "remaining_duration",
        ]
      }
    }
    let name = kind == .rides ? context.vehicleName : context.deliveryVehicleName
    return VehicleUpdate(
      vehicleName: name, location: plan.location, pastLocations: plan.past, vehicleState: plan.state,
      route: route, updateMask: mask, vehicle: nil)
  }

  func waitForChange(until deadline: Duration?) async {
    await withTaskGroup(of: Void.self) { group in
      if let deadline {
        group.addTask { [clock] in try? await clock.sleep(until: deadline) }
      }
      group.addTask { [wakeup] in await wakeup.wait() }
      await group.next()
      group.cancelAll()
    }
  }
}
