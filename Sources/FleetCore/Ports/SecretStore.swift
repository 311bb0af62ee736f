/// Secrets fleetd makes once and keeps in its store, such as the key that seals quote IDs:
/// instances sharing a store share them, and a restart keeps them.
public protocol SecretStore: Sendable {
  /// The secret named `name`; the first call anywhere stores `generate()`'s bytes, and every
  /// call after that, on any instance, returns those.
  func secret(named name: String, generate: @Sendable () -> [UInt8]) async throws -> [UInt8]
}
