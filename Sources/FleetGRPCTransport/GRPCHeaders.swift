import Foundation
import GRPCCore
import NIOHPACK

/// gRPC over HTTP/2's headers (the gRPC HTTP/2 protocol document): a call's metadata from its
/// request headers, and the response's headers and trailers from the service's metadata and status.
enum GRPCHeaders {
  /// Request headers that are the protocol's, not the caller's metadata.
  static let reserved: Set<String> = ["te", "content-type", "grpc-encoding", "grpc-accept-encoding"]

  static func metadata(_ headers: HPACKHeaders) -> Metadata {
    var metadata = Metadata()
    for (name, value, _) in headers where !name.hasPrefix(":") && !reserved.contains(name) {
      if name.hasSuffix("-bin") {
        // Senders may leave the base64 padding off; both forms are accepted.
        guard let bytes = decodeBase64(value) else { continue }
        metadata.addBinary(bytes, forKey: name)
      } else {
        metadata.addString(value, forKey: name)
      }
    }
    return metadata
  }

  /// The response's first headers, with the service's metadata.
  static func responseStart(_ metadata: Metadata) -> HPACKHeaders {
    var headers: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
    add(metadata, to: &headers)
    return headers
  }

  /// The trailers ending a call; `alone` when no headers went before them (a trailers-only
  /// response, which carries the start's fields too).
  static func trailers(_ status: Status, _ metadata: Metadata, alone: Bool) -> HPACKHeaders {
    var headers: HPACKHeaders = alone ? [":status": "200", "content-type": "application/grpc"] : [:]
    headers.add(name: "grpc-status", value: String(status.code.rawValue))
    if !status.message.isEmpty { headers.add(name: "grpc-message", value: percentEncoded(status.message)) }
    add(metadata, to: &headers)
    return headers
  }

  static func add(_ metadata: Metadata, to headers: inout HPACKHeaders) {
    for entry in metadata {
      switch entry.value {
      case .string(let value): headers.add(name: entry.key, value: value)
      case .binary(let value): headers.add(name: entry.key, value: Data(value).base64EncodedString())
      }
    }
  }

  /// grpc-message's encoding: bytes outside printable ASCII, and `%` itself, as `%XX`.
  static func percentEncoded(_ message: String) -> String {
    var encoded = ""
    encoded.reserveCapacity(message.utf8.count)
    for byte in message.utf8 {
      if byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "%") {
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    return encoded
  }

  static func decodeBase64(_ value: String) -> [UInt8]? {
    var padded = value
    let remainder = padded.utf8.count % 4
    if remainder != 0 { padded += String(repeating: "=", count: 4 - remainder) }
    return Data(base64Encoded: padded).map(Array.init)
  }

  /// A call's method from its `:path` (`/package.Service/Method`), nil when it is not one.
  static func method(_ path: String) -> MethodDescriptor? {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
    return MethodDescriptor(fullyQualifiedService: String(parts[1]), method: String(parts[2]))
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
