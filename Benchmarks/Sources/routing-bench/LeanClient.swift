import Foundation

/// An HTTP/1.1 client that is nothing but a socket, one request at a time, so that what differs
/// between two servers is the servers' own cost per request and per connection (URLSession's
/// own cost, about a millisecond a request here, hides most of it). Blocking: a benchmark's.
struct LeanClient {
  let port: UInt16
  private var kept: Int32 = -1

  init(base: String) {
    port = UInt16(URL(string: base)?.port ?? 80)
  }

  /// Milliseconds from sending the request to the whole answer, or nil when it is not a 200.
  /// `newConnection`: connect first and read until the server closes (the connect counted);
  /// otherwise on the connection kept from the last request (a new one when the server closed
  /// it, as OSRM does every 512 requests).
  mutating func get(_ path: String, newConnection: Bool) throws -> Double? {
    if newConnection {
      let t0 = ContinuousClock.now
      let socket = try Self.connect(port)
      defer { close(socket) }
      try Self.send(socket, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
      var answer: [UInt8] = []
      while let bytes = try Self.receive(socket), !bytes.isEmpty { answer += bytes }
      return Self.isOK(answer) ? Self.milliseconds(since: t0) : nil
    }
    for _ in 0..<2 {
      if kept < 0 { kept = try Self.connect(port) }
      let t0 = ContinuousClock.now
      try Self.send(kept, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
      var answer: [UInt8] = []
      while !Self.isComplete(answer) {
        guard let bytes = try Self.receive(kept), !bytes.isEmpty else { break }
        answer += bytes
      }
      if Self.isComplete(answer) { return Self.isOK(answer) ? Self.milliseconds(since: t0) : nil }
      close(kept)  // closed by the server: once more on a new connection
      kept = -1
    }
    return nil
  }

  static func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
  }

  static func isOK(_ answer: [UInt8]) -> Bool { answer.starts(with: Array("HTTP/1.1 200".utf8)) }

  /// Whether `answer` holds a whole response: its head, and as many bytes after it as it says.
  static func isComplete(_ answer: [UInt8]) -> Bool {
    let end = Array("\r\n\r\n".utf8)
    guard let headEnd = answer.indices.dropLast(3).first(where: { answer[$0..<$0 + 4].elementsEqual(end) }) else {
      return false
    }
    let head = String(decoding: answer[..<headEnd], as: UTF8.self).lowercased()
    guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
      let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    else { return false }
    return answer.count >= headEnd + 4 + length
  }

  static func connect(_ port: UInt16) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var yes: Int32 = 1
    setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard socket >= 0, connected == 0 else {
      if socket >= 0 { close(socket) }
      throw POSIXError(.ECONNREFUSED)
    }
    return socket
  }

  static func send(_ socket: Int32, _ text: String) throws {
    let bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard n > 0 else { throw POSIXError(.EPIPE) }
      sent += n
    }
  }

  /// What came, empty when the server closed the connection.
  static func receive(_ socket: Int32) throws -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 65536)
    let n = recv(socket, &buffer, buffer.count, 0)
    if n < 0 { return errno == ECONNRESET ? [] : nil }
    return Array(buffer[..<n])
  }
}
