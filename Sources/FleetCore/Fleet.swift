import Foundation
import Synchronization

/// The fleet engine: every Fleet Engine RPC as one domain function, shared by gRPC and REST.
///
/// The state lives in memory behind a mutex; each write is applied there and then committed to
/// `FleetStorage`, and returns only once the commit is durable. Entities carry revisions, so
/// concurrent commits need no ordering and the store can batch them into group commits.
public final class Fleet: Sendable {
  struct State: Sendable {
    var trips: [String: [String: Trip]] = [:]
    var vehicles: [String: [String: Vehicle]] = [:]
    /// Booked rides (fleetd's dispatcher), by provider and ID.
    var rides: [String: [String: Ride]] = [:]
    /// Rides the dispatcher still has to watch (waiting, or assigned and not yet picked up),
    /// so that its rounds do not scan every ride ever booked. Pruned as their trips end.
    var ridesInDispatch: Set<ResourceName> = []
    /// Each provider's vehicles by position, for searches near a point.
    var grids: [String: VehicleGrid] = [:]
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
    var storageFailure: String?
    /// Entities changed in memory whose commit has not returned: the newest such revision, and
    /// the committed value to put back if that commit fails.
    var uncommitted: [EntityKey: Uncommitted] = [:]
    /// While a write runs: the revision each entity it touches had before it.
    var touched: [EntityKey: UInt64]?

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

    /// Forgets a deleted vehicle and returns the change to commit.
    mutating func removeVehicle(provider: String, id: String) -> StoredChange {
      let key = EntityKey(.vehicle, provider: provider, id: id)
      let revision = change(key)
      install(.absent(key))
      return .deleteVehicle(provider: provider, id: id, revision: revision)
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
      if touched != nil, touched![key] == nil { touched![key] = before.revision }
      if uncommitted[key] != nil {
        uncommitted[key]!.revision = revision
      } else {
        uncommitted[key] = Uncommitted(revision: revision, committed: before)
      }
      return revision
    }

    /// Puts an entity (or its absence) in memory, with its indexes.
    mutating func install(_ entity: Entity) {
      sequence += 1
      switch entity {
      case .trip(let trip):
        trips[trip.provider, default: [:]][trip.id] = trip
      case .vehicle(let vehicle):
        vehicles[vehicle.provider, default: [:]][vehicle.id] = vehicle
        grids[vehicle.provider, default: VehicleGrid()].update(vehicle)
      case .ride(let ride):
        rides[ride.provider, default: [:]][ride.id] = ride
        if ride.dispatchState == .waiting || ride.dispatchState == .assigned {
          ridesInDispatch.insert(ride.name)
        } else {
          ridesInDispatch.remove(ride.name)
        }
      case .absent(let key):
        switch key.kind {
        case .trip: trips[key.provider]?[key.id] = nil
        case .vehicle:
          vehicles[key.provider]?[key.id] = nil
          grids[key.provider]?.remove(key.id)
          progress[key.provider]?[key.id] = nil
        case .ride:
          rides[key.provider]?[key.id] = nil
          ridesInDispatch.remove(ResourceName(provider: key.provider, kind: .rides, id: key.id))
        }
      }
    }

