import FleetClient
import FleetCore
import FleetPositioning
import Foundation

/// What the reporter sends in one UpdateVehicle.
struct PlannedUpdate: Sendable, Hashable {
  var location: LocationFix?
  /// Unacknowledged earlier fixes, oldest first.
  var past: [LocationFix]
  var state: VehicleState?
  /// Whether route progress from the navigation may go with it.
  var mayCarryRoute: Bool
}

/// The reporter's decisions as a plain value: when to send what, what a success or a failure
/// changes. No I/O, no clock of its own: times are offsets on the reporter's clock.
///
/// - One update at a time: `next` plans one, and plans nothing else until `finished`.
/// - Tracking on: the newest fix every `interval`, the first one at once. A newer fix replaces
///   an older one that was not sent yet.
/// - A state change goes at once; turning tracking off sends a final OFFLINE (for a vehicle that
///   has a state: a delivery vehicle has none).
/// - A transient failure keeps the update's fix in the backlog and retries after an
///   exponentially growing, jittered delay; the backlog goes out as past locations, oldest
///   first, with the newest fix as the last location.
struct ReporterMachine: Sendable {
  enum Action: Sendable, Hashable {
    case send(PlannedUpdate)
    /// Nothing to do before this time (nil: until something changes).
    case wait(until: Duration?)
  }

  enum Outcome: Sendable {
    case acknowledged
    case failed(FleetClientError)
  }

  static let shortestInterval = Duration.seconds(5)
  static let longestInterval = Duration.seconds(60)

  static func clamp(_ interval: Duration) -> Duration {
    min(max(interval, shortestInterval), longestInterval)
  }

  var configuration: ReportingConfiguration
  /// Whether the vehicle has an online/offline state (a rides vehicle) or not (a delivery one).
  let reportsState: Bool
  private(set) var interval: Duration = .seconds(10)
  private(set) var trackingEnabled = false
  /// The newest fix, until an update carrying it is acknowledged.
  private(set) var latest: LocationFix?
  /// Time of the newest fix fleetd acknowledged.
  private(set) var acknowledgedUpTo: Date?
  /// Fixes that an update failed to deliver, oldest first.
  private(set) var backlog: [LocationFix] = []
  private(set) var pendingState: VehicleState?
  private(set) var finalOfflinePending = false
  private(set) var inFlight: PlannedUpdate?
  /// When the next periodic location is due (nil: none is).
  private(set) var nextPeriodic: Duration?
  private(set) var retryAt: Duration?
  private(set) var consecutiveFailures = 0
  private(set) var unauthenticatedRetried = false

  init(
    configuration: ReportingConfiguration = ReportingConfiguration(), backlog: [LocationFix] = [],
    reportsState: Bool = true
  ) {
    self.configuration = configuration
    self.reportsState = reportsState
    self.backlog = Array(backlog.sorted { $0.time < $1.time }.suffix(configuration.backlogCapacity))
  }

  // MARK: Inputs

  mutating func setInterval(_ requested: Duration, now: Duration) {
    interval = Self.clamp(requested)
    if let due = nextPeriodic { nextPeriodic = min(due, now + interval) }
  }

  /// Returns whether anything changed.
  mutating func setTracking(_ enabled: Bool, now: Duration) -> Bool {
    guard enabled != trackingEnabled else { return false }
    trackingEnabled = enabled
    if enabled {
      finalOfflinePending = false
      nextPeriodic = now
    } else {
      nextPeriodic = nil
      pendingState = nil
      finalOfflinePending = reportsState
    }
    return true
  }

  mutating func requestState(_ state: VehicleState) throws(FleetClientError) {
    if state == .online, !trackingEnabled {
      throw FleetClientError(
        .failedPrecondition, "cannot go online while location tracking is disabled: enable it first")
    }
    pendingState = state
  }

  /// A new position; an older one than the newest known is ignored (a position never goes
  /// back in time). Returns whether it should go out at once: tracking is on and a send was
  /// waiting for a fix.
  mutating func record(_ fix: LocationFix) -> Bool {
    if let latest, fix.time <= latest.time { return false }
    if let acknowledgedUpTo, fix.time <= acknowledgedUpTo { return false }
    latest = fix
    guard trackingEnabled, nextPeriodic == nil else { return false }
    // The periodic update was waiting for a fix: it is due now.
    nextPeriodic = .zero
    return true
  }

  // MARK: Decisions

