import FleetCore
import GRPCCore
import HTTPTypes

/// The one table from domain error codes to gRPC status, HTTP status and metrics label
/// (google.rpc.Code's standard HTTP mapping).
extension FleetError.Code {
  var rpcCode: RPCError.Code {
    switch self {
    case .invalidArgument: .invalidArgument
    case .notFound: .notFound
    case .alreadyExists: .alreadyExists
    case .failedPrecondition: .failedPrecondition
    case .permissionDenied: .permissionDenied
    case .unauthenticated: .unauthenticated
    case .resourceExhausted: .resourceExhausted
    case .deadlineExceeded: .deadlineExceeded
    case .unimplemented: .unimplemented
    case .unavailable: .unavailable
    case .aborted: .aborted
    case .internal: .internalError
    }
  }

  var httpStatus: HTTPResponse.Status {
    switch self {
    case .invalidArgument, .failedPrecondition: .badRequest
    case .notFound: .notFound
    case .alreadyExists: .conflict
    case .permissionDenied: .forbidden
    case .unauthenticated: .unauthorized
    case .resourceExhausted: .tooManyRequests
    case .deadlineExceeded: .gatewayTimeout
    case .unimplemented: .notImplemented
    case .unavailable: .serviceUnavailable
    case .aborted: .conflict
    case .internal: .internalServerError
    }
  }

  var metricsLabel: String { rawValue }
}

extension FleetError {
  var rpcError: RPCError {
    var metadata = Metadata()
    if let retryAfter {
      // Clients that honour RetryInfo read this; the message says it too.
      metadata.addString("\(retryAfter.components.seconds)s", forKey: "retry-after")
    }
    return RPCError(code: code.rpcCode, message: message, metadata: metadata)
  }
}
