import Foundation
import Synchronization

/// The fleet engine: every Fleet Engine RPC as one domain function, shared by gRPC and REST.
///
/// The state lives in memory behind a mutex; each write is applied there and then committed to
/// `FleetStore`, and returns only once the commit is durable. Entities carry revisions, so
/// concurrent commits need no ordering and the store can batch them into group commits.
public final class Fleet: Sendable {
  struct State: Sendable {
    var trips: [String: [String: Trip]] = [:]
    var vehicles: [String: [String: Vehicle]] = [:]
    /// Booked rides (fleetd's dispatcher), by provider and ID.
    var rides: [String: [String: Ride]] = [:]
    /// The Deliveries API's vehicles and tasks, by provider and ID.
    var deliveryVehicles: [String: [String: DeliveryVehicle]] = [:]
    var tasks: [String: [String: DeliveryTask]] = [:]
    /// Task IDs by provider and tracking ID (several tasks may share one).
    var tasksByTrackingID: [String: [String: Set<String>]] = [:]
    /// Rides the dispatcher still has to watch (scheduled, waiting, or assigned and not yet
    /// picked up), so that its rounds scan the rides still in dispatch, not every ride on the
    /// road. Kept as rides and their trips change.
    var ridesInDispatch: Set<ResourceName> = []
    /// When each ride booked for later is next looked at (kept in memory: a new leader looks
    /// at every one once).
    var scheduledChecks: [ResourceName: Date] = [:]
    /// Each provider's vehicles by position, for searches near a point.
    var grids: [String: VehicleGrid] = [:]
    /// Vehicles ONLINE, over every provider: kept as vehicles are filed, because counting them
    /// means holding the lock over the whole fleet.
    var onlineVehicles = 0
    /// Ended trips by when they last changed, for the retention sweep.
    var endedTrips = EndedTrips()
    /// The highest revision seen, this instance's or another's (a Lamport clock).
    var revision: UInt64 = 0
    /// Instances sharing a store write revisions with their tag in the low bits, so that no two
    /// instances ever write the same revision.
    var revisionTag = RevisionTag.single
    /// Each vehicle's progress, computed after its last change (derived, never stored).
    var progress: [String: [String: VehicleRouteProgress]] = [:]
    /// Grows with every change a watcher could see (entities and progress), so that watchers
    /// never take an older state after a newer one.
    var sequence: UInt64 = 0
    /// Set when a commit failed: memory may then be ahead of disk, so writes stop (fail-stop).
    var storeFailure: String?
    /// Entities changed in memory whose commit has not returned: the newest such revision, and
    /// the committed value to put back if that commit fails.
    var uncommitted: [EntityKey: Uncommitted] = [:]
    /// While a write runs: each entity it touches as it was before it.
    var touched: [EntityKey: Entity]?
    /// While a write runs: each touched entity's uncommitted record before it (nil: none), so
    /// that a write that fails halfway leaves memory as it found it.
    var pendingBefore: [EntityKey: Uncommitted?] = [:]

    struct Uncommitted {
      var revision: UInt64
      var committed: Entity
    }

    mutating func nextRevision() -> UInt64 {
      revision = revisionTag.next(after: revision)
      return revision
    }

    /// Stores a changed trip under a new revision and returns the change to commit.
    mutating func put(_ trip: Trip) -> StoredChange {
      var trip = trip
      trip.revision = change(EntityKey(.trip, provider: trip.provider, id: trip.id))
      install(.trip(trip))
      return .putTrip(trip)
    }

    /// Stores a changed vehicle under a new revision and returns the change to commit.
    mutating func put(_ vehicle: Vehicle) -> StoredChange {
      var vehicle = vehicle
      vehicle.revision = change(EntityKey(.vehicle, provider: vehicle.provider, id: vehicle.id))
      install(.vehicle(vehicle))
      return .putVehicle(vehicle)
    }

    /// Stores a changed ride under a new revision and returns the change to commit.
    mutating func put(_ ride: Ride) -> StoredChange {
      var ride = ride
      ride.revision = change(EntityKey(.ride, provider: ride.provider, id: ride.id))
      install(.ride(ride))
      return .putRide(ride)
    }