  mutating func next(now: Duration) -> Action {
    if inFlight != nil { return .wait(until: nil) }
    if let retryAt, now < retryAt { return .wait(until: retryAt) }
    var plan: PlannedUpdate?
    if finalOfflinePending {
      plan = PlannedUpdate(location: unsentLatest, past: pastToSend, state: .offline, mayCarryRoute: false)
    } else if let state = pendingState {
      plan = PlannedUpdate(location: unsentLatest, past: pastToSend, state: state, mayCarryRoute: trackingEnabled)
    } else if trackingEnabled, let due = nextPeriodic, now >= due {
      if let fix = latest {
        plan = PlannedUpdate(location: fix, past: pastToSend, state: nil, mayCarryRoute: true)
      } else {
        // Nothing to send yet: the first fix will trigger it.
        nextPeriodic = nil
      }
    } else if retryAt != nil, !backlog.isEmpty || unsentLatest != nil, trackingEnabled {
      // A retry after a failure: deliver what is owed without waiting for the next period.
      plan = PlannedUpdate(location: latest, past: pastToSend, state: nil, mayCarryRoute: true)
    }
    if let plan {
      inFlight = plan
      return .send(plan)
    }
    if trackingEnabled, let due = nextPeriodic { return .wait(until: due) }
    return .wait(until: nil)
  }

  /// The newest fix unless fleetd already has it.
  var unsentLatest: LocationFix? {
    guard let latest else { return nil }
    if let acknowledgedUpTo, latest.time <= acknowledgedUpTo { return nil }
    return latest
  }

  var pastToSend: [LocationFix] {
    let latestTime = latest?.time
    return Array(
      backlog.filter { latestTime == nil || $0.time < latestTime! }.prefix(configuration.pastLocationsPerUpdate))
  }

  /// `jitter` in 0…1 spreads retries of many vehicles apart.
  mutating func finished(_ outcome: Outcome, now: Duration, jitter: Double) {
    guard let plan = inFlight else { return }
    inFlight = nil
    switch outcome {
    case .acknowledged:
      let sentTimes = Set(plan.past.map(\.time))
      backlog.removeAll { sentTimes.contains($0.time) }
      if let fix = plan.location {
        acknowledgedUpTo = max(acknowledgedUpTo ?? fix.time, fix.time)
        backlog.removeAll { $0.time == fix.time }
      }
      if plan.state != nil, pendingState == plan.state { pendingState = nil }
      if plan.state == .offline, finalOfflinePending, !trackingEnabled { finalOfflinePending = false }
      consecutiveFailures = 0
      unauthenticatedRetried = false
      retryAt = nil
      if trackingEnabled, plan.location != nil || plan.state != nil { nextPeriodic = now + interval }
    case .failed(let error):
      consecutiveFailures += 1
      if error.isTransient || error.code == .unauthenticated {
        if let fix = plan.location { keep(fix) }
        if error.code == .unauthenticated, !unauthenticatedRetried {
          // A fresh token may be all it takes: try again at once, once.
          unauthenticatedRetried = true
          retryAt = now
        } else {
          retryAt = now + backoff(jitter: jitter)
        }
      } else {
        // The server refused this update; sending it again would not change that. Its state
        // change is dropped (the app is told), its position kept unless it was the problem.
        if error.code != .invalidArgument {
          if let fix = plan.location { keep(fix) }
        } else {
          let refused = Set(plan.past.map(\.time))
          backlog.removeAll { refused.contains($0.time) }
          if let fix = plan.location, latest?.time == fix.time {
            acknowledgedUpTo = max(acknowledgedUpTo ?? fix.time, fix.time)
          }
        }
        if plan.state != nil, pendingState == plan.state { pendingState = nil }
        if plan.state == .offline { finalOfflinePending = false }
        retryAt = nil
        if trackingEnabled { nextPeriodic = now + interval }
      }
    }
  }

  func backoff(jitter: Double) -> Duration {
    RetryBackoff(initial: configuration.initialRetryDelay, maximum: configuration.maximumRetryDelay)
      .delay(afterFailures: consecutiveFailures, jitter: jitter)
  }

  /// A fix that did not get through joins the backlog (bounded: the oldest go first).
  mutating func keep(_ fix: LocationFix) {
    guard !backlog.contains(where: { $0.time == fix.time }) else { return }
    if let acknowledgedUpTo, fix.time <= acknowledgedUpTo { return }
    let index = backlog.firstIndex { $0.time > fix.time } ?? backlog.endIndex
    backlog.insert(fix, at: index)
    if backlog.count > configuration.backlogCapacity {
      backlog.removeFirst(backlog.count - configuration.backlogCapacity)
    }
  }
}
