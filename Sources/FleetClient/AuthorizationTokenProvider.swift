/// Whom a token is asked for, as Fleet Engine's SDKs ask their apps: a vehicle (the Driver SDK,
/// a driver token with `authorization.vehicleid`) or a trip (the Consumer SDK, a consumer token
/// with `authorization.tripid`).
public enum AuthorizationContext: Sendable, Hashable, CustomStringConvertible {
  case vehicle(String)
  case trip(String)

  /// The vehicle's or the trip's ID.
  public var id: String {
    switch self {
    case .vehicle(let id), .trip(let id): id
    }
  }

  public var description: String {
    switch self {
    case .vehicle(let id): "vehicle '\(id)'"
    case .trip(let id): "trip '\(id)'"
    }
  }
}

/// Gives the client libraries the JWTs they send to fleetd. The app implements it against its
/// own backend (which signs tokens with its service-account key), or uses `HTTPTokenProvider`.
public protocol AuthorizationTokenProvider: Sendable {
  /// A token valid for the context; called before every request, so it should cache.
  func token(for context: AuthorizationContext) async throws -> String
  /// fleetd refused the token (UNAUTHENTICATED): forget it, the next `token(for:)` fetches a
  /// new one.
  func invalidateToken(for context: AuthorizationContext) async
}

extension AuthorizationTokenProvider {
  public func invalidateToken(for context: AuthorizationContext) async {}
}
