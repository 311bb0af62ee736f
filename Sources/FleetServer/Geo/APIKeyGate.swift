import FleetAuth
import FleetCore
import Foundation
import Synchronization

/// Checks the API key of a geo request and takes one request from its quotas. Looked-up keys
/// (and unknown ones) are trusted for `cacheTTL`, which bounds how long a revoked key keeps
/// working.
final class APIKeyGate: Sendable {
  let ring: APIKeyRing
  let cacheTTL: TimeInterval
  let now: @Sendable () -> Date
  let cache = Mutex<[String: (record: APIKeyRecord?, fetched: Date)]>([:])
  let quotas = Mutex(APIKeyQuotas())
  /// How many instances share the keys' quotas (each allows its part).
  let quotaShare: @Sendable () -> Int

  init(
    ring: APIKeyRing, cacheTTL: TimeInterval = 5, quotaShare: @escaping @Sendable () -> Int = { 1 },
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.ring = ring
    self.quotaShare = quotaShare
    self.cacheTTL = cacheTTL
    self.now = now
  }

  /// The key's record after taking one request; UNAUTHENTICATED for a missing, unknown or
  /// revoked key, RESOURCE_EXHAUSTED when a quota is used up.
  func admit(key: String?) async throws(FleetError) -> APIKeyRecord {
    guard let key, !key.isEmpty else {
      throw .unauthenticated(
        "an API key is required: pass it as the 'key' query parameter or the X-Goog-Api-Key header")
    }
    let time = now()
    var record: APIKeyRecord?
    if let cached = cache.withLock({ $0[key] }), time.timeIntervalSince(cached.fetched) < cacheTTL {
      record = cached.record
    } else {
      do {
        record = try await ring.find(key: key)
      } catch {
        throw FleetError(.unavailable, "API keys cannot be read: \(error)")
      }
      cache.withLock { cache in
        // Bounded: a flood of made-up keys must not grow the cache without end.
        if cache.count > 10_000 { cache.removeAll() }
        cache[key] = (record, time)
      }
    }
    guard let record else { throw .unauthenticated("the API key is not valid (unknown or revoked)") }
    let share = quotaShare()
    try quotas.withLock { quotas throws(FleetError) in try quotas.acquire(record, now: time, share: share) }
    return record
  }
}
