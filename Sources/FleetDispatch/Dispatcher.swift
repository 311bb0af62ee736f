import FleetCore
import FleetGeometry
import Foundation
import Logging

/// What one dispatch round did.
public struct DispatchRound: Sendable {
  public struct Assigned: Sendable, Hashable {
    public var ride: ResourceName
    public var vehicleID: String
    public var pickupSeconds: Double
    /// Sharing the car with other riders.
    public var pooled = false
    /// The vehicle was beyond the dispatch radius, offered because the ride's wait widened it
    /// (`DispatchRules.pickupRadiusGrowthPerMinute`).
    public var widened = false
  }

  /// Rides that waited for a vehicle at the start of the round.
  public var waiting = 0
  public var assigned: [Assigned] = []
  /// Rides taken from a vehicle that went offline or stale before the pickup.
  public var released: [ResourceName] = []
  /// Rides booked for later whose time to be dispatched came.
  public var releasedScheduled: [ResourceName] = []
  /// Rides moved to a free car that reaches the pickup clearly sooner (reassignment is on).
  public var reassigned: [Assigned] = []
  /// Rides that waited too long: NO_VEHICLE_FOUND.
  public var expired: [ResourceName] = []
  /// Assignments refused because the ride or the vehicle changed while the round ran; the
  /// ride is matched again next round.
  public var conflicts = 0
  public var duration: Duration = .zero
}

/// fleetd's dispatcher: every `interval` (at once after a round that served half a batch of a
/// larger backlog; rounds never overlap) it takes the rides waiting for a vehicle, finds each
/// one's candidate vehicles with SearchVehicles' rules and their pickup ETAs from one matrix
/// query, groups shared rides that can ride together (`Fleet.sharedDispatchOptions`), chooses by
/// the policy which vehicle serves which rides (`Pooling.plan`), and assigns them as a Fleet
/// Engine backend would (the trips' vehicle_id and the vehicle's waypoints), so that drivers
/// see the trips at once. Rides whose vehicle went away before the pickup are dispatched
/// again; rides nobody can serve in time end NO_VEHICLE_FOUND.
public final class Dispatcher: Sendable {
  public let fleet: Fleet
  public let configuration: DispatchConfiguration
  let logger: Logger

  public init(fleet: Fleet, configuration: DispatchConfiguration, logger: Logger) {
    self.fleet = fleet
    self.configuration = configuration
    self.logger = logger
  }

  /// Runs a round every `interval` until the task is cancelled; `report` hears of each.
  public func run(report: @escaping @Sendable (DispatchRound) -> Void = { _ in }) async {
    logger.notice(
      "dispatcher running",
      metadata: [
        "dispatch.policy": "\(configuration.policy.rawValue)", "dispatch.interval": "\(configuration.interval)",
      ])
    let clock = ContinuousClock()
    while !Task.isCancelled {
      let started = clock.now
      // A round runs to its end even when the dispatcher is cancelled (a shutdown): cutting its
      // writes short would fail the store's commit, and an embedded store then refuses every
      // write, the in-flight requests a graceful shutdown lets finish among them. Cancellation
      // stops the loop between rounds.
      switch await Task(operation: { try await self.round() }).result {
      case .success(let round):
        report(round)
        // A backlog that is being served (half a batch or more assigned) is matched at the
        // solver's pace, not the interval's: the interval collects requests, it does not ration
        // them. A backlog no car can take waits for the interval, so as not to spin.
        if round.waiting > configuration.maximumBatch, round.assigned.count >= configuration.maximumBatch / 2 {
          continue
        }
      case .failure(let error):
        // A failed write stops the fleet's writes altogether (fail-stop); the next round says so again.
        logger.error("dispatch round failed: \((error as? FleetError)?.message ?? "\(error)")")
      }
      try? await Task.sleep(until: started + configuration.interval, clock: clock)
    }
  }

  /// One round: release stranded rides and rides booked for now, expire old ones, match the rest.
  public func round() async throws(FleetError) -> DispatchRound {
    let started = ContinuousClock.now
    var result = DispatchRound()
    result.released = try await fleet.releaseStrandedRides(rules: configuration.rules)
    result.releasedScheduled = try await fleet.releaseScheduledRides(
      rules: configuration.rules, lead: configuration.scheduledLead, lookahead: configuration.scheduledLookahead)
    result.expired = try await fleet.expireRides(waitingLongerThan: configuration.noVehicleTimeout)
    let waiting = fleet.pendingRides()
    result.waiting = waiting.count
    let pending = Array(waiting.prefix(configuration.maximumBatch))
    for (_, rides) in Dictionary(grouping: pending, by: \.ride.provider).sorted(by: { $0.key < $1.key }) {
      let (assigned, conflicts) = try await match(rides)
      result.assigned += assigned
      result.conflicts += conflicts
    }
    // After the waiting rides: they have the free cars first.
    if let reassignment = configuration.reassignment {
      result.reassigned = try await reassign(reassignment)
    }
    result.duration = ContinuousClock.now - started
    for name in result.released {
      logger.info("ride released: its vehicle went away before the pickup", metadata: ["ride": "\(name)"])
    }
    for name in result.expired { logger.info("no vehicle found in time", metadata: ["ride": "\(name)"]) }
    for moved in result.reassigned {
      logger.info(
        "ride reassigned: a free car reaches the pickup sooner",
        metadata: ["ride": "\(moved.ride)", "vehicle": "\(moved.vehicleID)"])
    }
    for name in result.releasedScheduled {
      logger.info("scheduled ride released to the dispatcher", metadata: ["ride": "\(name)"])
    }
    if !result.assigned.isEmpty || result.conflicts > 0 {
      logger.debug(
        "dispatch round",
        metadata: [
          "dispatch.waiting": "\(result.waiting)", "dispatch.assigned": "\(result.assigned.count)",
          "dispatch.conflicts": "\(result.conflicts)", "dispatch.duration": "\(result.duration)",
        ])
    }
    return result
  }

