import FleetCore
import FleetGeometry
import Foundation

/// Registers, lists and revokes the keys that sign tokens. A running fleetd sees changes within
/// `AuthConfiguration.keyCacheTTL` because it reads keys from the same store.
public struct KeyRing: Sendable {
  let store: any FleetStore

  public init(store: any FleetStore) { self.store = store }

  /// Creates a key pair, registers its public half and returns the private key file.
  public func add(provider: String, role: Role) async throws -> ServiceAccountKey {
    try ResourceID.validateProvider(provider, field: "provider")
    // Generating an RSA key takes up to seconds of CPU: not on a thread every request shares.
    let (file, key) = try await onDedicatedThread(named: "key-generation") {
      try ServiceAccountKey.generate(provider: provider, role: role)
    }
    try await store.saveSigningKey(key)
    return file
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
