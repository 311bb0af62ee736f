import Foundation

/// What a token is asked for: Fleet Engine's Driver SDK asks its app for a token per vehicle.
public struct AuthorizationContext: Sendable, Hashable {
  public var vehicleID: String

  public init(vehicleID: String) { self.vehicleID = vehicleID }
}

/// Gives the SDK the JWTs it sends to fleetd. The app implements it against its own backend
/// (which signs tokens with its service-account key), or uses `HTTPTokenProvider`.
public protocol AuthorizationTokenProvider: Sendable {
  /// A token valid for the context; called before every request, so it should cache.
  func token(for context: AuthorizationContext) async throws -> String
  /// The server refused the token (UNAUTHENTICATED): forget it, the next `token(for:)` fetches
  /// a new one.
  func invalidateToken(for context: AuthorizationContext) async
}

extension AuthorizationTokenProvider {
  public func invalidateToken(for context: AuthorizationContext) async {}
}

/// Why no token could be had.
public struct TokenProviderError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable, Hashable {
    /// The context has no vehicle ID.
    case missingContext
    /// The token server could not be reached.
    case unreachable
    /// The token server answered with an HTTP error.
    case httpStatus
    /// The answer is not JSON with the token and its expiry under the configured keys.
    case malformedResponse
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code.rawValue): \(message)" }
}
