import FleetAuth
import FleetCore
import FleetGeometry
import FleetRideStatus
import FleetTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `GET …/trips/{t}:rideStatus` on a real fleetd with the Monaco graph (so trips have ETAs).
@Suite struct RideStatusEndpointTests {
  let start = LatLng(latitude: 43.7315, longitude: 7.4210)
  let pickup = LatLng(latitude: 43.7330, longitude: 7.4250)
  let dropoff = LatLng(latitude: 43.7360, longitude: 7.4230)

  func get(_ fleetd: Fleetd, _ trip: String, token: String, query: String = "") async throws -> (Int, Data) {
    var request = URLRequest(
      url: URL(string: "\(fleetd.httpURL)/fleetkit/v1/providers/acme/trips/\(trip):rideStatus\(query)")!)
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
  }

  func status(_ data: Data) throws -> RideStatus {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(RideStatus.self, from: data)
  }

  @Test func aTripDrivenThroughItsPhasesWithTheRidersToken() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      try await fleetd.createVehicle("v1", at: start)
      try await fleetd.createTrip("t1", vehicle: nil, pickup: pickup, dropoff: dropoff)
      let rider = try await fleetd.signer(role: .consumer).token(tripID: "t1")

      let (code, body) = try await get(fleetd, "t1", token: rider)
      #expect(code == 200)
      let received = try status(body)
      #expect(received.phase == .received)
      #expect(received.rideIdentifier == "t1")
      #expect(received.vehicle == nil)
      #expect(received.pickupLocation?.coordinate == pickup)

      try await fleetd.updateTrip("t1", status: .enrouteToPickup, vehicle: "v1")
      let (_, enroute) = try await get(fleetd, "t1", token: rider, query: "?ride_identifier=booking-7")
      let confirmed = try status(enroute)
      #expect([.confirmed, .approachingPickup].contains(confirmed.phase))
      #expect(confirmed.rideIdentifier == "booking-7")
      #expect(confirmed.vehicle?.mapAnnotationImageName == "vehicle")
      #expect(RideStatusValidator(rideIdentifier: "booking-7").violations(of: confirmed).isEmpty)
      // fleetd routed the vehicle to the pickup: a sensible ETA, a few minutes at most in Monaco.
      let eta = try #require(confirmed.estimatedPickupDate)
      #expect(eta > Date() - 5 && eta < Date() + 600)
      #expect(confirmed.rideOption?.estimatedPickupDate == eta)

      try await fleetd.updateTrip("t1", status: .arrivedAtPickup)
      #expect(try status(try await get(fleetd, "t1", token: rider).1).phase == .pickup)
      try await fleetd.updateTrip("t1", status: .enrouteToDropoff)
      let ongoing = try status(try await get(fleetd, "t1", token: rider).1)
      #expect(ongoing.phase == .ongoing)
      try await fleetd.updateTrip("t1", status: .complete)
      let completed = try status(try await get(fleetd, "t1", token: rider).1)
      #expect(completed.phase == .completed)
      #expect(completed.completionStatus?.outcome == .completed)
    }
  }

  @Test func anotherRidersTokenAndNoTokenAreRefused() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createTrip("t1", vehicle: nil, pickup: pickup, dropoff: dropoff)
      try await fleetd.createTrip("t2", vehicle: nil, pickup: pickup, dropoff: dropoff)
      let otherRider = try await fleetd.signer(role: .consumer).token(tripID: "t2")
      let (denied, body) = try await get(fleetd, "t1", token: otherRider)
      #expect(denied == 403)
      #expect(String(decoding: body, as: UTF8.self).contains("PERMISSION_DENIED"))
      let (unauthenticated, _) = try await get(fleetd, "t1", token: "not-a-token")
      #expect(unauthenticated == 401)
      let server = try await fleetd.signer(role: .server).token()
      let (allowed, _) = try await get(fleetd, "t1", token: server)
      #expect(allowed == 200)
      let (missing, _) = try await get(fleetd, "nope", token: server)
      #expect(missing == 404)
    }
  }
}
