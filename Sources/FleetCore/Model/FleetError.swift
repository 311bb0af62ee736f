/// The one error type of the domain. Each code maps to one gRPC status, one HTTP status and one
/// metrics label (see `FleetServer/ErrorMapping.swift`); the message names the field and the rule.
public struct FleetError: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Code: String, Sendable, CaseIterable {
    case invalidArgument = "INVALID_ARGUMENT"
    case notFound = "NOT_FOUND"
    case alreadyExists = "ALREADY_EXISTS"
    case failedPrecondition = "FAILED_PRECONDITION"
    case permissionDenied = "PERMISSION_DENIED"
    case unauthenticated = "UNAUTHENTICATED"
    case resourceExhausted = "RESOURCE_EXHAUSTED"
    case deadlineExceeded = "DEADLINE_EXCEEDED"
    case unimplemented = "UNIMPLEMENTED"
    case unavailable = "UNAVAILABLE"
    case aborted = "ABORTED"
    case `internal` = "INTERNAL"
  }

  public var code: Code
  public var message: String
  /// For RESOURCE_EXHAUSTED: how long the caller should wait before retrying.
  public var retryAfter: Duration?

  public init(_ code: Code, _ message: String, retryAfter: Duration? = nil) {
    self.code = code
    self.message = message
    self.retryAfter = retryAfter
  }

  public var description: String { "\(code.rawValue): \(message)" }

  public static func invalid(_ message: String) -> FleetError { .init(.invalidArgument, message) }
  public static func notFound(_ message: String) -> FleetError { .init(.notFound, message) }
  public static func precondition(_ message: String) -> FleetError { .init(.failedPrecondition, message) }
  public static func denied(_ message: String) -> FleetError { .init(.permissionDenied, message) }
  public static func unauthenticated(_ message: String) -> FleetError { .init(.unauthenticated, message) }
}
