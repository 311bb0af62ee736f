import Crypto
import FleetCore
import Foundation
import _CryptoExtras

/// A Google-style service-account key file: what `fleetd keys add` writes and what any JWT library
/// (google-auth, jsonwebtoken, …) reads to mint Fleet Engine tokens.
public struct ServiceAccountKey: Codable, Sendable {
  public var type = "service_account"
  public var projectID: String
  public var privateKeyID: String
  /// PKCS#8 PEM, as Google's files hold it.
  public var privateKey: String
  public var clientEmail: String
  public var clientID: String
  public var tokenURI: String
  /// FleetKit's own field: the role the key was registered with (informational).
  public var fleetkitRole: String?

  enum CodingKeys: String, CodingKey {
    case type
    case projectID = "project_id"
    case privateKeyID = "private_key_id"
    case privateKey = "private_key"
    case clientEmail = "client_email"
    case clientID = "client_id"
    case tokenURI = "token_uri"
    case fleetkitRole = "fleetkit_role"
  }

  /// Creates a fresh RSA-2048 key pair for `provider`/`role` and returns the private key file and
  /// the public key to register.
  public static func generate(provider: String, role: Role, now: Date = Date()) throws -> (
    ServiceAccountKey, SigningKey
  ) {
    let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let keyID = Base64URL.encode(Data(SHA256.hash(data: privateKey.publicKey.derRepresentation).prefix(15)))
      .lowercased().filter { $0.isLetter || $0.isNumber }
    let email = "fleetkit-\(role.rawValue)-\(keyID.prefix(8))@\(provider).fleetkit.local"
    let file = ServiceAccountKey(
      projectID: provider, privateKeyID: keyID, privateKey: privateKey.pkcs8PEMRepresentation, clientEmail: email,
      clientID: keyID, tokenURI: "https://oauth2.googleapis.com/token", fleetkitRole: role.rawValue)
    let registered = SigningKey(
      keyID: keyID, provider: provider, role: role, publicKeyPEM: privateKey.publicKey.pemRepresentation,
      clientEmail: email, createTime: now)
    return (file, registered)
  }

  public static func load(path: String) throws -> ServiceAccountKey {
    try JSONDecoder().decode(ServiceAccountKey.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
  }

  public func encoded() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return try encoder.encode(self)
  }
}