    /// Stores a changed delivery vehicle under a new revision and returns the change to commit.
    mutating func put(_ vehicle: DeliveryVehicle) -> StoredChange {
      var vehicle = vehicle
      vehicle.revision = change(EntityKey(.deliveryVehicle, provider: vehicle.provider, id: vehicle.id))
      install(.deliveryVehicle(vehicle))
      return .putDeliveryVehicle(vehicle)
    }

    /// Stores a changed task under a new revision and returns the change to commit.
    mutating func put(_ task: DeliveryTask) -> StoredChange {
      var task = task
      task.revision = change(EntityKey(.task, provider: task.provider, id: task.id))
      install(.task(task))
      return .putTask(task)
    }

    /// Forgets a deleted delivery vehicle and returns the change to commit.
    mutating func removeDeliveryVehicle(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.deliveryVehicle, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteDeliveryVehicle(provider: provider, id: id, revision: revision)
    }

    /// Forgets a deleted task and returns the change to commit.
    mutating func removeTask(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.task, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteTask(provider: provider, id: id, revision: revision)
    }

    /// Forgets a deleted vehicle and returns the change to commit.
    mutating func removeVehicle(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.vehicle, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteVehicle(provider: provider, id: id, revision: revision)
    }

    /// Forgets a deleted ride and returns the change to commit.
    mutating func removeRide(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.ride, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteRide(provider: provider, id: id, revision: revision)
    }

    /// Forgets a deleted trip and returns the change to commit.
    mutating func removeTrip(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.trip, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteTrip(provider: provider, id: id, revision: revision)
    }

    /// The new revision of an entity about to change. Notes what the write changes: the
    /// revision it expects the store to have, and the value to restore if its commit fails.
    mutating func change(_ key: EntityKey) -> UInt64 {
      let before = entity(key)
      let revision = nextRevision()
      if touched != nil, touched![key] == nil {
        touched![key] = before
        pendingBefore.updateValue(uncommitted[key], forKey: key)
      }
      if uncommitted[key] != nil {
        uncommitted[key]!.revision = revision
      } else {
        uncommitted[key] = Uncommitted(revision: revision, committed: before)
      }
      return revision
    }

    /// Undoes a write that threw after changing some entities: they, and their uncommitted
    /// records, are as before it.
    mutating func rollBack() {
      for (_, before) in touched ?? [:] { install(before) }
      for (key, pending) in pendingBefore { uncommitted[key] = pending }
      pendingBefore = [:]
    }

    /// Puts an entity (or its absence) in memory, with its indexes.
    mutating func install(_ entity: Entity) {
      sequence += 1
      switch entity {
      case .trip(let trip):
        trips[trip.provider, default: [:]][trip.id] = trip
        if trip.status.isTerminal { endedTrips.append(trip) }
        reviewDispatch(provider: trip.provider, id: trip.id)
      case .vehicle(let vehicle):
        file(vehicle)
      case .ride(let ride):
        rides[ride.provider, default: [:]][ride.id] = ride
        reviewDispatch(provider: ride.provider, id: ride.id)
      case .deliveryVehicle(let vehicle):
        deliveryVehicles[vehicle.provider, default: [:]][vehicle.id] = vehicle
      case .task(let task):
        file(task)
      case .absent(let key):
        switch key.kind {
        case .trip:
          trips[key.provider]?[key.id] = nil
          reviewDispatch(provider: key.provider, id: key.id)
        case .vehicle:
          if vehicles[key.provider]?.removeValue(forKey: key.id)?.state == .online { onlineVehicles -= 1 }
          grids[key.provider]?.remove(key.id)
          progress[key.provider]?[key.id] = nil
        case .ride:
          rides[key.provider]?[key.id] = nil
          ridesInDispatch.remove(ResourceName(provider: key.provider, kind: .rides, id: key.id))
        case .deliveryVehicle:
          deliveryVehicles[key.provider]?[key.id] = nil
        case .task:
          if let old = tasks[key.provider]?.removeValue(forKey: key.id), !old.trackingID.isEmpty {
            tasksByTrackingID[key.provider]?[old.trackingID]?.remove(key.id)
          }
        }
      }
    }

