import FleetAuth
import FleetClient
import Foundation
import Synchronization

/// Signs tokens locally from a service-account key, as a provider's token server does; for
/// tools and simulations that hold the key themselves (an app never should). Tokens live an
/// hour and are reused until five minutes before they expire. The key's role decides what
/// the tokens may do: a consumer key for a rider's trip, a server key for everything.
public final class ServiceAccountTokenProvider: AuthorizationTokenProvider {
  let signer: TokenSigner
  let cache = Mutex<[AuthorizationContext?: (token: String, expiry: Date)]>([:])

  public init(key: ServiceAccountKey) throws { signer = try TokenSigner(key: key) }

  public func token(for context: AuthorizationContext) async throws -> String {
    switch context {
    case .vehicle(let id): try token(vehicleID: id)
    case .trip(let id): try token(cacheKey: context) { try signer.token(tripID: id, lifetime: 3600, now: $0) }
    case .deliveryVehicle(let id):
      try token(cacheKey: context) { try signer.token(deliveryVehicleID: id, lifetime: 3600, now: $0) }
    case .task(let id): try token(cacheKey: context) { try signer.token(taskID: id, lifetime: 3600, now: $0) }
    }
  }

  /// A token for one vehicle's calls, or (nil) for the provider's backend calls.
  public func token(vehicleID: String?) throws -> String {
    try token(cacheKey: vehicleID.map(AuthorizationContext.vehicle)) {
      try signer.token(vehicleID: vehicleID, lifetime: 3600, now: $0)
    }
  }

  func token(cacheKey: AuthorizationContext?, sign: (Date) throws -> String) throws -> String {
    let now = Date()
    if let cached = cache.withLock({ $0[cacheKey] }), cached.expiry.timeIntervalSince(now) > 300 { return cached.token }
    let token = try sign(now)
    cache.withLock { $0[cacheKey] = (token, now.addingTimeInterval(3600)) }
    return token
  }

  public func invalidateToken(for context: AuthorizationContext) async {
    _ = cache.withLock { $0.removeValue(forKey: context) }
  }
}
