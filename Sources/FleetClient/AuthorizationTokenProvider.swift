/// Whom a token is asked for, as Fleet Engine's SDKs ask their apps: a vehicle (the Driver SDK,
/// a driver token with `authorization.vehicleid`), a trip (the Consumer SDK, a consumer token
/// with `authorization.tripid`), a delivery vehicle (the Driver SDK's delivery mode,
/// `authorization.deliveryvehicleid`) or a task (its outcome, `authorization.taskid`).
public enum AuthorizationContext: Sendable, Hashable, CustomStringConvertible {
  case vehicle(String)
  case trip(String)
  case deliveryVehicle(String)
  case task(String)

  /// The vehicle's, the trip's or the task's ID.
  public var id: String {
    switch self {
    case .vehicle(let id), .trip(let id), .deliveryVehicle(let id), .task(let id): id
    }
  }

  public var description: String {
    switch self {
    case .vehicle(let id): "vehicle '\(id)'"
    case .trip(let id): "trip '\(id)'"
    case .deliveryVehicle(let id): "delivery vehicle '\(id)'"
    case .task(let id): "task '\(id)'"
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
