import Foundation
import GRPCCore
import NIOCore

/// A server that could not start listening (its port in use, a port that needs privileges, an
/// address that is not this machine's), said as such rather than as the transport's error, so
/// that the command can name the flag that chose it.
public struct ListenFailure: Error, CustomStringConvertible {
  public enum Server: String, Sendable {
    case grpc = "gRPC"
    case http = "HTTP"
  }
  public let server: Server
  public let reason: String

  public var description: String { "the \(server.rawValue) server could not listen: \(reason)" }

  init(server: Server, reason: String) {
    self.server = server
    self.reason = reason
  }

  /// The listening failure `error` is, if it is one: gRPC wraps the socket's error in its
  /// transport error; Hummingbird throws the socket's error itself.
  init?(_ error: any Error) {
    if let runtime = error as? RuntimeError, runtime.code == .transportError, let io = runtime.cause as? IOError,
      let reason = Self.reason(io.errnoCode)
    {
      (server, self.reason) = (.grpc, reason)
    } else if let io = error as? IOError, let reason = Self.reason(io.errnoCode) {
      (server, self.reason) = (.http, reason)
    } else {
      return nil
    }
  }

  /// Only the errors `bind` gives; any other socket error is left as it came.
  static func reason(_ code: CInt) -> String? {
    switch code {
    case EADDRINUSE: "the port is in use (another fleetd, or another program)"
    case EACCES: "permission denied (ports below 1024 need privileges)"
    case EADDRNOTAVAIL: "the address is not one of this machine's"
    default: nil
    }
  }
}
