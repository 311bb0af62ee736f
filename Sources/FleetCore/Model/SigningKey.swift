import Foundation

/// A registered public key that verifies tokens (its private half stays with the client).
public struct SigningKey: Sendable, Hashable, Codable {
  public var keyID: String
  public var provider: String
  public var role: Role
  /// The RSA public key, PEM.
  public var publicKeyPEM: String
  /// The service-account e-mail tokens are issued by (`iss`/`sub`).
  public var clientEmail: String
  public var createTime: Date
  public var revokeTime: Date?

  public init(
    keyID: String, provider: String, role: Role, publicKeyPEM: String, clientEmail: String, createTime: Date,
    revokeTime: Date? = nil
  ) {
    self.keyID = keyID
    self.provider = provider
    self.role = role
    self.publicKeyPEM = publicKeyPEM
    self.clientEmail = clientEmail
    self.createTime = createTime
    self.revokeTime = revokeTime
  }
}
