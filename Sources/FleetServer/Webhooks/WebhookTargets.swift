import Foundation
import NIOCore

/// Which addresses webhooks may be sent to. Loopback, private, link-local, shared (carrier-grade
/// NAT), multicast and unspecified addresses are refused unless allowed
/// (`fleetd serve --allow-private-webhooks`), so that an endpoint cannot turn fleetd against the
/// network it runs in. The check is on the address actually connected to, after DNS, so that a
/// name resolving to a private address is refused too.
enum WebhookTargets {
  static func isPrivate(_ address: SocketAddress) -> Bool {
    switch address {
    case .v4(let v4):
      return isPrivateIPv4(UInt32(bigEndian: v4.address.sin_addr.s_addr))
    case .v6(let v6):
      let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
      return isPrivateIPv6(bytes)
    case .unixDomainSocket:
      return true
    }
  }

  static func isPrivateIPv4(_ a: UInt32) -> Bool {
    func within(_ network: UInt32, _ bits: UInt32) -> Bool { a >> (32 - bits) == network >> (32 - bits) }
    return within(0x0000_0000, 8)  // 0.0.0.0/8, "this network"
      || within(0x0A00_0000, 8)  // 10/8
      || within(0x6440_0000, 10)  // 100.64/10, carrier-grade NAT
      || within(0x7F00_0000, 8)  // 127/8, loopback
      || within(0xA9FE_0000, 16)  // 169.254/16, link-local
      || within(0xAC10_0000, 12)  // 172.16/12
      || within(0xC0A8_0000, 16)  // 192.168/16
      || within(0xE000_0000, 4)  // 224/4, multicast
      || within(0xF000_0000, 4)  // 240/4, reserved and broadcast
  }

  static func isPrivateIPv6(_ b: [UInt8]) -> Bool {
    guard b.count == 16 else { return true }
    if b[0..<15].allSatisfy({ $0 == 0 }) { return true }  // :: and ::1
    if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {  // ::ffff:a.b.c.d
      return isPrivateIPv4(b[12..<16].reduce(0) { $0 << 8 | UInt32($1) })
    }
    return b[0] & 0xFE == 0xFC  // fc00::/7, unique local
      || (b[0] == 0xFE && b[1] & 0xC0 == 0x80)  // fe80::/10, link-local
      || b[0] == 0xFF  // multicast
  }
}
