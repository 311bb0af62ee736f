import FleetCore
import FleetGeometry
import Foundation

/// Registers, lists and revokes the keys that sign tokens. A running fleetd sees changes within
/// `AuthConfiguration.keyCacheTTL` because it reads keys from the same store.
public struct KeyRing: Sendable {
  let store: any FleetStore

  public init(store: any FleetStore) { self.store = store }

  /// fleetd's HTTP address as `fleetd serve` listens by default.
  public static let defaultServer = URL(string: "http://127.0.0.1:8080")!

  /// Creates a key pair, registers its public half and returns the private key file, whose
  /// URLs are on `server` (fleetd's HTTP address as the key's users reach it).
  public func add(provider: String, role: Role, server: URL = KeyRing.defaultServer) async throws
    -> ServiceAccountKey
  {
    try ResourceID.validateProvider(provider, field: "provider")
    // Generating an RSA key takes up to seconds of CPU: not on a thread every request shares.
    let (file, key) = try await onDedicatedThread(named: "key-generation") {
      try ServiceAccountKey.generate(provider: provider, role: role, server: server)
    }
    try await store.saveSigningKey(key)
    return file
  }

  /// Registers the public half of a key made elsewhere (Google's own key file, another
  /// fleetd's) for `provider` (by default the file's project) and `role`.
  public func importKey(_ file: ServiceAccountKey, provider: String? = nil, role: Role) async throws -> SigningKey {
    let key = try file.signingKey(provider: provider, role: role)
    try ResourceID.validateProvider(key.provider, field: provider == nil ? "project_id" : "provider")
    if let existing = try await store.signingKey(id: key.keyID) {
      guard existing.publicKeyPEM == key.publicKeyPEM else {
        throw FleetError(.alreadyExists, "another key is registered as '\(key.keyID)'")
      }
      guard existing.revokeTime == nil else {
        throw FleetError.precondition("key '\(key.keyID)' was revoked; a revoked key is never trusted again")
      }
    }
    try await store.saveSigningKey(key)
    return key
  }

  public func list() async throws -> [SigningKey] { try await store.signingKeys() }

  public func revoke(keyID: String, now: Date = Date()) async throws {
    guard var key = try await store.signingKey(id: keyID) else {
      throw FleetError.notFound("key '\(keyID)' is not registered")
    }
    if key.revokeTime == nil {
      key.revokeTime = now
      try await store.saveSigningKey(key)
    }
  }
}