    /// The entity in memory now.
    func entity(_ key: EntityKey) -> Entity {
      switch key.kind {
      case .trip: trips[key.provider]?[key.id].map(Entity.trip) ?? .absent(key)
      case .vehicle: vehicles[key.provider]?[key.id].map(Entity.vehicle) ?? .absent(key)
      case .ride: rides[key.provider]?[key.id].map(Entity.ride) ?? .absent(key)
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
  let storage: any FleetStorage
  let clock: @Sendable () -> Date
  /// Computes routes and ETAs from reported positions; without it, progress fields stay as
  /// clients set them.
  let progressEngine: (any TripProgressEngine)?
  /// Estimates drives for vehicle search; without it, straight lines (`StraightLineTravel`).
  let travel: (any TravelEstimator)?
  let configuration: FleetConfiguration
  let watchers = TripWatchers()
  /// Following the other instances' commits, when the store is shared.
  let replication: Replication?

  /// Loads the stored fleet. `clock` is injectable for tests.
  public init(
    storage: any FleetStorage, progress: (any TripProgressEngine)? = nil, travel: (any TravelEstimator)? = nil,
    configuration: FleetConfiguration = FleetConfiguration(), clock: @escaping @Sendable () -> Date = { Date() }
  ) async throws {
    var initial = State()
    // A shared store's log is read from before the tables are loaded: changes committed
    // meanwhile are then replayed, and replaying a change already loaded does nothing.
    let shared = storage as? any SharedFleetStorage
    let cursor = try await shared?.feed.latestSequence()
    if let shared { initial.revisionTag = RevisionTag(instance: shared.instanceTag) }
    initial.revision = try await storage.highestRevision()
    for trip in try await storage.loadTrips() {
      initial.trips[trip.provider, default: [:]][trip.id] = trip
      initial.revision = max(initial.revision, trip.revision)
    }
    for vehicle in try await storage.loadVehicles() {
      initial.vehicles[vehicle.provider, default: [:]][vehicle.id] = vehicle
      initial.grids[vehicle.provider, default: VehicleGrid()].update(vehicle)
      initial.revision = max(initial.revision, vehicle.revision)
    }
    for ride in try await storage.loadRides() {
      initial.rides[ride.provider, default: [:]][ride.id] = ride
      if ride.dispatchState == .waiting || ride.dispatchState == .assigned { initial.ridesInDispatch.insert(ride.name) }
      initial.revision = max(initial.revision, ride.revision)
    }
    self.state = Mutex(initial)
    self.storage = storage
    self.clock = clock
    self.progressEngine = progress
    self.travel = travel
    self.configuration = configuration
    self.replication = shared.map { Replication(feed: $0.feed, origin: $0.instanceTag, cursor: cursor ?? 0) }
    // Progress is derived, so it is recomputed at start for every vehicle with a position.
    recomputeProgress(of: initial.vehicles.values.flatMap(\.values))
  }

  /// Timestamps are kept to the microsecond so that versions survive a round trip through the
  /// wire's Timestamp (seconds + nanos) and compare equal.
  func now() -> Date {
    Date(timeIntervalSince1970: (clock().timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
  }

  /// Reads under the lock.
  func read<T: Sendable>(_ body: (State) throws(FleetError) -> T) throws(FleetError) -> T {
    try state.withLock { (s: inout State) throws(FleetError) -> T in try body(s) }
  }

  /// Applies a change under the lock, then waits until its stored changes are durable. On a
  /// shared store, a write that another instance overtook is run again on the fresh state, and
  /// answered ABORTED if that keeps happening.
  func write<T: Sendable>(
    after overtaken: StorageConflict? = nil, _ body: (inout State, Date) throws(FleetError) -> (T, [StoredChange])
  ) async throws(FleetError) -> T {
    let attempts = 8
    var conflict = overtaken
    for attempt in 0..<attempts {
      if attempt > 0 || overtaken != nil {
        // Instances that keep overtaking each other on one entity step apart, at random; then
        // the other instance's commit, which is in the log, is read before trying again.
        try? await Task.sleep(for: .milliseconds(Int.random(in: 0...(1 << max(attempt, 1)))))
        do { try await replication?.catchUp(self) } catch { throw Self.unavailable(error) }
      }
      let staged = try stage(body)
      if let refused = try await commit(staged) {
        conflict = refused
        continue
      }
      return staged.result
    }
    throw FleetError(
      .aborted,
      "the write was overtaken by other fleetd instances \(attempts) times (\(conflict.map(String.init(describing:)) ?? "")); retry it"
    )
  }

  /// A change applied in memory and not yet committed.
  struct StagedWrite<T: Sendable>: Sendable {
    let result: T
    let changes: [StoredChange]
    /// The revision each changed entity had before, which the store must still have.
    let expected: [EntityKey: UInt64]
  }

  /// The first half of a write: applies it under the lock, synchronously, so that writes staged
  /// one after another are applied in that order even when their commits overlap.
  func stage<T: Sendable>(_ body: (inout State, Date) throws(FleetError) -> (T, [StoredChange])) throws(FleetError)
    -> StagedWrite<T>
  {
    let now = now()
    return try state.withLock { (s: inout State) throws(FleetError) -> StagedWrite<T> in
      if let failure = s.storageFailure {
        throw FleetError(.unavailable, "storage failed earlier (\(failure)); restart fleetd to recover")
      }
      s.touched = [:]
      defer { s.touched = nil }
      let (result, changes) = try body(&s, now)
      return StagedWrite(result: result, changes: changes, expected: s.touched ?? [:])
    }
  }

  /// The second half: commits a staged write and waits until it is durable. Returns the
  /// conflict when another instance overtook it (the write is then undone in memory).
  func commit<T: Sendable>(_ staged: StagedWrite<T>) async throws(FleetError) -> StorageConflict? {
    let changes = staged.changes
    guard !changes.isEmpty else { return nil }
    let progress = computeProgress(of: changes)
    do {
      try await storage.commit(FleetCommit(changes: changes, expectedRevisions: staged.expected, progress: progress))
    } catch let refused as StorageConflict {
      state.withLock { $0.settle(changes, committed: false) }
      return refused
    } catch {
      state.withLock { s in
        s.settle(changes, committed: false)
        // An embedded store's memory is its only copy of a failed change's neighbours: stop.
        // A shared store recovers by itself, and the database is the truth.
        if replication == nil { s.storageFailure = String(describing: error) }
      }
      throw Self.unavailable(error)
    }
    state.withLock { $0.settle(changes, committed: true) }
    propagate(changes, progress: progress)
    return nil
  }

  static func unavailable(_ error: any Error) -> FleetError {
    FleetError(.unavailable, "the change could not be stored: \(error)")
  }
}

/// What the domain can be told, with documented defaults.
public struct FleetConfiguration: Sendable {
  /// SearchVehicles' COST order, unless a provider has its own weights.
  public var costWeights = MatchCostWeights()
  public var providerCostWeights: [String: MatchCostWeights] = [:]

  public init() {}

  public func costWeights(for provider: String) -> MatchCostWeights { providerCostWeights[provider] ?? costWeights }
}

/// An opaque, stable page token: the last ID returned plus a fingerprint of the query, so a token
/// cannot be replayed against a different query.
struct PageToken: Codable {
  var after: String
  var query: String

  static func decode(_ token: String, query: String) throws(FleetError) -> String? {
    guard !token.isEmpty else { return nil }
    var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    guard let data = Data(base64Encoded: base64), let decoded = try? JSONDecoder().decode(PageToken.self, from: data)
    else { throw .invalid("page_token is not a token this server issued") }
    guard decoded.query == query else { throw .invalid("page_token was issued for a different query") }
    return decoded.after
  }

  static func encode(after: String, query: String) -> String {
    let data = (try? JSONEncoder().encode(PageToken(after: after, query: query))) ?? Data()
    return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  /// Fleet Engine leaves the default page size to the server; 100 by default, at most 1000.
  static func pageSize(_ requested: Int32) throws(FleetError) -> Int {
    guard requested >= 0 else { throw .invalid("page_size must not be negative, got \(requested)") }
    return requested == 0 ? 100 : min(Int(requested), 1000)
  }
}

/// Field masks: the paths a client may set, the ones the server owns, and nothing else.
struct UpdateMask {
  let paths: Set<String>

  init(_ raw: [String], updatable: Set<String>, serverOwned: Set<String>, resource: String) throws(FleetError) {
    // Usually already one clean path per entry; split and trim only when needed.
    let clean = raw.allSatisfy { !$0.isEmpty && !$0.utf8.contains(where: { $0 == 0x2C || $0 == 0x20 }) }
    let paths =
      clean
      ? raw
      : raw.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    // Fleet Engine's wording.
    guard !paths.isEmpty else { throw .invalid("update_mask cannot be empty") }
    for path in paths {
      if serverOwned.contains(path) {
        throw .invalid("update_mask: \(resource).\(path) is maintained by the server and cannot be updated")
      }
      guard updatable.contains(path) else {
        throw .invalid("update_mask: '\(path)' is not an updatable field of \(resource)")
      }
    }
    self.paths = Set(paths)
  }

  func contains(_ path: String) -> Bool { paths.contains(path) }
}

extension Fleet {
  /// False once a commit has failed (see `State.storageFailure`).
  public var isHealthy: Bool { state.withLock { $0.storageFailure == nil } }
}
