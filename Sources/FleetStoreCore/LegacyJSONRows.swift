import FleetCore
import Foundation

/// Rows that earlier versions of fleetd wrote as JSON: trips and vehicles before the binary row
/// format, rides and billing reports until it covered them. Each store's migration converts them
/// once, so that every row it reads afterwards is binary.
public enum LegacyJSONRows {
  /// Non-finite numbers were written as strings.
  static let decoder: JSONDecoder = {
    let decoder = JSONDecoder()
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return decoder
  }()

  /// Whether a row body is JSON (binary rows start with their format byte).
  public static func isJSON(_ body: Data) -> Bool { body.first == RowFormat.json }

  /// The binary body of a JSON row of `table`.
  public static func binary(_ body: Data, table: StoredTable) throws -> Data {
    switch table {
    case .trips: Data(try decoder.decode(Trip.self, from: body).rowBytes)
    case .vehicles: Data(try decoder.decode(Vehicle.self, from: body).rowBytes)
    case .rides: Data(try decoder.decode(Ride.self, from: body).rowBytes)
    // Written binary from the start.
    case .deliveryVehicles, .tasks:
      throw RowFormatError(offset: 0, reason: "\(table.rawValue) rows were never written as JSON")
    }
  }

  /// The binary body of a JSON row of `billable_trips`.
  public static func binaryBillableTrip(_ body: Data) throws -> Data {
    Data(try decoder.decode(BillableTripReport.self, from: body).rowBytes)
  }

  /// A JSON body as earlier versions wrote it, for tests of the conversion.
  public static func json(_ value: some Encodable) throws -> Data {
    let encoder = JSONEncoder()
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
    return try encoder.encode(value)
  }
}