  /// Matches one provider's waiting rides with its vehicles and assigns them: shared rides in
  /// groups first (batched policy), then every ride left one to one by the policy.
  func match(_ rides: [PendingRide]) async throws(FleetError) -> ([DispatchRound.Assigned], Int) {
    let rules = configuration.rules
    let fleet = self.fleet
    let policy = configuration.policy
    let waitWeight = configuration.waitWeight
    let radius = Double(rules.pickupRadiusMeters)
    // The matching's CPU (up to a second at a metro's size) on a thread of its own: on one of
    // the concurrency's shared threads, every request and report there would queue behind it.
    let plan = await onDedicatedThread(named: "dispatch round") {
      let shared =
        rides.contains { Fleet.isPoolable($0.ride) } ? fleet.sharedDispatchOptions(for: rides, rules: rules) : []
      // The rest one to one: each ride's vehicles by SearchVehicles' rules, pickup ETAs in one query.
      let others = rides.indices.filter { !Fleet.isPoolable(rides[$0].ride) }
      var oneToOne = [[DispatchOption]](repeating: [], count: rides.count)
      for (r, options) in zip(others, fleet.dispatchOptions(for: others.map { rides[$0] }, rules: rules)) {
        oneToOne[r] = options
      }
      let now = fleet.now()
      let waitCosts = rides.map { waitWeight * max(0, now.timeIntervalSince($0.ride.waitingSince)) }
      return Pooling.plan(
        rides: rides.count, shared: shared, oneToOne: oneToOne, policy: policy, waitCosts: waitCosts)
    }
    // Assigned concurrently: each is a durable write, and concurrent writes share a commit.
    let outcomes = await withTaskGroup(of: Result<[DispatchRound.Assigned], FleetError>.self) { group in
      for choice in plan {
        group.addTask {
          do throws(FleetError) {
            switch choice {
            case .shared(let option):
              let members = option.rides.map { rides[$0] }
              guard try await fleet.assign(members, option, rules: rules) else { return .success([]) }
              return .success(
                members.indices.map { m in
                  .init(
                    ride: members[m].ride.name, vehicleID: option.vehicleID, pickupSeconds: option.pickupSeconds[m],
                    pooled: option.rides.count > 1 || !option.plannedStops.isEmpty,
                    widened: option.vehiclePosition.distance(to: members[m].ride.request.pickupPoint!.point) > radius)
                })
            case .single(let r, let option):
              guard try await fleet.assign(rides[r], option) else { return .success([]) }
              return .success([
                .init(
                  ride: rides[r].ride.name, vehicleID: option.vehicleID, pickupSeconds: option.pickupSeconds,
                  widened: option.straightMetres > radius)
              ])
            }
          } catch {
            return .failure(error)
          }
        }
      }
      var outcomes: [Result<[DispatchRound.Assigned], FleetError>] = []
      for await outcome in group { outcomes.append(outcome) }
      return outcomes
    }
    var assigned: [DispatchRound.Assigned] = []
    var conflicts = 0
    for outcome in outcomes {
      switch outcome {
      case .success(let done) where !done.isEmpty: assigned += done
      case .success: conflicts += 1
      case .failure(let error) where error.code == .unavailable: throw error
      case .failure(let error):
        // The trip's own rules refused it (the vehicle's stops changed shape meanwhile): next round.
        logger.warning("assignment refused: \(error.message)")
        conflicts += 1
      }
    }
    return (assigned, conflicts)
  }

  /// Rides not yet picked up move to a free car that reaches their pickup at least
  /// `minimumSaving` sooner than their own: the largest savings first, each car and ride once a
  /// round (a greedy choice: moves are few and each must pay on its own).
  func reassign(_ settings: Reassignment) async throws(FleetError) -> [DispatchRound.Assigned] {
    let saving = settings.minimumSaving.seconds
    let rides = fleet.reassignableRides(minimumSeconds: saving, maximumAssignments: settings.maximumChanges)
    guard !rides.isEmpty else { return [] }
    let fleet = self.fleet
    let rules = configuration.rules
    let options = await onDedicatedThread(named: "dispatch round") {
      fleet.dispatchOptions(for: rides.map(\.pending), rules: rules)
    }
    var moves: [(ride: AssignedRide, option: DispatchOption, saving: Double)] = []
    for (ride, list) in zip(rides, options) {
      for option in list where option.vehicleID != ride.vehicleID && option.plannedStops.isEmpty {
        let gain = ride.pickupSeconds - option.pickupSeconds
        if gain >= saving { moves.append((ride, option, gain)) }
      }
    }
    moves.sort {
      ($0.saving, $1.ride.pending.ride.name.description, $1.option.vehicleID)
        > ($1.saving, $0.ride.pending.ride.name.description, $0.option.vehicleID)
    }
    var cars = Set<String>()
    var moved = Set<ResourceName>()
    var done: [DispatchRound.Assigned] = []
    for move in moves {
      let ride = move.ride.pending.ride
      let car = ride.provider + "/" + move.option.vehicleID
      guard !cars.contains(car), !moved.contains(ride.name) else { continue }
      cars.insert(car)
      moved.insert(ride.name)
      do throws(FleetError) {
        guard try await fleet.reassign(move.ride, to: move.option) else { continue }
        done.append(.init(ride: ride.name, vehicleID: move.option.vehicleID, pickupSeconds: move.option.pickupSeconds))
      } catch  where error.code != .unavailable {
        logger.warning("reassignment refused: \(error.message)")
      }
    }
    return done
  }
}
