import FleetGeometry
import Foundation

/// What ordering a delivery vehicle's stops gives: the stops in the new order, and what the
/// current and the new order cost.
public struct StopOrderingOutcome: Sendable {
  /// The stops in the new order, with their drives (as set when applied).
  public var journey: [JourneySegment]
  public var current: StopOrdering.Measures
  public var optimized: StopOrdering.Measures
  /// No order drives less than this (seconds).
  public var driveLowerBound: Double
  /// When the measures start (the seconds in them count from here).
  public var start: Date
  public var applied: Bool
  /// The stops as they were when ordered: the vehicle must still have them to apply the order.
  var from: [VehicleStop]
}

extension Fleet {
  /// FleetKit's stop ordering (`:optimizeStops`): the vehicle's remaining stops in the order that
  /// drives least while keeping their tasks' time windows (`StopOrdering`), from where the vehicle
  /// is, over the road matrix; the stop under way or reached stays first. With `apply`, the new
  /// order is set as UpdateDeliveryVehicle would set it.
  public func optimizeStops(caller: Caller, name: ResourceName, apply: Bool) async throws(FleetError)
    -> StopOrderingOutcome
  {
    let outcome = try orderStops(caller: caller, name: name)
    return apply ? try await applyStopOrder(outcome, caller: caller, name: name) : outcome
  }

  /// The new order and its measures, not applied: the costly part, synchronous, for the caller to
  /// run off the event loops.
  public func orderStops(caller: Caller, name: ResourceName) throws(FleetError) -> StopOrderingOutcome {
    try caller.mayCall(.optimizeStops)
    try caller.checkProvider(name.provider)
    try caller.checkDeliveryVehicleAccess(name.id)
    let now = now()
    let (vehicle, journey, tasks) = try read { s throws(FleetError) in
      let vehicle = try Self.existingDeliveryVehicle(name, in: s)
      let tasks = vehicle.taskIDs.compactMap { s.tasks[name.provider]?[$0] }
      return (vehicle, vehicle.journey, Dictionary(uniqueKeysWithValues: tasks.map { ($0.id, $0) }))
    }
    guard let position = vehicle.lastLocation?.location else {
      throw .precondition("delivery vehicle \(name) has no last_location to order its stops from")
    }
    // Each stop: its tasks' time at it, and the window all of them allow.
    let stops = journey.map { segment -> StopOrdering.Stop in
      let own = segment.stop.tasks.compactMap { tasks[$0.taskID] }
      let windows = own.compactMap(\.targetTimeWindow)
      return StopOrdering.Stop(
        service: own.reduce(0) { $0 + $1.duration },
        windowStart: windows.map { $0.start.timeIntervalSince(now) }.max(),
        windowEnd: windows.map { $0.end.timeIntervalSince(now) }.min())
    }
    let estimator = travel ?? StraightLineTravel()
    let points = [position] + journey.map(\.stop.plannedLocation)
    let table = estimator.matrix(points)
    var problem = StopOrdering(
      stops: stops, seconds: table.map { $0.map { $0?.seconds ?? .infinity } },
      metres: table.map { $0.map { $0?.metres ?? .infinity } },
      fixedPrefix: journey.first.map { $0.stop.state == .new ? [] : [0] } ?? [])
    for i in problem.seconds.indices {
      problem.seconds[i][i] = 0
      problem.metres[i][i] = 0
    }
    problem.timeLimit = Self.stopOrderingTimeLimit
    let order = problem.solve()
    var ordered = order.map { journey[$0] }
    estimateDrives(&ordered, from: position)
    return StopOrderingOutcome(
      journey: ordered, current: problem.measure(Array(journey.indices)), optimized: problem.measure(order),
      driveLowerBound: problem.driveLowerBound(), start: now, applied: false, from: journey.map(\.stop))
  }

  /// The local search's share of an `:optimizeStops` call: days of up to about 200 stops finish
  /// well within it (docs/benchmarks.md); a longer one answers the best order found by then.
  static let stopOrderingTimeLimit = Duration.seconds(2)

  /// Sets an order `orderStops` computed, unless the vehicle's stops changed since (ABORTED).
  public func applyStopOrder(_ outcome: StopOrderingOutcome, caller: Caller, name: ResourceName)
    async throws(FleetError) -> StopOrderingOutcome
  {
    var reordered = DeliveryVehicle(provider: name.provider, id: name.id)
    reordered.journey = outcome.journey
    let applied = try await updateDeliveryVehicle(
      caller: caller, name: name, input: DeliveryVehicleInput(vehicle: reordered),
      mask: ["remaining_vehicle_journey_segments"], expectingStops: outcome.from)
    var done = outcome
    done.journey = applied.journey
    done.applied = true
    return done
  }
}
