import FleetCore
import FleetDispatch
import FleetTestSupport
import Foundation
import Testing

/// The booking API over REST (`/fleetkit/v1/…`), Fleet Engine's REST style and error body.
@Suite("Booking API over REST")
struct BookingAPITests {
  let body = """
    {"pickupPoint":{"point":{"latitude":43.7384,"longitude":7.4246}},
     "dropoffPoint":{"point":{"latitude":43.7396,"longitude":7.4275}},"numberOfPassengers":2,
     "filter":"attributes.tier = \\"gold\\""}
    """

  func error(_ json: [String: Any]) -> (status: String?, message: String) {
    let e = json["error"] as? [String: Any]
    return (e?["status"] as? String, e?["message"] as? String ?? "")
  }

  @Test func bookReadListAndCancelRides() async throws {
    var dispatch = DispatchConfiguration()
    dispatch.interval = .seconds(3600)
    try await Fleetd.with(dispatch: dispatch) { server in
      let token = try server.admin.token()
      var (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r1", token: token, body: body)
      #expect(status == 200)
      #expect(json["name"] as? String == "providers/acme/rides/r1")
      #expect(json["trip"] as? String == "providers/acme/trips/r1")
      #expect(json["state"] as? String == "WAITING")
      #expect(json["numberOfPassengers"] as? Int == 2 && json["tripType"] as? String == "EXCLUSIVE")
      let created = json["createTime"] as? String
      // The trip exists, NEW and unassigned.
      (status, json, _) = try await server.http("GET", "/v1/providers/acme/trips/r1", token: token)
      #expect(status == 200 && json["tripStatus"] as? String == "NEW" && json["vehicleId"] == nil)
      // The same booking again: the same ride. Another under the same ID: 409.
      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r1", token: token, body: body)
      #expect(status == 200 && json["createTime"] as? String == created)
      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r1", token: token,
        body: body.replacingOccurrences(of: "\"numberOfPassengers\":2", with: "\"numberOfPassengers\":3"))
      #expect(status == 409 && error(json).status == "ALREADY_EXISTS")

      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/r1", token: token)
      #expect(status == 200 && json["state"] as? String == "WAITING")
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides?pageSize=10", token: token)
      #expect((json["rides"] as? [[String: Any]])?.map { $0["name"] as? String } == ["providers/acme/rides/r1"])
      (status, json, _) = try await server.http("DELETE", "/fleetkit/v1/providers/acme/rides/r1", token: token)
      #expect(status == 200 && json["state"] as? String == "CANCELED")
      (status, json, _) = try await server.http("GET", "/v1/providers/acme/trips/r1", token: token)
      #expect(json["tripStatus"] as? String == "CANCELED")

      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r2", token: token, body: #"{"numberOfPassengers":1}"#)
      #expect(
        status == 400 && error(json).status == "INVALID_ARGUMENT" && error(json).message.contains("ride.pickup_point"))
      (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides", token: token, body: body)
      #expect(status == 400 && error(json).message.contains("ride_id"))
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/none", token: token)
      #expect(status == 404 && error(json).status == "NOT_FOUND")
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/nothing", token: token)
      #expect(status == 404)
      let driver = try await server.signer(role: .driver).token(vehicleID: "*")
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/r1", token: driver)
      #expect(status == 403 && error(json).status == "PERMISSION_DENIED")
      (status, json, _) = try await server.http("GET", "/fleetkit/v1/providers/acme/rides/r1", token: nil)
      #expect(status == 401)
    }
  }

  @Test func withoutTheDispatcherTheBookingAPISaysHowToStartIt() async throws {
    try await Fleetd.with { server in
      let (status, json, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=r1", token: try server.admin.token(), body: body)
      #expect(status == 501 && error(json).status == "UNIMPLEMENTED" && error(json).message.contains("--dispatch"))
    }
  }
}
