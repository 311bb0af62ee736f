import Foundation

/// Writes an `Encodable` value as JSON straight into bytes, in one pass, as the value encodes
/// itself: what Foundation's `JSONEncoder` does by first building a tree of every value, which
/// cost more than routing itself for a route with steps (docs/benchmarks.md). Keys come in the
/// order the value writes them; optionals that are nil are left out (`encodeIfPresent`), doubles
/// are written in their shortest form (whole ones without a fraction), non-finite ones as null;
/// slashes are not escaped. A nested container or super encoder is written where it is asked for
/// and closed when its parent writes on, so each must be filled before the parent's next element
/// (as every `encode(to:)` in the HTTP fronts does).
struct StreamingJSONEncoder {
  func encode(_ value: some Encodable) throws -> Data {
    let output = JSONOutput()
    if let writable = value as? any JSONWritable {
      try writable.write(to: output)
    } else {
      try output.write(value)
    }
    return output.data
  }
}

/// A shape that writes its own JSON, key by key: the few that every route answer has, so that a
/// short route's answer skips the generic containers (an encoder object and a boxed container for
/// each object and array), which were a fifth of its cost (docs/benchmarks.md). The encoder
/// takes this way for the value it is given (nested ones are written by their parent's
/// `write(to:)`, or through `Encodable` inside a value that encodes generically); the
/// `Encodable` conformance, which other encoders use, is the reference it is tested against
/// (`StreamingJSONEncoderTests`).
protocol JSONWritable {
  func write(to output: JSONOutput) throws
}

/// The bytes written so far, shared by every container of one encoding. Kept in memory of its
/// own rather than an array: appending to an array held by a class is checked for exclusive
/// access at run time, byte after byte.
final class JSONOutput {
  private var start: UnsafeMutablePointer<UInt8>
  private var count = 0
  private var capacity = 4096

  init() { start = .allocate(capacity: capacity) }
  deinit { start.deallocate() }

  var data: Data { Data(bytes: start, count: count) }

  private func reserve(_ more: Int) {
    guard count + more > capacity else { return }
    let grown = max(capacity * 2, count + more)
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
    moved.update(from: start, count: count)
    start.deallocate()
    start = moved
    capacity = grown
  }

  func put(_ byte: UInt8) {
    reserve(1)
    start[count] = byte
    count += 1
  }

  func put(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard !bytes.isEmpty else { return }
    reserve(bytes.count)
    (start + count).update(from: bytes.baseAddress!, count: bytes.count)
    count += bytes.count
  }

  func append(_ text: StaticString) { text.withUTF8Buffer { put($0) } }

  func put(_ text: String) {
    var text = text
    text.withUTF8 { put($0) }
  }

  func write<T: Encodable>(_ value: T) throws {
    // The common kinds by their type, without a dynamic cast.
    if T.self == String.self {
      writeString(value as! String)
    } else if T.self == Double.self {
      writeDouble(value as! Double)
    } else if T.self == Int.self {
      put(String(value as! Int))
    } else if T.self == Bool.self {
      append((value as! Bool) ? "true" : "false")
    } else if T.self == Float.self {
      let number = value as! Float
      number.isFinite ? put("\(number)") : append("null")
    } else if let number = value as? any BinaryInteger {
      put("\(number)")
    } else {
      let encoder = ValueEncoder(output: self)
      try value.encode(to: encoder)
      encoder.close()
    }
  }

  /// An array, each element written by `element`.
  func writeArray<Element>(_ elements: [Element], _ element: (Element) throws -> Void) rethrows {
    put(UInt8(ascii: "["))
    for (i, value) in elements.enumerated() {
      if i > 0 { put(UInt8(ascii: ",")) }
      try element(value)
    }
    put(UInt8(ascii: "]"))
  }

  func writeDouble(_ value: Double) {
    guard value.isFinite else { return append("null") }
    if value == value.rounded(), abs(value) < 1e15 { put(String(Int64(value))) } else { put("\(value)") }
  }

  static let hex = Array("0123456789abcdef".utf8)

