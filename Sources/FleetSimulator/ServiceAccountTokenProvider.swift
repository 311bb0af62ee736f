import FleetAuth
import FleetDriver
import Foundation
import Synchronization

/// Signs tokens locally from a service-account key, as a provider's token server does; for
/// tools and simulations that hold the key themselves (an app never should). Tokens live an
/// hour and are reused until five minutes before they expire.
public final class ServiceAccountTokenProvider: AuthorizationTokenProvider {
  let signer: TokenSigner
  let cache = Mutex<[String: (token: String, expiry: Date)]>([:])

  public init(key: ServiceAccountKey) throws { signer = try TokenSigner(key: key) }

  public func token(for context: AuthorizationContext) async throws -> String {
    try token(vehicleID: context.vehicleID)
  }

  /// A token for one vehicle's calls, or (nil) for the provider's backend calls.
  public func token(vehicleID: String?) throws -> String {
    let now = Date()
    let key = vehicleID ?? ""
    if let cached = cache.withLock({ $0[key] }), cached.expiry.timeIntervalSince(now) > 300 { return cached.token }
    let token = try signer.token(vehicleID: vehicleID, lifetime: 3600, now: now)
    cache.withLock { $0[key] = (token, now.addingTimeInterval(3600)) }
    return token
  }

  public func invalidateToken(for context: AuthorizationContext) async {
    _ = cache.withLock { $0.removeValue(forKey: context.vehicleID) }
  }
}
