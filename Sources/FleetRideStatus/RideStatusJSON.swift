import Foundation

/// RideStatus as fleetd sends it: ISO 8601 dates (whole seconds), sorted keys. fleetd encodes
/// with it and clients decode with it, so the two cannot drift apart.
public enum RideStatusJSON {
  public static func encode(_ status: RideStatus) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(status)
  }

  public static func decode(_ data: Data) throws -> RideStatus {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(RideStatus.self, from: data)
  }
}
