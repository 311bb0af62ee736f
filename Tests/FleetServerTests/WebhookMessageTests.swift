import FleetCore
import Foundation
import NIOCore
import Testing

@testable import FleetServer

@Suite("Webhook messages and targets")
struct WebhookMessageTests {
  /// The Standard Webhooks specification's own example: its secret, ID, timestamp and payload
  /// sign to its signature.
  @Test func theSignatureIsTheSpecificationsExample() throws {
    let key = try #require(WebhookMessage.key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
    let signature = WebhookMessage.signature(
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", body: Data(#"{"test": 2432232314}"#.utf8), key: key)
    #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    #expect(WebhookMessage.key("sk_nope") == nil)
  }

  @Test func theBodyIsTypeTimestampAndTheRESTJSONOfTheRide() throws {
    var ride = Ride(provider: "acme", id: "r1", request: RideRequest())
    ride.product = "standard"
    let event = FleetEvent(
      id: "msg_1", type: .rideAssigned, provider: "acme", subject: EntityKey(.ride, provider: "acme", id: "r1"),
      revision: 7, position: 0, time: Date(timeIntervalSince1970: 1_800_000_000.25),
      payload: .ride(RideView(ride: ride, state: .assigned, vehicleID: "car-1")))
    let message = WebhookMessage(event)
    let json = try #require(try JSONSerialization.jsonObject(with: message.body) as? [String: Any])
    #expect(json["type"] as? String == "ride.assigned")
    #expect(json["timestamp"] as? String == "2027-01-15T08:00:00.250Z")
    let data = try #require(json["data"] as? [String: Any])
    #expect(data["name"] as? String == "providers/acme/rides/r1")
    #expect(data["state"] as? String == "ASSIGNED" && data["vehicleId"] as? String == "car-1")
    #expect(data["product"] as? String == "standard")
    let headers = try #require(message.headers(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now: Date()))
    #expect(headers.first { $0.0 == "webhook-id" }?.1 == "msg_1")
  }

  @Test func aZoneEventNamesItsZoneBesideTheVehicle() throws {
    var vehicle = Vehicle(provider: "acme", id: "car-1")
    vehicle.state = .online
    let event = FleetEvent(
      id: "msg_2", type: .vehicleEnteredZone, provider: "acme",
      subject: EntityKey(.vehicle, provider: "acme", id: "car-1"), revision: 3, position: 1, time: Date(),
      payload: .vehicle(vehicle, zone: "Airport \"T1\""))
    let json = try #require(try JSONSerialization.jsonObject(with: WebhookMessage(event).body) as? [String: Any])
    let data = try #require(json["data"] as? [String: Any])
    #expect(data["zone"] as? String == "Airport \"T1\"")
    #expect(data["name"] as? String == "providers/acme/vehicles/car-1")
    #expect(data["vehicleState"] as? String == "ONLINE")
  }

  @Test(arguments: [
    ("127.0.0.1", true), ("10.1.2.3", true), ("172.16.0.1", true), ("172.32.0.1", false), ("192.168.1.1", true),
    ("169.254.169.254", true), ("100.64.0.1", true), ("0.0.0.0", true), ("224.0.0.1", true),
    ("8.8.8.8", false), ("93.184.216.34", false), ("::1", true), ("::", true), ("fe80::1", true),
    ("fd00::1", true), ("::ffff:127.0.0.1", true), ("::ffff:8.8.8.8", false), ("2001:4860:4860::8888", false),
  ])
  func privateLoopbackAndLinkLocalTargetsAreRecognised(address: String, isPrivate: Bool) throws {
    let socket = try SocketAddress(ipAddress: address, port: 443)
    #expect(WebhookTargets.isPrivate(socket) == isPrivate)
  }
}
