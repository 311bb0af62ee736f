import FleetAuth
import FleetConsumer
import FleetDriver
import Foundation
import Synchronization

/// Signs tokens locally from a service-account key, as a provider's token server does; for
/// tools and simulations that hold the key themselves (an app never should). Tokens live an
/// hour and are reused until five minutes before they expire. The key's role decides what
/// the tokens may do: a consumer key for a rider's trip, a server key for everything.
public final class ServiceAccountTokenProvider: AuthorizationTokenProvider, TripTokenProvider {
  let signer: TokenSigner
  let cache = Mutex<[String: (token: String, expiry: Date)]>([:])

  public init(key: ServiceAccountKey) throws { signer = try TokenSigner(key: key) }

  public func token(for context: AuthorizationContext) async throws -> String {
    try token(vehicleID: context.vehicleID)
  }

  public func token(for context: TripAuthorizationContext) async throws -> String {
    try token(cacheKey: "trip/\(context.tripID)") { try signer.token(tripID: context.tripID, lifetime: 3600, now: $0) }
  }

  /// A token for one vehicle's calls, or (nil) for the provider's backend calls.
  public func token(vehicleID: String?) throws -> String {
    try token(cacheKey: vehicleID.map { "vehicle/\($0)" } ?? "") {
      try signer.token(vehicleID: vehicleID, lifetime: 3600, now: $0)
    }
  }

  func token(cacheKey: String, sign: (Date) throws -> String) throws -> String {
    let now = Date()
    if let cached = cache.withLock({ $0[cacheKey] }), cached.expiry.timeIntervalSince(now) > 300 { return cached.token }
    let token = try sign(now)
    cache.withLock { $0[cacheKey] = (token, now.addingTimeInterval(3600)) }
    return token
  }

  public func invalidateToken(for context: AuthorizationContext) async {
    _ = cache.withLock { $0.removeValue(forKey: "vehicle/\(context.vehicleID)") }
  }

  public func invalidateToken(for context: TripAuthorizationContext) async {
    _ = cache.withLock { $0.removeValue(forKey: "trip/\(context.tripID)") }
  }
}
