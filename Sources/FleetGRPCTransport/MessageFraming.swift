import NIOCore

/// gRPC's length-prefixed messages in a stream's DATA frames (the gRPC HTTP/2 protocol
/// document): a compressed flag, a four-byte length, the message's bytes.
enum MessageFraming {
  enum Next {
    /// A whole message; `compressed` when its flag says so (in the call's grpc-encoding).
    case message([UInt8], compressed: Bool)
    /// Not all of the next message has come yet.
    case incomplete
    /// The next message's length is over the limit.
    case tooLong(Int)
  }

  /// The next message at the front of `partial`, taken from it when whole. A too long one is
  /// told as soon as its prefix has come.
  static func next(from partial: inout ByteBuffer, limit: Int) -> Next {
    guard partial.readableBytes >= 5 else { return .incomplete }
    let start = partial.readerIndex
    let compressed = partial.getInteger(at: start, as: UInt8.self)! != 0
    let length = Int(partial.getInteger(at: start + 1, as: UInt32.self)!)
    guard length <= limit else { return .tooLong(length) }
    guard partial.readableBytes >= 5 + length else { return .incomplete }
    partial.moveReaderIndex(forwardBy: 5)
    return .message(partial.readBytes(length: length)!, compressed: compressed)
  }

  /// `bytes` as one uncompressed message.
  static func frame(_ bytes: [UInt8], _ allocator: ByteBufferAllocator) -> ByteBuffer {
    var buffer = allocator.buffer(capacity: 5 + bytes.count)
    buffer.writeInteger(UInt8(0))
    buffer.writeInteger(UInt32(bytes.count))
    buffer.writeBytes(bytes)
    return buffer
  }
}
