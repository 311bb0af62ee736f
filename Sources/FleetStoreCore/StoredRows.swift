import FleetCore
import Foundation

/// The tables every store keeps entities in, by provider and ID, each row with its revision.
public enum StoredTable: String, Sendable, CaseIterable {
  case trips, vehicles, rides
  case deliveryVehicles = "delivery_vehicles"
  case tasks

  /// The tables the schema had before the Deliveries API: what the migrations written before it
  /// go over (the later tables do not exist yet when they run on a new database).
  public static let beforeDeliveries: [StoredTable] = [.trips, .vehicles, .rides]

  public init(_ kind: EntityKind) {
    switch kind {
    case .trip: self = .trips
    case .vehicle: self = .vehicles
    case .ride: self = .rides
    case .deliveryVehicle: self = .deliveryVehicles
    case .task: self = .tasks
    }
  }

  public var kind: EntityKind {
    switch self {
    case .trips: .trip
    case .vehicles: .vehicle
    case .rides: .ride
    case .deliveryVehicles: .deliveryVehicle
    case .tasks: .task
    }
  }
}

/// A row of `trips`, `vehicles` or `rides` as stored; a nil body is a tombstone (a deletion kept
/// so that an older write cannot resurrect the entity).
public struct StoredRow: Sendable, Hashable {
  public var table: StoredTable
  public var provider: String
  public var id: String
  public var revision: UInt64
  public var body: Data?

  public init(table: StoredTable, provider: String, id: String, revision: UInt64, body: Data?) {
    self.table = table
    self.provider = provider
    self.id = id
    self.revision = revision
    self.body = body
  }

  public var key: EntityKey { EntityKey(table.kind, provider: provider, id: id) }
}

/// A change ready to write: encoded by the committing task, so that a store's single writer
/// only runs SQL.
public enum EncodedChange: Sendable, Hashable {
  case row(StoredRow)
  case billableTrip(provider: String, id: String, reportTime: Double, body: Data)
  /// An event for webhooks, into the outbox.
  case event(EncodedEvent)
}

/// An outbox row: what fan-out and ordering read as columns, the event itself as the body.
public struct EncodedEvent: Sendable, Hashable {
  public var id: String
  public var provider: String
  public var type: String
  /// `rides/ID` or `vehicles/ID`: deliveries of one subject go out in order.
  public var subject: String
  public var revision: UInt64
  public var position: Int
  public var time: Double
  public var body: Data

  public init(
    id: String, provider: String, type: String, subject: String, revision: UInt64, position: Int, time: Double,
    body: Data
  ) {
    self.id = id
    self.provider = provider
    self.type = type
    self.subject = subject
    self.revision = revision
    self.position = position
    self.time = time
    self.body = body
  }

  public init(_ event: FleetEvent) {
    id = event.id
    provider = event.provider
    type = event.type.rawValue
    subject = "\(event.subject.kind.rawValue)s/\(event.subject.id)"
    revision = event.revision
    position = event.position
    time = event.time.timeIntervalSince1970
    body = Data(event.rowBytes)
  }
}

/// How entities become row bodies and back, the same for every store: the binary row format
/// (`RowCodec.swift`) for every entity and billing report.
public enum StoredRows {
  public static func encode(_ changes: [StoredChange]) -> [EncodedChange] {
    changes.map { change in
      switch change {
      case .putTrip(let t): .row(row(.trips, t.provider, t.id, t.revision, t))
      case .putVehicle(let v): .row(row(.vehicles, v.provider, v.id, v.revision, v))
      case .putRide(let r): .row(row(.rides, r.provider, r.id, r.revision, r))
      case .deleteTrip(let provider, let id, let revision):
        .row(StoredRow(table: .trips, provider: provider, id: id, revision: revision, body: nil))
      case .deleteVehicle(let provider, let id, let revision):
        .row(StoredRow(table: .vehicles, provider: provider, id: id, revision: revision, body: nil))
      case .deleteRide(let provider, let id, let revision):
        .row(StoredRow(table: .rides, provider: provider, id: id, revision: revision, body: nil))
      case .putBillableTrip(let r):
        .billableTrip(
          provider: r.provider, id: r.billableTripID, reportTime: r.reportTime.timeIntervalSince1970,
          body: Data(r.rowBytes))
      case .putEvent(let event): .event(EncodedEvent(event))
      case .putDeliveryVehicle(let v): .row(row(.deliveryVehicles, v.provider, v.id, v.revision, v))
      case .deleteDeliveryVehicle(let provider, let id, let revision):
        .row(StoredRow(table: .deliveryVehicles, provider: provider, id: id, revision: revision, body: nil))
      case .putTask(let t): .row(row(.tasks, t.provider, t.id, t.revision, t))
      case .deleteTask(let provider, let id, let revision):
        .row(StoredRow(table: .tasks, provider: provider, id: id, revision: revision, body: nil))
      }
    }
  }

