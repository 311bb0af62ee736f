import Foundation

/// One durable change. Every stored entity carries a revision that only grows, so a store may
/// apply changes from concurrent commits in any order: a write with an older revision than the
/// stored one is ignored, and a delete only removes rows older than itself.
public enum StoredChange: Sendable, Hashable {
  case putTrip(Trip)
  case deleteTrip(provider: String, id: String, revision: UInt64)
  case putVehicle(Vehicle)
  case deleteVehicle(provider: String, id: String, revision: UInt64)
  case putBillableTrip(BillableTripReport)
  /// A booked ride (the dispatcher's record; its trip is stored as a trip).
  case putRide(Ride)
  /// A ride deleted with its trip when the trip's retention ends.
  case deleteRide(provider: String, id: String, revision: UInt64)
  /// An event for webhooks, into the outbox (`WebhookStore`).
  case putEvent(FleetEvent)
  /// The Deliveries API's vehicles and tasks.
  case putDeliveryVehicle(DeliveryVehicle)
  case deleteDeliveryVehicle(provider: String, id: String, revision: UInt64)
  case putTask(DeliveryTask)
  case deleteTask(provider: String, id: String, revision: UInt64)
}

/// The store port of the domain. `commit` returns only once the changes are durable.
/// A store used by one instance may ignore a commit's expected revisions and progress: its
/// memory is the only writer.
public protocol FleetStore: Sendable {
  func loadTrips() async throws -> [Trip]
  func loadVehicles() async throws -> [Vehicle]
  func loadRides() async throws -> [Ride]
  func loadDeliveryVehicles() async throws -> [DeliveryVehicle]
  func loadTasks() async throws -> [DeliveryTask]
  /// The highest revision ever stored (every entity table), deletions (tombstones)
  /// included, so that new revisions always sort after everything on disk.
  func highestRevision() async throws -> UInt64
  func commit(_ commit: FleetCommit) async throws
  /// Forgets up to `limit` deletions made more than `age` ago by the store's clock
  /// (`Tombstones.retention`), and returns how many went. `highestRevision()` does not go down
  /// with them.
  func purgeTombstones(olderThan age: Duration, limit: Int) async throws -> Int
  func signingKey(id: String) async throws -> SigningKey?
  func signingKeys() async throws -> [SigningKey]
  func saveSigningKey(_ key: SigningKey) async throws
}

/// A deletion is stored as a tombstone, the entity's row without a body, so that a write made
/// before it and landing after it cannot bring the entity back.
public enum Tombstones {
  /// How long a tombstone is kept: far longer than a write made before the deletion can take to
  /// land (a group commit, seconds) and than a shared store's change log keeps its batches (15
  /// minutes; an instance further behind must reload before it writes again). Then it goes: at
  /// 500 rides a minute, the retention sweep would otherwise leave about 1.4 million dead rows
  /// a day.
  public static let retention: Duration = .seconds(3600)
}

extension FleetStore {
  /// Commits changes that nothing else could have written concurrently.
  public func commit(_ changes: [StoredChange]) async throws { try await commit(FleetCommit(changes: changes)) }
}

/// The kinds of entity a change writes.
public enum EntityKind: String, Sendable, Hashable, CaseIterable, Codable {
  case trip, vehicle, ride, deliveryVehicle, task
}

/// One stored entity: its kind, provider and ID.
public struct EntityKey: Sendable, Hashable, Codable, CustomStringConvertible {
  public var kind: EntityKind
  public var provider: String
  public var id: String

  public init(_ kind: EntityKind, provider: String, id: String) {
    self.kind = kind
    self.provider = provider
    self.id = id
  }

  public var description: String { "providers/\(provider)/\(kind.rawValue)s/\(id)" }
}

extension StoredChange {
  /// The entity the change writes and the revision it writes it at; nil for billing reports
  /// and events.
  public var entity: (key: EntityKey, revision: UInt64)? {
    switch self {
    case .putTrip(let t): (EntityKey(.trip, provider: t.provider, id: t.id), t.revision)
    case .putVehicle(let v): (EntityKey(.vehicle, provider: v.provider, id: v.id), v.revision)
    case .putRide(let r): (EntityKey(.ride, provider: r.provider, id: r.id), r.revision)
    case .deleteTrip(let provider, let id, let revision): (EntityKey(.trip, provider: provider, id: id), revision)
    case .deleteVehicle(let provider, let id, let revision):
      (EntityKey(.vehicle, provider: provider, id: id), revision)
    case .deleteRide(let provider, let id, let revision): (EntityKey(.ride, provider: provider, id: id), revision)
    case .putDeliveryVehicle(let v): (EntityKey(.deliveryVehicle, provider: v.provider, id: v.id), v.revision)
    case .deleteDeliveryVehicle(let provider, let id, let revision):
      (EntityKey(.deliveryVehicle, provider: provider, id: id), revision)
    case .putTask(let t): (EntityKey(.task, provider: t.provider, id: t.id), t.revision)
    case .deleteTask(let provider, let id, let revision): (EntityKey(.task, provider: provider, id: id), revision)
    case .putBillableTrip, .putEvent: nil
    }
  }
}

/// A vehicle's progress as computed after one of its changes: stored with the change, so that
/// every instance serves the progress the receiving instance computed.
public struct VehicleProgressRecord: Sendable, Hashable {
  public var provider: String
  public var vehicleID: String
  /// The vehicle revision it was computed for.
  public var revision: UInt64
  /// Nil when the vehicle has no progress (no position, or no progress engine).
  public var progress: VehicleRouteProgress?

  public init(provider: String, vehicleID: String, revision: UInt64, progress: VehicleRouteProgress?) {
    self.provider = provider
    self.vehicleID = vehicleID
    self.revision = revision
    self.progress = progress
  }
}

/// One write's changes, with what a shared store needs to check and share them.
public struct FleetCommit: Sendable {
  public var changes: [StoredChange]
  /// Each written entity's revision before the write (0: it did not exist). A shared store
  /// refuses the whole write when one of them is no longer the stored revision.
  public var expectedRevisions: [EntityKey: UInt64]
  /// The progress of the write's vehicles, computed before the commit.
  public var progress: [VehicleProgressRecord]

  public init(
    changes: [StoredChange], expectedRevisions: [EntityKey: UInt64] = [:], progress: [VehicleProgressRecord] = []
  ) {
    self.changes = changes
    self.expectedRevisions = expectedRevisions
    self.progress = progress
  }
}
