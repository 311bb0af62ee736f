import Crypto
import Foundation
import _CryptoExtras

/// Mints Fleet Engine JWTs (RS256) from a service-account key, as a provider's token server does.
public struct TokenSigner: Sendable {
  public static let fleetEngineAudience = "https://fleetengine.googleapis.com/"

  let key: _RSA.Signing.PrivateKey
  let keyID: String
  let email: String

  public init(key file: ServiceAccountKey) throws {
    key = try _RSA.Signing.PrivateKey(pemRepresentation: file.privateKey)
    keyID = file.privateKeyID
    email = file.clientEmail
  }

  /// `tripID` / `vehicleID` become the private claims `authorization.tripid` / `.vehicleid`; the
  /// Deliveries API's `deliveryVehicleID`, `taskID`, `taskIDs` and `trackingID` become
  /// `deliveryvehicleid`, `taskid`, `taskids` and `trackingid`.
  public func token(
    tripID: String? = nil, vehicleID: String? = nil, deliveryVehicleID: String? = nil, taskID: String? = nil,
    taskIDs: [String]? = nil, trackingID: String? = nil, lifetime: TimeInterval = 3600,
    audience: String = TokenSigner.fleetEngineAudience, now: Date = Date()
  ) throws -> String {
    var authorization: [String: Any] = [:]
    authorization["tripid"] = tripID
    authorization["vehicleid"] = vehicleID
    authorization["deliveryvehicleid"] = deliveryVehicleID
    authorization["taskid"] = taskID
    authorization["taskids"] = taskIDs
    authorization["trackingid"] = trackingID
    let iat = Int(now.timeIntervalSince1970)
    var claims: [String: Any] = [
      "iss": email, "sub": email, "aud": audience, "iat": iat, "exp": iat + Int(lifetime),
    ]
    if !authorization.isEmpty { claims["authorization"] = authorization }
    return try sign(header: ["alg": "RS256", "typ": "JWT", "kid": keyID], claims: claims)
  }

  /// Signs arbitrary header and claims (tests use it to forge bad tokens).
  public func sign(header: [String: Any], claims: [String: Any]) throws -> String {
    let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: .sortedKeys))
    let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
    let input = Data("\(head).\(body)".utf8)
    let signature = try key.signature(for: input, padding: .insecurePKCS1v1_5)
    return "\(head).\(body).\(Base64URL.encode(signature.rawRepresentation))"
  }
}
