/// Where API keys are kept.
public protocol APIKeyStore: Sendable {
  func apiKey(secretHash: String) async throws -> APIKeyRecord?
  func apiKey(id: String) async throws -> APIKeyRecord?
  func apiKeys() async throws -> [APIKeyRecord]
  func saveAPIKey(_ key: APIKeyRecord) async throws
}
