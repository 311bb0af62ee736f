import Crypto
import FleetCore
import Foundation
import _CryptoExtras

/// A Google service-account key file: what `fleetd keys add` writes and what any JWT library
/// (google-auth, jsonwebtoken, …) reads to mint Fleet Engine tokens. It carries all ten fields
/// of Google's own files, whose loaders (Namma Yatri's among them) require every one; fleetd
/// reads Google's own files too (`fleetd keys import`).
public struct ServiceAccountKey: Codable, Sendable {
  public var type = "service_account"
  public var projectID: String
  public var privateKeyID: String
  /// PKCS#8 PEM, as Google's files hold it.
  public var privateKey: String
  public var clientEmail: String
  public var clientID: String
  /// Where Google's OAuth flows start. fleetd has none: tokens are signed with the key itself,
  /// so it names fleetd's token endpoint, which says so.
  public var authURI: String?
  public var tokenURI: String
  /// Where the keys that verify tokens are published: fleetd's `/fleetkit/v1/certs`.
  public var authProviderX509CertURL: String?
  /// Where this account's public keys are published: `/fleetkit/v1/certs/{client_email}`.
  public var clientX509CertURL: String?
  /// FleetKit's own field: the role the key was registered with (informational).
  public var fleetkitRole: String?

  enum CodingKeys: String, CodingKey {
    case type
    case projectID = "project_id"
    case privateKeyID = "private_key_id"
    case privateKey = "private_key"
    case clientEmail = "client_email"
    case clientID = "client_id"
    case authURI = "auth_uri"
    case tokenURI = "token_uri"
    case authProviderX509CertURL = "auth_provider_x509_cert_url"
    case clientX509CertURL = "client_x509_cert_url"
    case fleetkitRole = "fleetkit_role"
  }

  /// The paths under fleetd's HTTP address that a key file names.
  public static let tokenPath = "/fleetkit/v1/token"
  public static let certsPath = "/fleetkit/v1/certs"

  /// Creates a fresh RSA-2048 key pair for `provider`/`role` and returns the private key file and
  /// the public key to register. `server` is fleetd's HTTP address as the key's users reach it.
  public static func generate(
    provider: String, role: Role, server: URL = KeyRing.defaultServer, now: Date = Date()
  ) throws -> (
    ServiceAccountKey, SigningKey
  ) {
    let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let keyID = Base64URL.encode(Data(SHA256.hash(data: privateKey.publicKey.derRepresentation).prefix(15)))
      .lowercased().filter { $0.isLetter || $0.isNumber }
    let email = "fleetkit-\(role.rawValue)-\(keyID.prefix(8))@\(provider).fleetkit.local"
    let base = server.absoluteString.hasSuffix("/") ? String(server.absoluteString.dropLast()) : server.absoluteString
    let escapedEmail = email.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["@"])) ?? email
    let file = ServiceAccountKey(
      projectID: provider, privateKeyID: keyID, privateKey: privateKey.pkcs8PEMRepresentation, clientEmail: email,
      clientID: keyID, authURI: base + tokenPath, tokenURI: base + tokenPath,
      authProviderX509CertURL: base + certsPath, clientX509CertURL: "\(base)\(certsPath)/\(escapedEmail)",
      fleetkitRole: role.rawValue)
    let registered = SigningKey(
      keyID: keyID, provider: provider, role: role, publicKeyPEM: privateKey.publicKey.pemRepresentation,
      clientEmail: email, createTime: now)
    return (file, registered)
  }

  /// The public half of this file's key, to register with `role` for `provider` (by default
  /// the file's project): how a key made elsewhere (Google's own, another fleetd's) is trusted.
  public func signingKey(provider: String? = nil, role: Role, now: Date = Date()) throws -> SigningKey {
    guard type == "service_account" else {
      throw FleetError.invalid("type must be 'service_account', got '\(type)'")
    }
    guard !privateKeyID.isEmpty else { throw FleetError.invalid("private_key_id is required: it is the tokens' kid") }
    guard !clientEmail.isEmpty else { throw FleetError.invalid("client_email is required: it is the tokens' iss") }
    let key: _RSA.Signing.PrivateKey
    do {
      key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKey)
    } catch {
      throw FleetError.invalid("private_key is not an RSA private key in PEM: \(error)")
    }
    return SigningKey(
      keyID: privateKeyID, provider: provider ?? projectID, role: role, publicKeyPEM: key.publicKey.pemRepresentation,
      clientEmail: clientEmail, createTime: now)
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
