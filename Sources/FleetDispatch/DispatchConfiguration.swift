import FleetCore

/// How rides are matched to vehicles in each round.
public enum DispatchPolicy: String, Sendable, Hashable, CaseIterable {
  /// All waiting rides at once: the assignment with the most rides served and, among those,
  /// the least total pickup time (an exact solution of the assignment problem), where a ride
  /// left waiting costs its time waited so far (`DispatchConfiguration.waitWeight`).
  case batched
  /// One ride at a time, longest waiting first, each taking the vehicle with the nearest ETA:
  /// what a first dispatcher does, kept as the baseline.
  case greedy
}

/// `fleetd serve --dispatch` settings, with documented defaults.
public struct DispatchConfiguration: Sendable, Hashable {
  /// Time between rounds: requests are collected for this long and matched together.
  public var interval: Duration = .seconds(2)
  public var policy: DispatchPolicy = .batched
  /// Seconds of pickup drive that each second a ride has already waited is worth, when a round
  /// has more rides than cars (batched policy): the cars go to the rides waiting longest unless
  /// another is nearer by more than the difference in their waits. Without it, a ride far from
  /// where cars free up can lose to every newer ride nearer to them until it times out.
  /// 0: the least total pickup time alone.
  public var waitWeight = 1.0
  /// A ride still waiting after this long is NO_VEHICLE_FOUND and its trip CANCELED.
  public var noVehicleTimeout: Duration = .seconds(300)
  /// Which vehicles are offered, and when an assigned vehicle counts as gone.
  public var rules = DispatchRules()
  /// At most this many rides (the longest waiting) are matched in one round; the rest wait for
  /// the next. It bounds a round's time when a backlog builds up.
  public var maximumBatch = 200
  /// A ride booked for later is released to the dispatcher this long before the nearest
  /// vehicle's drive would bring it to the pickup exactly on time: the slack for a round's
  /// wait, the driver's accepting, and traffic.
  public var scheduledLead: Duration = .seconds(120)
  /// Rides booked for later than this ahead are not looked at yet: it bounds a round's work.
  public var scheduledLookahead: Duration = .seconds(3600)
  /// Rides not yet picked up moved to a free car that reaches the pickup clearly sooner; nil:
  /// never (the default: a rider told one car is not told another without being asked for).
  public var reassignment: Reassignment?

  public init() {}
}

/// When an assigned ride changes car before its pickup.
public struct Reassignment: Sendable, Hashable {
  /// A free car must reach the pickup at least this much sooner than the assigned one.
  public var minimumSaving: Duration = .seconds(180)
  /// A ride changes car at most this many times (a change after its car went away counts): it
  /// bounds the churn riders and drivers see.
  public var maximumChanges = 1

  public init(minimumSaving: Duration = .seconds(180), maximumChanges: Int = 1) {
    self.minimumSaving = minimumSaving
    self.maximumChanges = maximumChanges
  }
}