    /// Files a ride (rides share their trip's ID) in `ridesInDispatch`, or takes it out, as it
    /// and its trip are now.
    mutating func reviewDispatch(provider: String, id: String) {
      let name = ResourceName(provider: provider, kind: .rides, id: id)
      if let ride = rides[provider]?[id], ride.isInDispatch(trip: trips[provider]?[id]) {
        ridesInDispatch.insert(name)
      } else {
        ridesInDispatch.remove(name)
      }
    }

    /// Puts a task in memory with its tracking ID (which never changes).
    mutating func file(_ task: DeliveryTask) {
      tasks[task.provider, default: [:]][task.id] = task
      if !task.trackingID.isEmpty {
        tasksByTrackingID[task.provider, default: [:]][task.trackingID, default: []].insert(task.id)
      }
    }

    /// Puts a vehicle in memory with its indexes (the grid, the online count).
    mutating func file(_ vehicle: Vehicle) {
      let previous = vehicles[vehicle.provider, default: [:]].updateValue(vehicle, forKey: vehicle.id)
      if previous?.state == .online { onlineVehicles -= 1 }
      if vehicle.state == .online { onlineVehicles += 1 }
      grids[vehicle.provider, default: VehicleGrid()].update(vehicle)
    }

    /// The entity in memory now.
    func entity(_ key: EntityKey) -> Entity {
      switch key.kind {
      case .trip: trips[key.provider]?[key.id].map(Entity.trip) ?? .absent(key)
      case .vehicle: vehicles[key.provider]?[key.id].map(Entity.vehicle) ?? .absent(key)
      case .ride: rides[key.provider]?[key.id].map(Entity.ride) ?? .absent(key)
      case .deliveryVehicle: deliveryVehicles[key.provider]?[key.id].map(Entity.deliveryVehicle) ?? .absent(key)
      case .task: tasks[key.provider]?[key.id].map(Entity.task) ?? .absent(key)
      }
    }

    /// After a commit returns: its entities are committed, or (when it failed) put back to their
    /// committed values, unless a later write changed them again (that write settles them; if it
    /// fails, it falls back to this commit's values when they were stored).
    mutating func settle(_ changes: [StoredChange], committed: Bool) {
      for change in changes {
        guard let (key, revision) = change.entity, var pending = uncommitted[key] else { continue }
        guard pending.revision == revision else {
          if committed, pending.committed.revision < revision, let entity = Entity(change) {
            pending.committed = entity
            uncommitted[key] = pending
          }
          continue
        }
        uncommitted[key] = nil
        if !committed { install(pending.committed) }
      }
    }
  }

  let state: Mutex<State>
  let store: any FleetStore
  let clock: @Sendable () -> Date
  /// Computes routes and ETAs from reported positions; without it, progress fields stay as
  /// clients set them.
  let progressEngine: (any TripProgressEngine)?
  /// Estimates drives for vehicle search; without it, straight lines (`StraightLineTravel`).
  let travel: (any TravelEstimator)?
  let configuration: FleetConfiguration
  let watchers = Watchers<TripWatcher>()
  /// Streams of shipments' tracking, by `providers/{p}/taskTrackingInfo/{id}`.
  let trackingWatchers = Watchers<TrackingWatcher>()
  /// Following the other instances' commits, when the store is shared.
  let follower: (any CommitFollower)?
  /// This instance's tag among the instances sharing the store.
  let instanceTag: UInt64?
  /// Seals quote terms into quote IDs; without it, QuoteRide and booking by quote are
  /// FAILED_PRECONDITION.
  let quoteSealing: (any QuoteSealing)?
  let surgeBoard = SurgeBoard()
  let eventObservers = EventObservers()

