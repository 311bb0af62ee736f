import Crypto
import FleetCore
import Foundation
import Synchronization
import _CryptoExtras

/// How tokens are checked. Defaults follow Fleet Engine.
public struct AuthConfiguration: Sendable, Hashable {
  /// Accepted `aud` values; Fleet Engine's by default so existing token code works unchanged.
  public var audiences: Set<String> = [TokenSigner.fleetEngineAudience]
  /// How far `iat` may be in the future (clock skew).
  public var allowedClockSkew: TimeInterval = 600
  /// How far `exp` may be after `iat`.
  public var maximumLifetime: TimeInterval = 3600
  /// How long a looked-up key (or its absence, or its revocation) is trusted before asking the
  /// store again; bounds how long a revoked key keeps working and a new key stays unknown.
  public var keyCacheTTL: TimeInterval = 5

  public init() {}
}

/// Verifies Fleet Engine JWTs: RS256 only (RFC 8725: the algorithm is allow-listed, never taken
/// from the token on trust), `kid` naming a registered, unrevoked key, Fleet Engine's claims.
/// Verified tokens are cached until they expire so a busy client pays for RSA once per token.
public final class TokenVerifier: Sendable {
  static let allowedAlgorithms: Set<String> = ["RS256"]

  struct CachedKey {
    var key: SigningKey?
    var publicKey: _RSA.Signing.PublicKey?
    var fetched: Date
  }

  struct CachedToken {
    var caller: Caller
    var keyID: String
    var expiry: Date
  }

  struct Caches {
    var keys: [String: CachedKey] = [:]
    var tokens: [String: CachedToken] = [:]
  }

  let configuration: AuthConfiguration
  let lookup: @Sendable (String) async throws -> SigningKey?
  let clock: @Sendable () -> Date
  let caches = Mutex(Caches())
  static let maximumCachedTokens = 50_000

  public init(
    configuration: AuthConfiguration, clock: @escaping @Sendable () -> Date = { Date() },
    lookup: @escaping @Sendable (String) async throws -> SigningKey?
  ) {
    self.configuration = configuration
    self.lookup = lookup
    self.clock = clock
  }

  /// Verifies the value of an `authorization` header (`Bearer <jwt>`).
  public func verify(authorizationHeader: String?) async throws(FleetError) -> Caller {
    guard let header = authorizationHeader, !header.isEmpty else {
      throw .unauthenticated("missing 'authorization: Bearer <token>' header")
    }
    guard let token = Self.bearerToken(header) else {
      throw .unauthenticated("the authorization header must be 'Bearer <token>'")
    }
    return try await verify(token: token)
  }

  /// The token after a case-insensitive "Bearer" and spaces; plain UTF-8 work, no Foundation.
  static func bearerToken(_ header: String) -> String? {
    let bytes = Array(header.utf8)
    let scheme = Array("bearer".utf8)
    guard bytes.count > scheme.count + 1,
      zip(bytes, scheme).allSatisfy({ ($0 | 0x20) == $1 }), bytes[scheme.count] == 0x20
    else { return nil }
    var start = scheme.count
    while start < bytes.count, bytes[start] == 0x20 { start += 1 }
    var end = bytes.count
    while end > start, bytes[end - 1] == 0x20 { end -= 1 }
    guard start < end else { return nil }
    return String(decoding: bytes[start..<end], as: UTF8.self)
  }

  public func verify(token: String) async throws(FleetError) -> Caller {
    let now = clock()
    if let caller = cachedCaller(token, now: now) { return caller }
    return try await verifyUncached(token, now: now)
  }

  /// The hot path: a token seen before, unexpired, whose key is known, fresh and not revoked.
  func cachedCaller(_ token: String, now: Date) -> Caller? {
    caches.withLock { c -> Caller? in
      guard let cached = c.tokens[token], cached.expiry > now, let key = c.keys[cached.keyID],
        now.timeIntervalSince(key.fetched) <= configuration.keyCacheTTL,
        let registered = key.key, registered.revokeTime.map({ $0 > now }) ?? true
      else { return nil }
      return cached.caller
    }
  }

