import Foundation

// The compact binary fields stored rows and quote IDs are written in: integers as LEB128 varints
// (signed ones zigzag-encoded), doubles as their IEEE-754 bits little-endian, strings as a length
// and UTF-8, optionals as a presence byte, arrays as a count, dates as the double
// `timeIntervalSinceReferenceDate` (exact, like the domain's `Date`).

/// A stored row that cannot be decoded: names where, so that a damaged database is diagnosable.
public struct RowFormatError: Error, CustomStringConvertible {
  public let offset: Int
  public let reason: String

  @inlinable public init(offset: Int, reason: String) {
    self.offset = offset
    self.reason = reason
  }

  public var description: String { "stored row is damaged at byte \(offset): \(reason)" }
}

public struct RowWriter {
  public var bytes: [UInt8] = []

  @inlinable public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  @inlinable public mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }

  @inlinable public mutating func int(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }
  @inlinable public mutating func int32(_ value: Int32) { int(Int64(value)) }
  @inlinable public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

  @inlinable public mutating func double(_ value: Double) {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
  }

  @inlinable public mutating func string(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      varint(UInt64(utf8.count))
      bytes.append(contentsOf: utf8)
    }
  }

  @inlinable public mutating func date(_ value: Date) { double(value.timeIntervalSinceReferenceDate) }

  @inlinable public mutating func data(_ value: Data) {
    varint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  @inlinable public mutating func enumValue<E: RawRepresentable<Int>>(_ value: E) { int(Int64(value.rawValue)) }

  @inlinable public mutating func optional<T>(_ value: T?, _ write: (inout RowWriter, T) -> Void) {
    guard let value else { return bytes.append(0) }
    bytes.append(1)
    write(&self, value)
  }

  @inlinable public mutating func array<T>(_ values: [T], _ write: (inout RowWriter, T) -> Void) {
    varint(UInt64(values.count))
    for value in values { write(&self, value) }
  }
}

public struct RowReader {
  public let bytes: [UInt8]
  public var offset = 0

  @inlinable public init(_ bytes: [UInt8], from offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  @inlinable public var hasMore: Bool { offset < bytes.count }

  @inlinable public func damaged(_ reason: String) -> RowFormatError { RowFormatError(offset: offset, reason: reason) }

  @inlinable public mutating func byte() throws(RowFormatError) -> UInt8 {
    guard offset < bytes.count else { throw damaged("the row ends early") }
    defer { offset += 1 }
    return bytes[offset]
  }

  @inlinable public mutating func varint() throws(RowFormatError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try byte()
      guard shift < 64 else { throw damaged("varint longer than 10 bytes") }
      result |= UInt64(b & 0x7F) << shift
      if b < 0x80 { return result }
      shift += 7
    }
  }

  @inlinable public mutating func int() throws(RowFormatError) -> Int64 {
    let raw = try varint()
    return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
  }

  @inlinable public mutating func int32() throws(RowFormatError) -> Int32 {
    let value = try int()
    guard let narrow = Int32(exactly: value) else { throw damaged("\(value) does not fit a 32-bit field") }
    return narrow
  }

  @inlinable public mutating func bool() throws(RowFormatError) -> Bool {
    switch try byte() {
    case 0: return false
    case 1: return true
    case let b: throw damaged("boolean byte \(b)")
    }
  }

  @inlinable public mutating func double() throws(RowFormatError) -> Double {
    guard bytes.count - offset >= 8 else { throw damaged("the row ends inside a number") }
    var bits: UInt64 = 0
    for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
    offset += 8
    return Double(bitPattern: bits)
  }

  @inlinable public mutating func count() throws(RowFormatError) -> Int {
    let n = try varint()
    // Every element takes at least one byte, so a larger count is damage, not a huge allocation.
    guard n <= UInt64(bytes.count - offset) else { throw damaged("length \(n) exceeds the row") }
    return Int(n)
  }

  @inlinable public mutating func string() throws(RowFormatError) -> String {
    let n = try count()
    defer { offset += n }
    guard let s = String(validating: bytes[offset..<offset + n], as: UTF8.self) else {
      throw damaged("a string is not UTF-8")
    }
    return s
  }

  @inlinable public mutating func date() throws(RowFormatError) -> Date {
    Date(timeIntervalSinceReferenceDate: try double())
  }

  @inlinable public mutating func data() throws(RowFormatError) -> Data {
    let n = try count()
    defer { offset += n }
    return Data(bytes[offset..<offset + n])
  }

  @inlinable public mutating func enumValue<E: RawRepresentable<Int>>(_: E.Type = E.self) throws(RowFormatError) -> E {
    let raw = try int()
    guard let value = Int(exactly: raw).flatMap(E.init(rawValue:)) else { throw damaged("unknown \(E.self) \(raw)") }
    return value
  }

  @inlinable public mutating func optional<T>(_ read: (inout RowReader) throws(RowFormatError) -> T)
    throws(RowFormatError) -> T?
  {
    try bool() ? try read(&self) : nil
  }

  @inlinable public mutating func array<T>(_ read: (inout RowReader) throws(RowFormatError) -> T) throws(RowFormatError)
    -> [T]
  {
    let n = try count()
    var values: [T] = []
    values.reserveCapacity(n)
    for _ in 0..<n { values.append(try read(&self)) }
    return values
  }
}
