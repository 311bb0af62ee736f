import Foundation
import Glibc

/// A plain TCP connection to a loopback port, for what an HTTP client library would hide:
/// requests pipelined in one write, HTTP/1.0, a body sent whole before reading. Blocking: use
/// it on a dedicated thread (`onDedicatedThread`).
public struct RawConnection: ~Copyable {
  let descriptor: Int32

  /// Connected, with sends and receives that give up after `timeout` seconds.
  public init(port: Int, timeout: Int = 20) throws {
    let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var limit = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard descriptor >= 0, connected == 0 else {
      if descriptor >= 0 { Glibc.close(descriptor) }
      throw POSIXError(.ECONNREFUSED)
    }
    self.descriptor = descriptor
  }

  deinit { Glibc.close(descriptor) }

  /// Sends all of `bytes`; false when the server closed the connection or stopped reading.
  public func send(_ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if n <= 0 { return false }
      sent += n
    }
    return true
  }

  /// Up to `limit` bytes as they come; empty when the server closed the connection, nil when
  /// nothing came within the timeout.
  public func receive(limit: Int = 65536) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: limit)
    let n = recv(descriptor, &buffer, buffer.count, 0)
    if n > 0 { return Array(buffer[..<n]) }
    return n == 0 || errno == ECONNRESET ? [] : nil
  }

  /// Everything until the server closes the connection, or nil when it keeps it open past the timeout.
  public func receiveToEnd() -> String? {
    var text: [UInt8] = []
    while true {
      guard let bytes = receive() else { return nil }
      if bytes.isEmpty { return String(decoding: text, as: UTF8.self) }
      text += bytes
    }
  }
}
