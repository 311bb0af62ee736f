import Glibc

/// A TCP socket listening on a free loopback port until closed: a port another process cannot
/// bind (fleetd's errors for a port in use), or, closed at once, a port free for the taking.
public struct ListeningSocket: ~Copyable {
  let descriptor: Int32
  public let port: Int

  public init() throws {
    let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
        bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
          && listen(descriptor, 1) == 0
      }
    }
    guard descriptor >= 0, bound else {
      if descriptor >= 0 { Glibc.close(descriptor) }
      throw ClusterError("no free loopback port")
    }
    self.descriptor = descriptor
    port = Int(UInt16(bigEndian: address.sin_port))
  }

  deinit { Glibc.close(descriptor) }
}
