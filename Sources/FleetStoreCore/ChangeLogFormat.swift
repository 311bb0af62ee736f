import FleetCore
import FleetGeometry
import Foundation

// The change log's binary form: each accepted write of a batch, as its rows (in the stores' row
// format) and the progress computed for its vehicles, for the other instances to apply.
//
// Every instance decodes every other instance's writes, and a route makes progress long, so the
// log is written field by field like rows: JSON through Codable took half of a writer's CPU.
//
// Layout, with `RowWriter`'s encodings: one format byte (`RowFormat.binaryV1`), a count of
// writes; each write a count of rows (table, provider, id, revision, optional body) and a count
// of progress records (provider, vehicle, revision, optional progress).

/// One accepted write, as the log keeps it.
public struct LoggedWrite: Sendable, Hashable {
  public var rows: [StoredRow]
  public var progress: [VehicleProgressRecord]

  public init(rows: [StoredRow], progress: [VehicleProgressRecord]) {
    self.rows = rows
    self.progress = progress
  }
}

public enum ChangeLogFormat {
  public static func encode(_ writes: [LoggedWrite]) -> [UInt8] {
    var row = RowWriter(capacity: 1024)
    row.bytes.append(RowFormat.binaryV1)
    row.array(writes) { row, write in
      row.array(write.rows) { row, logged in
        row.string(logged.table.rawValue)
        row.string(logged.provider)
        row.string(logged.id)
        row.varint(logged.revision)
        row.optional(logged.body) { $0.data($1) }
      }
      row.array(write.progress, VehicleProgressRecord.write)
    }
    return row.bytes
  }

  public static func decode(_ bytes: [UInt8]) throws -> [LoggedWrite] {
    var row = RowReader(bytes)
    let format = try row.byte()
    guard format == RowFormat.binaryV1 else { throw row.damaged("unknown change log format \(format)") }
    return try row.array { row throws(RowFormatError) in
      let rows = try row.array { row throws(RowFormatError) in
        let name = try row.string()
        guard let table = StoredTable(rawValue: name) else { throw row.damaged("unknown table '\(name)'") }
        return StoredRow(
          table: table, provider: try row.string(), id: try row.string(), revision: try row.varint(),
          body: try row.optional { row throws(RowFormatError) in try row.data() })
      }
      return LoggedWrite(rows: rows, progress: try row.array(VehicleProgressRecord.read))
    }
  }
}

extension VehicleProgressRecord: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(vehicleID)
    row.varint(revision)
    row.optional(progress, VehicleRouteProgress.write)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(
      provider: try row.string(), vehicleID: try row.string(), revision: try row.varint(),
      progress: try row.optional(VehicleRouteProgress.read))
  }
}

extension VehicleRouteProgress: RowCodable {
  func write(to row: inout RowWriter) {
    row.array(legs, WaypointProgress.write)
    row.enumValue(navigationStatus)
    row.bool(isLocationSnappable)
    row.date(computedAt)
    row.date(routeVersion)
    row.date(trafficVersion)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(
      legs: try row.array(WaypointProgress.read), navigationStatus: try row.enumValue(),
      isLocationSnappable: try row.bool(), computedAt: try row.date(), routeVersion: try row.date(),
      trafficVersion: try row.date())
  }
}

extension WaypointProgress: RowCodable {
  func write(to row: inout RowWriter) {
    waypoint.write(to: &row)
    row.array(path, LatLng.write)
    row.string(encodedPath)
    row.array(traffic, SpeedInterval.write)
    row.double(distanceMeters)
    row.double(duration)
    row.date(eta)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(
      waypoint: try TripWaypoint(row: &row), path: try row.array(LatLng.read), encodedPath: try row.string(),
      traffic: try row.array(SpeedInterval.read), distanceMeters: try row.double(), duration: try row.double(),
      eta: try row.date())
  }
}

extension SpeedInterval: RowCodable {
  func write(to row: inout RowWriter) {
    row.int(Int64(start))
    row.int(Int64(end))
    row.enumValue(speed)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(start: Int(try row.int()), end: Int(try row.int()), speed: try row.enumValue())
  }
}
