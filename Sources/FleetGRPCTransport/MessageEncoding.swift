import CZlib

/// A call's message encoding (gRPC's compression document): `grpc-encoding` names the algorithm
/// its compressed messages use. The server reads gzip (RFC 1952) and deflate (zlib's format,
/// RFC 1950), as gRPC's own servers do, and answers identity: a client that compresses to save
/// a phone's bandwidth needs nothing more. HTTP's content codings of the same names are the same
/// formats (RFC 9110), so fleetd's REST front reads request bodies with it too.
public enum MessageEncoding: Equatable, Sendable {
  case identity
  case gzip
  case deflate

  /// What the server reads, for `grpc-accept-encoding`.
  public static let accepted = "identity,deflate,gzip"

  public init?(name: String) {
    switch name {
    case "identity": self = .identity
    case "gzip": self = .gzip
    case "deflate": self = .deflate
    default: return nil
    }
  }

  public enum InflateError: Error, Equatable, Sendable {
    /// Inflated, the message is longer than the limit (it is not inflated further).
    case tooLong
    /// The bytes are not a whole stream of the encoding; zlib's status.
    case corrupt(Int32)
  }

  /// A compressed message's bytes inflated, at most `limit` of them: a small message that
  /// inflates to gigabytes is stopped at the limit, not held in memory.
  public func inflate(_ compressed: [UInt8], limit: Int) -> Result<[UInt8], InflateError> {
    // zlib's window bits: 15, and 16 more to expect gzip's header and trailer instead of zlib's.
    let windowBits: Int32
    switch self {
    case .identity: return .success(compressed)
    case .gzip: windowBits = 15 + 16
    case .deflate: windowBits = 15
    }
    var stream = z_stream()
    let started = inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
    guard started == Z_OK else { return .failure(.corrupt(started)) }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: min(max(4 * compressed.count, 1024), 64 * 1024))
    return compressed.withUnsafeBufferPointer { input -> Result<[UInt8], InflateError> in
      // zlib's input pointer is not const, but inflate only reads through it.
      stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
      stream.avail_in = uInt(input.count)
      while true {
        let (status, produced) = chunk.withUnsafeMutableBufferPointer { out in
          stream.next_out = out.baseAddress
          stream.avail_out = uInt(out.count)
          let status = CZlib.inflate(&stream, Z_NO_FLUSH)
          return (status, out.count - Int(stream.avail_out))
        }
        guard output.count + produced <= limit else { return .failure(.tooLong) }
        output.append(contentsOf: chunk[..<produced])
        switch status {
        case Z_STREAM_END:
          // Bytes after the end are not part of the message.
          return stream.avail_in == 0 ? .success(output) : .failure(.corrupt(Z_DATA_ERROR))
        case Z_OK:
          continue
        default:
          // Z_BUF_ERROR: the input ended before the stream did.
          return .failure(.corrupt(status))
        }
      }
    }
  }
}