  static func row(_ table: StoredTable, _ provider: String, _ id: String, _ revision: UInt64, _ value: some RowCodable)
    -> StoredRow
  {
    StoredRow(table: table, provider: provider, id: id, revision: revision, body: Data(value.rowBytes))
  }

  /// The change a stored row (or tombstone) stands for.
  public static func change(_ row: StoredRow) throws -> StoredChange {
    guard let body = row.body else {
      switch row.table {
      case .trips: return .deleteTrip(provider: row.provider, id: row.id, revision: row.revision)
      case .vehicles: return .deleteVehicle(provider: row.provider, id: row.id, revision: row.revision)
      case .rides: return .deleteRide(provider: row.provider, id: row.id, revision: row.revision)
      case .deliveryVehicles:
        return .deleteDeliveryVehicle(provider: row.provider, id: row.id, revision: row.revision)
      case .tasks: return .deleteTask(provider: row.provider, id: row.id, revision: row.revision)
      }
    }
    switch row.table {
    case .trips: return .putTrip(try trip(from: body))
    case .vehicles: return .putVehicle(try vehicle(from: body))
    case .rides: return .putRide(try ride(from: body))
    case .deliveryVehicles: return .putDeliveryVehicle(try deliveryVehicle(from: body))
    case .tasks: return .putTask(try task(from: body))
    }
  }

  public static func trip(from body: Data) throws -> Trip { try decode(body) }
  public static func vehicle(from body: Data) throws -> Vehicle { try decode(body) }
  public static func ride(from body: Data) throws -> Ride { try decode(body) }
  public static func deliveryVehicle(from body: Data) throws -> DeliveryVehicle { try decode(body) }
  public static func task(from body: Data) throws -> DeliveryTask { try decode(body) }
  public static func billableTrip(from body: Data) throws -> BillableTripReport { try decode(body) }
  public static func event(from body: Data) throws -> FleetEvent { try decode(body) }

  static func decode<T: RowCodable>(_ body: Data) throws -> T {
    guard body.first == RowFormat.binaryV1 else {
      throw RowFormatError(offset: 0, reason: "unknown row format \(body.first.map(String.init) ?? "(empty)")")
    }
    var reader = RowReader([UInt8](body), from: 1)
    let value = try T(row: &reader)
    guard !reader.hasMore else { throw reader.damaged("unread bytes at the end (written by a newer fleetd?)") }
    return value
  }

  /// The newest change per row: one statement may then write a whole batch (PostgreSQL's
  /// `ON CONFLICT DO UPDATE` refuses to touch a row twice), and the older ones would lose anyway.
  public static func newestPerRow(_ changes: [EncodedChange]) -> [EncodedChange] {
    var newest: [EntityKey: Int] = [:]
    var kept: [EncodedChange] = []
    kept.reserveCapacity(changes.count)
    for change in changes {
      guard case .row(let row) = change else {
        kept.append(change)
        continue
      }
      if let index = newest[row.key], case .row(let older) = kept[index] {
        if row.revision > older.revision { kept[index] = change }
      } else {
        newest[row.key] = kept.count
        kept.append(change)
      }
    }
    return kept
  }
}

/// Failures of a store that name what they concern.
public enum StoreError: Error, CustomStringConvertible {
  case damagedRow(table: String, provider: String, id: String, reason: String)

  public var description: String {
    switch self {
    case .damagedRow(let table, let provider, let id, let reason):
      "\(table) row providers/\(provider)/\(id) cannot be read: \(reason)"
    }
  }
}
