import Foundation
import GRPCCore

/// The one field a simulated rider's app reads of each pushed trip: when its vehicle's location
/// was reported (Trip.last_location = 11 → VehicleLocation.update_time = 4 → Timestamp seconds
/// = 1, nanos = 2), nil when the trip has none. Decoding whole trips cost the load generator a
/// tenth of its CPU at thousands of pushes a second; fleetd sends the same bytes either way.
struct PushedLocationTime: MessageDeserializer {
  struct Malformed: Error {}

  func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Date? {
    try serializedMessageBytes.withUnsafeBytes { bytes throws(Malformed) -> Date? in
      guard let location = try Self.lastField(11, in: bytes[...]),
        let stamp = try Self.lastField(4, in: location)
      else { return nil }
      var seconds: UInt64 = 0
      var nanos: UInt64 = 0
      var rest = stamp
      while !rest.isEmpty {
        let key = try Self.varint(&rest)
        switch (key >> 3, key & 7) {
        case (1, 0): seconds = try Self.varint(&rest)
        case (2, 0): nanos = try Self.varint(&rest)
        default: try Self.skip(wireType: key & 7, &rest)
        }
      }
      return Date(
        timeIntervalSince1970: TimeInterval(Int64(bitPattern: seconds))
          + TimeInterval(Int32(truncatingIfNeeded: nanos)) / 1e9)
    }
  }

  /// The bytes of the last occurrence of length-delimited field `number`, nil when absent.
  static func lastField(_ number: UInt64, in message: Slice<UnsafeRawBufferPointer>) throws(Malformed)
    -> Slice<UnsafeRawBufferPointer>?
  {
    var rest = message
    var found: Slice<UnsafeRawBufferPointer>?
    while !rest.isEmpty {
      let key = try varint(&rest)
      if key >> 3 == number, key & 7 == 2 {
        guard let length = Int(exactly: try varint(&rest)), length <= rest.count else { throw Malformed() }
        found = rest.prefix(length)
        rest = rest.dropFirst(length)
      } else {
        try skip(wireType: key & 7, &rest)
      }
    }
    return found
  }

  static func varint(_ bytes: inout Slice<UnsafeRawBufferPointer>) throws(Malformed) -> UInt64 {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while let byte = bytes.first {
      bytes = bytes.dropFirst()
      guard shift < 64 else { throw Malformed() }
      value |= UInt64(byte & 0x7f) << shift
      if byte & 0x80 == 0 { return value }
      shift += 7
    }
    throw Malformed()
  }

  static func skip(wireType: UInt64, _ bytes: inout Slice<UnsafeRawBufferPointer>) throws(Malformed) {
    let length: Int
    switch wireType {
    case 0:
      _ = try varint(&bytes)
      return
    case 1: length = 8
    case 2:
      guard let given = Int(exactly: try varint(&bytes)) else { throw Malformed() }
      length = given
    case 5: length = 4
    default: throw Malformed()
    }
    guard length <= bytes.count else { throw Malformed() }
    bytes = bytes.dropFirst(length)
  }
}
