import FleetAuth
import FleetCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What the URLs in fleetd's service-account key files lead to:
///
/// - `GET /fleetkit/v1/certs` → every active key fleetd verifies tokens with, `{kid: public key
///   PEM}` (the shape of Google's certificate lists, which google-auth and JWT libraries read);
/// - `GET /fleetkit/v1/certs/{client_email}` → the active keys of one service account;
/// - `POST /fleetkit/v1/token` → OAuth 2.0's `unsupported_grant_type` (RFC 6749, 5.2): as with
///   Fleet Engine, clients sign their own tokens with the key; there is no exchange.
///
/// Public keys are public, as Google's are: no token is needed.
struct KeysFront: Sendable {
  let store: any FleetStore

  func addRoutes(to routes: Routes) {
    routes.add(ServiceAccountKey.certsPath) { _, _ in try await certs { _ in true } }
    routes.add(ServiceAccountKey.certsPath + "/:email") { _, context in
      let email = context.parameters.get("email").map { $0.removingPercentEncoding ?? $0 } ?? ""
      return try await certs(notFound: "no active key of service account '\(email)'") { $0.clientEmail == email }
    }
    routes.add(ServiceAccountKey.tokenPath, method: .post) { _, _ in
      let body: [String: String] = [
        "error": "unsupported_grant_type",
        "error_description":
          "fleetd exchanges no tokens: sign a JWT with the key itself (RS256, kid private_key_id, iss and sub client_email, aud \(TokenSigner.fleetEngineAudience)) and send it as the bearer token, as with Fleet Engine",
      ]
      return Self.json(body, status: .badRequest)
    }
  }

  func certs(notFound: String? = nil, _ include: (SigningKey) -> Bool) async throws -> Response {
    let keys = try await store.signingKeys().filter { $0.revokeTime == nil && include($0) }
    if keys.isEmpty, let notFound {
      let error = FleetError.notFound(notFound)
      return Response(
        status: .notFound, headers: [.contentType: "application/json; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(data: RESTFront.errorBody(error, status: .notFound))))
    }
    var certs: [String: String] = [:]
    for key in keys { certs[key.keyID] = key.publicKeyPEM }
    return Self.json(certs, status: .ok)
  }

  static func json(_ object: [String: String], status: HTTPResponse.Status) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    var headers = HTTPFields()
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.cacheControl] = "no-cache"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
  }
}
