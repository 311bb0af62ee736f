import Foundation
import GRPCCore

/// Why a call of a FleetKit client library failed: fleetd's answer (a gRPC status, or Google's
/// error body over HTTP), the network, a token server, or a request the library refuses before
/// sending it. The one error type of the Driver SDK, the Consumer SDK, the location service and
/// the ride-status client. `code` is the canonical status code (`google.rpc.Code`), as fleetd
/// and Fleet Engine answer with it.
public struct FleetClientError: Error, Sendable, Hashable, CustomStringConvertible {
  public var code: RPCError.Code
  public var message: String
  /// The HTTP status fleetd or the token server answered with; nil for gRPC and for failures
  /// before an answer.
  public var httpStatus: Int?
  /// How long to wait before asking again (`Retry-After`), when the server said.
  public var retryAfter: Duration?

  public init(_ code: RPCError.Code, _ message: String, httpStatus: Int? = nil, retryAfter: Duration? = nil) {
    self.code = code
    self.message = message
    self.httpStatus = httpStatus
    self.retryAfter = retryAfter
  }

  /// Any error a client met, as a `FleetClientError`: gRPC's status kept, cancellation as
  /// CANCELLED, anything else UNKNOWN.
  public init(_ error: any Error) {
    switch error {
    case let error as FleetClientError: self = error
    case let error as RPCError: self.init(error.code, error.message)
    case is CancellationError: self.init(.cancelled, "the request was cancelled")
    default: self.init(.unknown, String(describing: error))
    }
  }

  /// An HTTP answer that is not a success, read from Google's error body
  /// (`{"error": {"code": 404, "message": "…", "status": "NOT_FOUND"}}`); a body in another shape
  /// becomes the message, and the HTTP status gives the code.
  public init(_ response: HTTPClient.Response) {
    let error = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? [String: Any]
    let message = error?["message"] as? String ?? String(decoding: response.body.prefix(500), as: UTF8.self)
    let code = (error?["status"] as? String).flatMap(Self.code(named:)) ?? Self.code(httpStatus: response.status)
    let retryAfter = response.header("Retry-After").flatMap(Int64.init).map { Duration.seconds($0) }
    self.init(
      code, message.isEmpty ? "HTTP \(response.status)" : message, httpStatus: response.status, retryAfter: retryAfter)
  }

  public var description: String {
    "\(Self.name(of: code))\(httpStatus.map { " (HTTP \($0))" } ?? ""): \(message)"
  }

  static let names: [(String, RPCError.Code)] = [
    ("CANCELLED", .cancelled), ("UNKNOWN", .unknown), ("INVALID_ARGUMENT", .invalidArgument),
    ("DEADLINE_EXCEEDED", .deadlineExceeded), ("NOT_FOUND", .notFound), ("ALREADY_EXISTS", .alreadyExists),
    ("PERMISSION_DENIED", .permissionDenied), ("RESOURCE_EXHAUSTED", .resourceExhausted),
    ("FAILED_PRECONDITION", .failedPrecondition), ("ABORTED", .aborted), ("OUT_OF_RANGE", .outOfRange),
    ("UNIMPLEMENTED", .unimplemented), ("INTERNAL", .internalError), ("UNAVAILABLE", .unavailable),
    ("DATA_LOSS", .dataLoss), ("UNAUTHENTICATED", .unauthenticated),
  ]

  /// The code of a status name in Google's error body.
  static func code(named name: String) -> RPCError.Code? { names.first { $0.0 == name }?.1 }

  /// Google's status name of a code: "NOT_FOUND".
  public static func name(of code: RPCError.Code) -> String { names.first { $0.1 == code }?.0 ?? "\(code)" }

  /// The code an HTTP status stands for when the body names none (google.rpc.Code's mapping).
  static func code(httpStatus: Int) -> RPCError.Code {
    switch httpStatus {
    case 400: .invalidArgument
    case 401: .unauthenticated
    case 403: .permissionDenied
    case 404: .notFound
    case 409: .aborted
    case 429: .resourceExhausted
    case 499: .cancelled
    case 501: .unimplemented
    case 503: .unavailable
    case 504: .deadlineExceeded
    case 500..<600: .internalError
    default: .unknown
    }
  }
}