  func verifyUncached(_ token: String, now: Date) async throws(FleetError) -> Caller {
    if let cached = caches.withLock({ $0.tokens[token] }), cached.expiry > now {
      // Seen before but its key needs a fresh look (it may have been revoked since).
      _ = try await publicKey(cached.keyID, now: now)
      return cached.caller
    }
    let parts = token.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
      let signature = Base64URL.decode(parts[2]),
      let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
      let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
    else { throw .unauthenticated("the token is not a well-formed JWT") }

    guard let alg = header["alg"] as? String, Self.allowedAlgorithms.contains(alg) else {
      throw .unauthenticated("token algorithm '\(header["alg"] as? String ?? "")' is not allowed; use RS256")
    }
    guard let keyID = header["kid"] as? String, !keyID.isEmpty else {
      throw .unauthenticated("the token header has no 'kid' naming its signing key")
    }
    let (key, publicKey) = try await publicKey(keyID, now: now)
    let signed = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    guard publicKey.isValidSignature(.init(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
    else { throw .unauthenticated("the token signature does not verify against key '\(keyID)'") }

    let caller = try checkClaims(claims, key: key, now: now)
    let expiry = Date(timeIntervalSince1970: (claims["exp"] as? NSNumber)?.doubleValue ?? 0)
    caches.withLock { c in
      if c.tokens.count >= Self.maximumCachedTokens { c.tokens.removeAll(keepingCapacity: true) }
      c.tokens[token] = CachedToken(caller: caller, keyID: keyID, expiry: expiry)
    }
    return caller
  }

  func checkClaims(_ claims: [String: Any], key: SigningKey, now: Date) throws(FleetError) -> Caller {
    guard let iss = claims["iss"] as? String, !iss.isEmpty else {
      throw .unauthenticated("the token has no 'iss' claim")
    }
    guard iss == key.clientEmail else {
      throw .unauthenticated("the token's 'iss' does not match the service account of key '\(key.keyID)'")
    }
    guard let sub = claims["sub"] as? String, !sub.isEmpty else {
      throw .unauthenticated("the token has no 'sub' claim")
    }
    let audiences: [String] = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String] ?? [])
    guard audiences.contains(where: configuration.audiences.contains) else {
      throw .unauthenticated(
        "the token's 'aud' must be one of \(configuration.audiences.sorted().joined(separator: ", "))")
    }
    guard let iat = (claims["iat"] as? NSNumber)?.doubleValue else {
      throw .unauthenticated("the token has no 'iat' claim")
    }
    guard let exp = (claims["exp"] as? NSNumber)?.doubleValue else {
      throw .unauthenticated("the token has no 'exp' claim")
    }
    let nowSeconds = now.timeIntervalSince1970
    guard iat <= nowSeconds + configuration.allowedClockSkew else {
      throw .unauthenticated("the token's 'iat' is more than \(Int(configuration.allowedClockSkew)) s in the future")
    }
    guard exp > nowSeconds else { throw .unauthenticated("the token has expired") }
    guard exp - iat <= configuration.maximumLifetime,
      exp <= nowSeconds + configuration.maximumLifetime + configuration.allowedClockSkew
    else {
      throw .unauthenticated("the token's 'exp' is more than \(Int(configuration.maximumLifetime)) s after 'iat'")
    }
    let authorization = claims["authorization"] as? [String: Any] ?? [:]
    return Caller(
      provider: key.provider, role: key.role, tripID: authorization["tripid"] as? String,
      vehicleID: authorization["vehicleid"] as? String,
      deliveryVehicleID: authorization["deliveryvehicleid"] as? String, taskID: authorization["taskid"] as? String,
      taskIDs: authorization["taskids"] as? [String], trackingID: authorization["trackingid"] as? String, subject: sub)
  }

  func publicKey(_ keyID: String, now: Date) async throws(FleetError) -> (SigningKey, _RSA.Signing.PublicKey) {
    var cached = caches.withLock { $0.keys[keyID] }
    if cached == nil || now.timeIntervalSince(cached!.fetched) > configuration.keyCacheTTL {
      let key: SigningKey?
      do { key = try await lookup(keyID) } catch { throw FleetError(.unavailable, "key store unavailable: \(error)") }
      let publicKey = key.flatMap { try? _RSA.Signing.PublicKey(pemRepresentation: $0.publicKeyPEM) }
      cached = CachedKey(key: key, publicKey: publicKey, fetched: now)
      caches.withLock { $0.keys[keyID] = cached }
    }
    guard let key = cached?.key, let publicKey = cached?.publicKey else {
      throw .unauthenticated("the token's key '\(keyID)' is not registered")
    }
    if key.revokeTime.map({ $0 <= now }) ?? false {
      throw .unauthenticated("the token's key '\(keyID)' has been revoked")
    }
    return (key, publicKey)
  }
}
