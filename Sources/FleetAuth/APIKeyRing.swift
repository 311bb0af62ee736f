import Crypto
import FleetCore
import Foundation

/// Makes, finds, lists and revokes API keys for fleetd's geo endpoints. A key reads
/// `fk_<id>_<secret>`: the ID names it in lists and logs, the 256-bit secret proves it; only the
/// SHA-256 of the whole key is stored.
public struct APIKeyRing: Sendable {
  let store: any APIKeyStore

  public init(store: any APIKeyStore) { self.store = store }

  /// Makes a key for `app`; the returned string is the only copy of the secret.
  public func add(
    app: String, perMinute: Int = APIKeyRecord.defaultPerMinute, perDay: Int = APIKeyRecord.defaultPerDay,
    now: Date = Date()
  ) async throws -> (key: String, record: APIKeyRecord) {
    let name = app.trimmingCharacters(in: .whitespaces)
    guard !name.isEmpty, name.count <= 100 else { throw FleetError.invalid("app must be 1…100 characters") }
    guard perMinute > 0 else { throw FleetError.invalid("per_minute must be > 0, got \(perMinute)") }
    guard perDay > 0 else { throw FleetError.invalid("per_day must be > 0, got \(perDay)") }
    let id = SymmetricKey(size: .bits128).withUnsafeBytes { $0.prefix(6).map { String(format: "%02x", $0) }.joined() }
    let secret = Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    let key = "fk_\(id)_\(secret)"
    let record = APIKeyRecord(
      id: id, app: name, secretHash: Self.hash(key), perMinute: perMinute, perDay: perDay, createTime: now)
    try await store.saveAPIKey(record)
    return (key, record)
  }

  /// The record of an active key; nil when the key is unknown or revoked.
  public func find(key: String) async throws -> APIKeyRecord? {
    guard key.hasPrefix("fk_"), key.count < 200 else { return nil }
    guard let record = try await store.apiKey(secretHash: Self.hash(key)), record.revokeTime == nil else {
      return nil
    }
    return record
  }

  public func list() async throws -> [APIKeyRecord] { try await store.apiKeys() }

  public func revoke(id: String, now: Date = Date()) async throws {
    guard var record = try await store.apiKey(id: id) else {
      throw FleetError.notFound("API key '\(id)' is not registered")
    }
    if record.revokeTime == nil {
      record.revokeTime = now
      try await store.saveAPIKey(record)
    }
  }

  static func hash(_ key: String) -> String {
    SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
  }
}