  /// Loads the stored fleet. `clock` is injectable for tests.
  public init(
    store: any FleetStore, progress: (any TripProgressEngine)? = nil, travel: (any TravelEstimator)? = nil,
    configuration: FleetConfiguration = FleetConfiguration(), quoteSealing: (any QuoteSealing)? = nil,
    clock: @escaping @Sendable () -> Date = { Date() }
  ) async throws {
    var initial = State()
    // A shared store's follower reads its log from where it stood before these tables were
    // loaded: changes committed meanwhile are replayed, and a change already loaded does nothing.
    let shared = store as? any SharedFleetStore
    if let shared { initial.revisionTag = RevisionTag(instance: shared.instanceTag) }
    initial.revision = try await store.highestRevision()
    let trips = try await store.loadTrips()
    for trip in trips {
      initial.trips[trip.provider, default: [:]][trip.id] = trip
      initial.revision = max(initial.revision, trip.revision)
    }
    for trip in trips.filter(\.status.isTerminal).sorted(by: { $0.updateTime < $1.updateTime }) {
      initial.endedTrips.append(trip)
    }
    for vehicle in try await store.loadVehicles() {
      initial.file(vehicle)
      initial.revision = max(initial.revision, vehicle.revision)
    }
    for ride in try await store.loadRides() {
      initial.rides[ride.provider, default: [:]][ride.id] = ride
      initial.reviewDispatch(provider: ride.provider, id: ride.id)
      initial.revision = max(initial.revision, ride.revision)
    }
    for vehicle in try await store.loadDeliveryVehicles() {
      initial.deliveryVehicles[vehicle.provider, default: [:]][vehicle.id] = vehicle
      initial.revision = max(initial.revision, vehicle.revision)
    }
    for task in try await store.loadTasks() {
      initial.file(task)
      initial.revision = max(initial.revision, task.revision)
    }
    self.state = Mutex(initial)
    self.store = store
    self.clock = clock
    self.progressEngine = progress
    self.travel = travel
    self.configuration = configuration
    self.quoteSealing = quoteSealing
    self.follower = shared?.follower
    self.instanceTag = shared?.instanceTag
    // Progress is derived, so it is recomputed at start for every vehicle with a position.
    recomputeProgress(of: initial.vehicles.values.flatMap(\.values))
  }

  /// Timestamps are kept to the microsecond so that versions survive a round trip through the
  /// wire's Timestamp (seconds + nanos) and compare equal.
  public func now() -> Date {
    Date(timeIntervalSince1970: (clock().timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
  }

  /// Reads under the lock.
  func read<T: Sendable>(_ body: (State) throws(FleetError) -> T) throws(FleetError) -> T {
    try state.withLock { (s: inout State) throws(FleetError) -> T in try body(s) }
  }
}

/// What the domain can be told, with documented defaults.
public struct FleetConfiguration: Sendable {
  /// SearchVehicles' COST order, unless a provider has its own weights.
  public var costWeights = MatchCostWeights()
  public var providerCostWeights: [String: MatchCostWeights] = [:]
  /// Products and prices per provider (`fleetd serve --tariffs`); none: rides are not priced.
  public var tariffs = Tariffs.none
  /// Where each provider serves, and its zones (`fleetd serve --service-areas`); none: everywhere.
  public var serviceAreas = ServiceAreas.none
  /// Which vehicles quotes count on for a pickup ETA and surge: the dispatcher's own rules.
  public var dispatchRules = DispatchRules()
  /// Seconds an ended trip (and its ride) is kept after its last change, as Fleet Engine's 7
  /// days (`deleteExpiredTrips`); nil keeps every trip.
  public var tripRetention: TimeInterval? = FleetConfiguration.fleetEngineTripRetention

  public static let fleetEngineTripRetention: TimeInterval = 7 * 86_400

  public init() {}

  public func costWeights(for provider: String) -> MatchCostWeights { providerCostWeights[provider] ?? costWeights }
}

extension Fleet {
  /// False once a commit has failed (see `State.storeFailure`).
  public var isHealthy: Bool { state.withLock { $0.storeFailure == nil } }
}
