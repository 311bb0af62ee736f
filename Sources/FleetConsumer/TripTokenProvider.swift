import FleetClient

/// What a token is asked for: Fleet Engine's Consumer SDK asks its app for a token per trip
/// (`GMTCAuthorizationContext`), signed for the consumer role with `authorization.tripid`.
public struct TripAuthorizationContext: Sendable, Hashable {
  public var tripID: String

  public init(tripID: String) { self.tripID = tripID }
}

/// Gives the Consumer SDK the JWTs it sends to fleetd. The app implements it against its own
/// backend, which signs consumer tokens for the rider's trip.
public protocol TripTokenProvider: Sendable {
  /// A token valid for the trip; called before every request, so it should cache.
  func token(for context: TripAuthorizationContext) async throws -> String
  /// fleetd refused the token (UNAUTHENTICATED): forget it, the next `token(for:)` fetches a
  /// new one.
  func invalidateToken(for context: TripAuthorizationContext) async
}

extension TripTokenProvider {
  public func invalidateToken(for context: TripAuthorizationContext) async {}
}

extension HTTPTokenProvider: TripTokenProvider {
  public func token(for context: TripAuthorizationContext) async throws -> String {
    try await token(for: .trip(context.tripID))
  }

  public func invalidateToken(for context: TripAuthorizationContext) async {
    invalidateToken(for: .trip(context.tripID))
  }
}
