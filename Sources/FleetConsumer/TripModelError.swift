import GRPCCore

/// Why the trip could not be read. `code` is the gRPC status code fleetd answered with, or the
/// one the request would have got (as Fleet Engine's Consumer SDK reports them).
public struct TripModelError: Error, Sendable, Hashable, CustomStringConvertible {
  public var code: RPCError.Code
  public var message: String

  public init(_ code: RPCError.Code, _ message: String) {
    self.code = code
    self.message = message
  }

  init(_ error: any Error) {
    switch error {
    case let error as TripModelError: self = error
    case let error as RPCError: self.init(error.code, error.message)
    case is CancellationError: self.init(.cancelled, "the request was cancelled")
    default: self.init(.unknown, String(describing: error))
    }
  }

  public var description: String { "\(code): \(message)" }

  /// Errors of the server or the network (Fleet Engine: ABORTED, CANCELLED, DEADLINE_EXCEEDED,
  /// UNAVAILABLE). The model recovers from them by itself, with backoff; subscribers are not
  /// told. Everything else (INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED,
  /// RESOURCE_EXHAUSTED, UNAUTHENTICATED, …) is reported, and retried all the same.
  public var isRecoveredAutomatically: Bool {
    [.aborted, .cancelled, .deadlineExceeded, .unavailable].contains(code)
  }
}
