import FleetClient
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

extension HTTPTokenProvider: AuthorizationTokenProvider {
  public func token(for context: AuthorizationContext) async throws -> String {
    try await token(for: .vehicle(context.vehicleID))
  }

  public func invalidateToken(for context: AuthorizationContext) async {
    invalidateToken(for: .vehicle(context.vehicleID))
  }
}
