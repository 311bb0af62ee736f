import FleetCore
import FleetDispatch
import FleetTestSupport
import Foundation
import Testing

/// The rides' metrics at GET /metrics, from real rides over REST: requested, completed and
/// unserved, the pickup wait, the detour of a pooled ride, the vehicles online.
@Suite("Ride metrics")
struct RideMetricsTests {
  @Test(.timeLimit(.minutes(2)))
  func ridesAreCountedAndTheirWaitsAndDetoursMeasured() async throws {
    var options = Fleetd.Options()
    var dispatch = DispatchConfiguration()
    dispatch.interval = .milliseconds(200)
    dispatch.noVehicleTimeout = .seconds(1)
    options.dispatch = dispatch
    options.fleet = try shippedRideService(for: "acme")
    try await Fleetd.with(options) { server in
      let token = try server.admin.token()
      let pickup = #"{"point":{"latitude":43.7384,"longitude":7.4246}}"#
      let dropoff = #"{"point":{"latitude":43.7396,"longitude":7.4275}}"#
      // A car for pooled rides at the pickup; nothing carries taxis, so a taxi ride goes unserved.
      var (status, _, _) = try await server.http(
        "POST", "/v1/providers/acme/vehicles?vehicleId=car", token: token,
        body: """
          {"vehicleState":"ONLINE","supportedTripTypes":["SHARED"],"maximumCapacity":4,
           "vehicleType":{"category":"AUTO"},"lastLocation":{"location":{"latitude":43.7384,"longitude":7.4246}}}
          """)
      #expect(status == 200)
      (status, _, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=pooled", token: token,
        body: #"{"pickupPoint":\#(pickup),"dropoffPoint":\#(dropoff),"product":"shared"}"#)
      #expect(status == 200)
      (status, _, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=unserved", token: token,
        body: #"{"pickupPoint":\#(pickup),"dropoffPoint":\#(dropoff),"product":"taxi"}"#)
      #expect(status == 200)
      let later = Date().addingTimeInterval(3 * 3600).formatted(.iso8601)
      (status, _, _) = try await server.http(
        "POST", "/fleetkit/v1/providers/acme/rides?rideId=later", token: token,
        body: #"{"pickupPoint":\#(pickup),"dropoffPoint":\#(dropoff),"pickupTime":"\#(later)"}"#)
      #expect(status == 200)
      try await eventually("the pooled ride assigned", timeout: .seconds(30)) {
        try await server.http("GET", "/fleetkit/v1/providers/acme/rides/pooled", token: token).1["state"] as? String
          == "ASSIGNED"
      }
      for step in ["ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF", "COMPLETE"] {
        (status, _, _) = try await server.http(
          "PUT", "/v1/providers/acme/trips/pooled?updateMask=tripStatus", token: token,
          body: #"{"tripStatus":"\#(step)"}"#)
        #expect(status == 200, "\(step)")
      }
      try await eventually("the unserved ride expired", timeout: .seconds(30)) {
        try await server.http("GET", "/fleetkit/v1/providers/acme/rides/unserved", token: token).1["state"] as? String
          == "NO_VEHICLE_FOUND"
      }
      let values = try await server.metrics()
      #expect(values["fleetd_rides_requested_total"] == 3)
      #expect(values["fleetd_rides_completed_total"] == 1)
      #expect(values["fleetd_rides_no_vehicle_found_total"] == 1)
      #expect(values["fleetd_ride_pickup_wait_seconds_count"] == 1)
      let wait = try #require(values["fleetd_ride_pickup_wait_seconds_sum"])
      #expect(wait >= 0 && wait < 60)
      #expect(values["fleetd_ride_detour_ratio_count"] == 1, "the pooled ride, priced with its direct route")
      try await eventually("the vehicles online", timeout: .seconds(30)) {
        try await server.metrics()["fleetd_vehicles_online"] == 1
      }
    }
  }
}
