import CZlib
import Testing

@testable import FleetGRPCTransport

/// Inflating a request message: whole streams only, never past the limit.
@Suite struct MessageEncodingTests {
  /// `bytes` in zlib's format (gRPC's deflate).
  func zlib(_ bytes: [UInt8]) -> [UInt8] {
    var size = compressBound(uLong(bytes.count))
    var out = [UInt8](repeating: 0, count: Int(size))
    let status = compress(&out, &size, bytes, uLong(bytes.count))
    #expect(status == Z_OK)
    return Array(out[..<Int(size)])
  }

  @Test func aWholeStreamInflatesToItsBytes() throws {
    let message = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 % 13) }
    #expect(try MessageEncoding.deflate.inflate(zlib(message), limit: 200_000).get() == message)
    #expect(try MessageEncoding.deflate.inflate(zlib([]), limit: 10).get() == [])
    #expect(try MessageEncoding.identity.inflate([1, 2], limit: 10).get() == [1, 2])
  }

  @Test func inflatingStopsAtTheLimit() {
    let message = [UInt8](repeating: 0, count: 1_000_000)
    #expect(MessageEncoding.deflate.inflate(zlib(message), limit: 999_999) == .failure(.tooLong))
  }

  @Test func aCutOrPaddedOrForeignStreamIsCorrupt() {
    let whole = zlib(Array("a message, compressed".utf8))
    #expect(MessageEncoding.deflate.inflate(Array(whole.dropLast(3)), limit: 100) == .failure(.corrupt(Z_BUF_ERROR)))
    #expect(MessageEncoding.deflate.inflate(whole + [0], limit: 100) == .failure(.corrupt(Z_DATA_ERROR)))
    // zlib's format is not gzip's.
    #expect(MessageEncoding.gzip.inflate(whole, limit: 100) == .failure(.corrupt(Z_DATA_ERROR)))
    #expect(MessageEncoding.gzip.inflate([], limit: 100) == .failure(.corrupt(Z_BUF_ERROR)))
  }

  @Test func encodingsAreKnownByTheirNames() {
    #expect(MessageEncoding(name: "gzip") == .gzip)
    #expect(MessageEncoding(name: "deflate") == .deflate)
    #expect(MessageEncoding(name: "identity") == .identity)
    #expect(MessageEncoding(name: "snappy") == nil)
    #expect(MessageEncoding(name: "GZIP") == nil)
  }
}
