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

  /// The response's first headers, with the service's metadata; they say which encodings the
  /// server reads, as gRPC's servers do.
  static func responseStart(_ metadata: Metadata) -> HPACKHeaders {
    var headers: HPACKHeaders = [
      ":status": "200", "content-type": "application/grpc", "grpc-accept-encoding": MessageEncoding.accepted,
    ]
    add(metadata, to: &headers)
    return headers
  }

  /// The trailers ending a call; `alone` when no headers went before them (a trailers-only
  /// response, which carries the start's fields too).
  static func trailers(_ status: Status, _ metadata: Metadata, alone: Bool) -> HPACKHeaders {
    var headers: HPACKHeaders =
      alone
      ? [":status": "200", "content-type": "application/grpc", "grpc-accept-encoding": MessageEncoding.accepted]
      : [:]
    headers.add(name: "grpc-status", value: String(status.code.rawValue))
    if !status.message.isEmpty { headers.add(name: "grpc-message", value: percentEncoded(status.message)) }
    add(metadata, to: &headers)
    return headers
  }

  /// A call's request headers: the pseudo-headers, the protocol's, then the caller's metadata.
  static func request(
    _ method: MethodDescriptor, scheme: String, authority: String, timeout: Duration?, _ metadata: Metadata
  ) -> HPACKHeaders {
    var headers: HPACKHeaders = [
      ":method": "POST", ":scheme": scheme, ":path": "/" + method.fullyQualifiedMethod, ":authority": authority,
      "content-type": "application/grpc", "te": "trailers",
    ]
    if let timeout { headers.add(name: "grpc-timeout", value: self.timeout(timeout)) }
    add(metadata, to: &headers)
    return headers
  }

  /// grpc-timeout's form: at most eight digits and a unit; milliseconds, rounded up, while they
  /// fit, else seconds.
  static func timeout(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let milliseconds = max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    if milliseconds <= 99_999_999 { return "\(milliseconds)m" }
    return "\(min(seconds, 99_999_999))S"
  }

  /// A response's status and trailing metadata from the headers that end it: grpc-status and
  /// grpc-message, or the HTTP status mapped as gRPC's documents say when grpc-status is missing.
  static func status(_ headers: HPACKHeaders) -> (Status, Metadata) {
    var metadata = Self.metadata(headers)
    metadata.removeAllValues(forKey: "grpc-status")
    metadata.removeAllValues(forKey: "grpc-message")
    guard let field = headers.first(name: "grpc-status") else {
      let http = headers.first(name: ":status").flatMap { Int($0) }
      guard let http, http != 200 else {
        return (Status(code: .unknown, message: "the response ended without a grpc-status"), metadata)
      }
      return (Status(httpStatusCode: http), metadata)
    }
    guard let raw = Int(field), let code = Status.Code(rawValue: raw) else {
      return (Status(code: .unknown, message: "grpc-status '\(field)' is not a status code"), metadata)
    }
    return (Status(code: code, message: percentDecoded(headers.first(name: "grpc-message") ?? "")), metadata)
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

  /// The inverse of `percentEncoded`; a `%` not followed by two hex digits stays as it is.
  static func percentDecoded(_ message: String) -> String {
    guard message.utf8.contains(UInt8(ascii: "%")) else { return message }
    let bytes = Array(message.utf8)
    var decoded: [UInt8] = []
    decoded.reserveCapacity(bytes.count)
    var i = 0
    while i < bytes.count {
      if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count,
        let byte = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16)
      {
        decoded.append(byte)
        i += 3
      } else {
        decoded.append(bytes[i])
        i += 1
      }
    }
    return String(decoding: decoded, as: UTF8.self)
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
