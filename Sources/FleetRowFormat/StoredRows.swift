import FleetCore
import Foundation

/// The tables every store keeps entities in, by provider and ID, each row with its revision.
public enum StoredTable: String, Sendable, CaseIterable {
  case trips, vehicles, rides

  public init(_ kind: EntityKind) {
    switch kind {
    case .trip: self = .trips
    case .vehicle: self = .vehicles
    case .ride: self = .rides
    }
  }

  public var kind: EntityKind {
    switch self {
    case .trips: .trip
    case .vehicles: .vehicle
    case .rides: .ride
    }
  }
}

/// A change ready to write: encoded by the committing task, so that a store's single writer
/// only runs SQL.
public enum EncodedChange: Sendable, Hashable {
  /// A row of `trips`, `vehicles` or `rides`; a nil body is a tombstone (a deletion kept so that
  /// an older write cannot resurrect the entity).
  case row(table: StoredTable, provider: String, id: String, revision: Int64, body: Data?)
  case billableTrip(provider: String, id: String, reportTime: Double, body: Data)
}

/// How entities become row bodies and back, the same for every store: trips and vehicles in the
/// binary row format (every location update rewrites a vehicle), rides and billing reports as JSON.
public enum StoredRows {
  // Non-finite numbers are written as strings so that encoding can never fail on a value that
  // slipped past validation: a failed commit stops all writes (fail-stop).
  public static let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return encoder
  }()
  public static let decoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return decoder
  }()

  public static func encode(_ changes: [StoredChange]) throws -> [EncodedChange] {
    try changes.map { change in
      switch change {
      case .putTrip(let t):
        .row(table: .trips, provider: t.provider, id: t.id, revision: Int64(t.revision), body: Data(t.rowBytes))
      case .putVehicle(let v):
        .row(table: .vehicles, provider: v.provider, id: v.id, revision: Int64(v.revision), body: Data(v.rowBytes))
      case .deleteTrip(let provider, let id, let revision):
        .row(table: .trips, provider: provider, id: id, revision: Int64(revision), body: nil)
      case .deleteVehicle(let provider, let id, let revision):
        .row(table: .vehicles, provider: provider, id: id, revision: Int64(revision), body: nil)
      case .putRide(let r):
        .row(
          table: .rides, provider: r.provider, id: r.id, revision: Int64(r.revision), body: try encoder.encode(r))
      case .putBillableTrip(let r):
        .billableTrip(
          provider: r.provider, id: r.billableTripID, reportTime: r.reportTime.timeIntervalSince1970,
          body: try encoder.encode(r))
      }
    }
  }

  /// The change a stored row (or tombstone) stands for.
  public static func change(table: StoredTable, provider: String, id: String, revision: UInt64, body: Data?) throws
    -> StoredChange
  {
    guard let body else {
      switch table {
      case .trips: return .deleteTrip(provider: provider, id: id, revision: revision)
      case .vehicles: return .deleteVehicle(provider: provider, id: id, revision: revision)
      case .rides:
        throw StoreError.damagedRow(
          table: table.rawValue, provider: provider, id: id, reason: "rides are never deleted")
      }
    }
    switch table {
    case .trips: return .putTrip(try trip(from: body))
    case .vehicles: return .putVehicle(try vehicle(from: body))
    case .rides: return .putRide(try ride(from: body))
    }
  }

  public static func trip(from body: Data) throws -> Trip { try decode(body) }
  public static func vehicle(from body: Data) throws -> Vehicle { try decode(body) }
  public static func ride(from body: Data) throws -> Ride { try decoder.decode(Ride.self, from: body) }

  /// Reads either row format: binary, or the JSON of rows written before it.
  static func decode<T: RowCodable & Decodable>(_ body: Data) throws -> T {
    switch body.first {
    case RowFormat.binaryV1:
      var reader = RowReader([UInt8](body), from: 1)
      let value = try T(row: &reader)
      guard !reader.hasMore else { throw reader.damaged("unread bytes at the end (written by a newer fleetd?)") }
      return value
    case RowFormat.json: return try decoder.decode(T.self, from: body)
    case let format:
      throw RowFormatError(offset: 0, reason: "unknown row format \(format.map(String.init) ?? "(empty)")")
    }
  }

  /// The newest change per row: one statement may then write a whole batch (PostgreSQL's
  /// `ON CONFLICT DO UPDATE` refuses to touch a row twice), and the older ones would lose anyway.
  public static func newestPerRow(_ changes: [EncodedChange]) -> [EncodedChange] {
    struct Key: Hashable {
      let table: StoredTable
      let provider: String
      let id: String
    }
    var newest: [Key: Int] = [:]
    var kept: [EncodedChange] = []
    kept.reserveCapacity(changes.count)
    for change in changes {
      guard case .row(let table, let provider, let id, let revision, _) = change else {
        kept.append(change)
        continue
      }
      let key = Key(table: table, provider: provider, id: id)
      if let index = newest[key], case .row(_, _, _, let older, _) = kept[index] {
        if revision > older { kept[index] = change }
      } else {
        newest[key] = kept.count
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
