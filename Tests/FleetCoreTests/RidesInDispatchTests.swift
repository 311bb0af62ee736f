import FleetGeometry
import Foundation
import Testing

@testable import FleetCore

/// The dispatcher's rounds scan `ridesInDispatch`: it must hold the rides still in dispatch and
/// none on the road with their riders, or a round's cost follows every trip in the city.
@Suite("Rides in dispatch")
struct RidesInDispatchTests {
  func inDispatch(_ fleet: Fleet) -> Set<String> { fleet.state.withLock { Set($0.ridesInDispatch.map(\.id)) } }

  @Test func aRideLeavesDispatchWhenItsRiderIsAboardOrItsTripEndsOrGoes() async throws {
    let fleet = try await rideServiceFleet()
    try await addVehicle(fleet, "car-1", at: monaco)
    try await addVehicle(fleet, "car-2", at: port)
    for id in ["r1", "r2"] {
      _ = try await fleet.createRide(caller: admin, provider: provider, rideID: id, request: rideRequest())
    }
    #expect(inDispatch(fleet) == ["r1", "r2"], "waiting")
    try await dispatchOnce(fleet)
    for status in [TripStatus.enrouteToPickup, .arrivedAtPickup] {
      try await moveTrip(fleet, "r1", to: status)
      #expect(inDispatch(fleet) == ["r1", "r2"], "assigned, its rider not yet aboard: \(status)")
    }
    try await moveTrip(fleet, "r1", to: .enrouteToDropoff)
    #expect(inDispatch(fleet) == ["r2"], "the rider is aboard")
    try await moveTrip(fleet, "r2", to: .canceled)
    #expect(inDispatch(fleet).isEmpty, "the trip ended")
    _ = try await fleet.createRide(caller: admin, provider: provider, rideID: "r3", request: rideRequest())
    #expect(inDispatch(fleet) == ["r3"])
    try await fleet.deleteTrip(caller: admin, name: tripName("r3"))
    #expect(inDispatch(fleet).isEmpty, "its trip was deleted")
  }
}
