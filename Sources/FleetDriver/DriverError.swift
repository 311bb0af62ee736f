import GRPCCore

/// A failed update, or a request the reporter refuses. `code` is the gRPC status code fleetd
/// answered with (or the one the request would have got).
public struct DriverError: Error, Sendable, Hashable, CustomStringConvertible {
  public var code: RPCError.Code
  public var message: String

  public init(_ code: RPCError.Code, _ message: String) {
    self.code = code
    self.message = message
  }

  init(_ error: any Error) {
    switch error {
    case let error as DriverError: self = error
    case let error as RPCError: self.init(error.code, error.message)
    case let error as TokenProviderError: self.init(.unauthenticated, "no token: \(error)")
    case is CancellationError: self.init(.cancelled, "the update was cancelled")
    default: self.init(.unknown, String(describing: error))
    }
  }

  public var description: String { "\(code): \(message)" }

  /// Errors of the network or the server's load: the update is retried with backoff, and its
  /// position kept for the backlog.
  public var isTransient: Bool {
    [.unavailable, .deadlineExceeded, .aborted, .cancelled, .resourceExhausted, .internalError, .unknown].contains(code)
  }
}