  /// The string quoted, the runs that need no escape copied whole (a polyline is one long run
  /// with a few backslashes).
  func writeString(_ string: String) {
    put(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { bytes in
      var written = 0
      for (i, byte) in bytes.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20
      {
        put(UnsafeBufferPointer(rebasing: bytes[written..<i]))
        escape(byte)
        written = i + 1
      }
      put(UnsafeBufferPointer(rebasing: bytes[written...]))
    }
    put(UInt8(ascii: "\""))
  }

  private func escape(_ byte: UInt8) {
    switch byte {
    case UInt8(ascii: "\""): append("\\\"")
    case UInt8(ascii: "\\"): append("\\\\")
    case 0x0A: append("\\n")
    case 0x0D: append("\\r")
    case 0x09: append("\\t")
    default:
      append("\\u00")
      put(Self.hex[Int(byte >> 4)])
      put(Self.hex[Int(byte & 0xF)])
    }
  }
}

/// The encoder one value writes itself with: it opens the value's object or array when the
/// value asks for its container, and `close()` ends it once the value has written everything.
/// A nested container or super encoder is a child encoder, ended when this one writes on.
final class ValueEncoder: Encoder {
  enum Opened { case none, object, array, single }

  let output: JSONOutput
  var opened = Opened.none
  /// Whether the open object or array has an element yet (a comma goes before the next).
  var hasElement = false
  /// The nested container or super encoder still open in this one.
  var child: ValueEncoder?
  var codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] = [:]

  init(output: JSONOutput) { self.output = output }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    if opened == .none {
      opened = .object
      output.append("{")
    }
    return KeyedEncodingContainer(ObjectContainer<Key>(encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    if opened == .none {
      opened = .array
      output.append("[")
    }
    return ArrayContainer(encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    opened = .single
    return SingleContainer(encoder: self)
  }

  /// Starts the next element of the open object or array.
  func separate() {
    closeChild()
    if hasElement { output.append(",") }
    hasElement = true
  }

  /// A child encoder for the element just started (its key written, for an object).
  func nested() -> ValueEncoder {
    let encoder = ValueEncoder(output: output)
    child = encoder
    return encoder
  }

  func closeChild() {
    child?.close()
    child = nil
  }

  func close() {
    closeChild()
    switch opened {
    case .object: output.append("}")
    case .array: output.append("]")
    case .single: break
    case .none: output.append("{}")
    }
  }
}

struct ObjectContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoder: ValueEncoder
  var codingPath: [any CodingKey] { encoder.codingPath }

  func key(_ key: Key) {
    encoder.separate()
    encoder.output.writeString(key.stringValue)
    encoder.output.append(":")
  }

  mutating func encodeNil(forKey key: Key) throws {
    self.key(key)
    encoder.output.append("null")
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    self.key(key)
    try encoder.output.write(value)
  }

  // The common kinds written without a cast.
  mutating func encode(_ value: String, forKey key: Key) throws {
    self.key(key)
    encoder.output.writeString(value)
  }

  mutating func encode(_ value: Double, forKey key: Key) throws {
    self.key(key)
    encoder.output.writeDouble(value)
  }

  mutating func encode(_ value: Int, forKey key: Key) throws {
    self.key(key)
    encoder.output.put(String(value))
  }

  mutating func encode(_ value: Bool, forKey key: Key) throws {
    self.key(key)
    encoder.output.append(value ? "true" : "false")
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey>
  {
    self.key(key)
    return encoder.nested().container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    self.key(key)
    return encoder.nested().unkeyedContainer()
  }

  /// Under the key "super", as Foundation's encoder writes it.
  mutating func superEncoder() -> any Encoder {
    encoder.separate()
    encoder.output.append("\"super\":")
    return encoder.nested()
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    self.key(key)
    return encoder.nested()
  }
}

struct ArrayContainer: UnkeyedEncodingContainer {
  let encoder: ValueEncoder
  var codingPath: [any CodingKey] { encoder.codingPath }
  var count = 0

  mutating func encodeNil() throws {
    encoder.separate()
    encoder.output.append("null")
    count += 1
  }

  mutating func encode<T: Encodable>(_ value: T) throws {
    encoder.separate()
    try encoder.output.write(value)
    count += 1
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
    NestedKey
  > {
    encoder.separate()
    count += 1
    return encoder.nested().container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    encoder.separate()
    count += 1
    return encoder.nested().unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    encoder.separate()
    count += 1
    return encoder.nested()
  }
}

struct SingleContainer: SingleValueEncodingContainer {
  let encoder: ValueEncoder
  var codingPath: [any CodingKey] { encoder.codingPath }

  mutating func encodeNil() throws { encoder.output.append("null") }
  mutating func encode<T: Encodable>(_ value: T) throws { try encoder.output.write(value) }
}
