import Crypto
import FleetCore
import FleetProto
import Foundation
import SwiftProtobuf

/// One webhook request as the Standard Webhooks specification shapes it: the body
/// `{"type", "timestamp", "data"}` and the headers `webhook-id`, `webhook-timestamp` and
/// `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the endpoint's
/// secret). `data` is the ride or vehicle in the REST API's JSON.
struct WebhookMessage: Sendable {
  let id: String
  let body: Data

  init(id: String, body: Data) {
    self.id = id
    self.body = body
  }

  /// What `fleetd webhooks test` sends: type `webhook.test`, the endpoint in `data`.
  static func test(_ endpoint: WebhookEndpoint, now: Date) -> WebhookMessage {
    let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(now)
    let body =
      "{\"type\":\"webhook.test\",\"timestamp\":\"\(timestamp)\",\"data\":{\"endpoint\":\"\(endpoint.id)\",\"provider\":\"\(endpoint.provider)\"}}"
    return WebhookMessage(id: FleetEvent.newID(), body: Data(body.utf8))
  }

  init(_ event: FleetEvent) {
    id = event.id
    let data: String
    switch event.payload {
    case .ride(let view):
      data = Self.json(Fleetkit_V1_Ride(view))
    case .vehicle(let vehicle, let zone):
      let json = Self.json(Maps_Fleetengine_V1_Vehicle(vehicle))
      // The zone an entered/left event is about, beside the vehicle's own fields.
      if let zone {
        let name = String(decoding: (try? JSONEncoder().encode(zone)) ?? Data("\"\"".utf8), as: UTF8.self)
        data = json == "{}" ? "{\"zone\":\(name)}" : "{\"zone\":\(name)," + json.dropFirst()
      } else {
        data = json
      }
    }
    let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(event.time)
    body = Data("{\"type\":\"\(event.type.rawValue)\",\"timestamp\":\"\(timestamp)\",\"data\":\(data)}".utf8)
  }

  static func json(_ message: some SwiftProtobuf.Message) -> String {
    (try? message.jsonString(options: RESTCall.encoding)) ?? "{}"
  }

  /// The headers of an attempt sent at `now`, signed with `secret` (`whsec_…`); nil for a
  /// secret that is not one.
  func headers(secret: String, now: Date) -> [(String, String)]? {
    guard let key = Self.key(secret) else { return nil }
    let timestamp = String(Int64(now.timeIntervalSince1970.rounded(.down)))
    return [
      ("content-type", "application/json"), ("webhook-id", id), ("webhook-timestamp", timestamp),
      ("webhook-signature", Self.signature(id: id, timestamp: timestamp, body: body, key: key)),
      ("user-agent", "fleetd-webhooks"),
    ]
  }

  static func signature(id: String, timestamp: String, body: Data, key: [UInt8]) -> String {
    var signed = Data("\(id).\(timestamp).".utf8)
    signed.append(body)
    let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))
    return "v1," + Data(mac).base64EncodedString()
  }

  /// The key a `whsec_` secret encodes.
  static func key(_ secret: String) -> [UInt8]? {
    guard secret.hasPrefix("whsec_"), let data = Data(base64Encoded: String(secret.dropFirst(6))), !data.isEmpty
    else { return nil }
    return [UInt8](data)
  }
}
