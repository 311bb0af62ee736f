import FleetCore
import FleetProto
import Foundation
import SwiftProtobuf
import Testing

@testable import FleetServer

/// The wire form of pushed trips, built once per change for all of a trip's watchers.
@Suite("Pushed trips")
struct PushedTripsTests {
  func update(_ status: TripStatus, sequence: UInt64, view: TripView = .journeySharingV1S) -> TripUpdate {
    var trip = Trip(provider: "acme", id: "ride")
    trip.status = status
    return TripUpdate(
      snapshot: TripSnapshot(
        trip: trip, remainingWaypoints: [], vehicleWaypoints: nil, lastLocation: nil, view: view),
      sequence: sequence)
  }

  func address(_ message: EncodedMessage) -> UnsafeRawPointer? {
    message.bytes.withUnsafeBytes { $0.baseAddress }
  }

  @Test func theWatchersOfOneChangeShareItsBytes() throws {
    let pushed = PushedTrips(slots: 16)
    let change = update(.enrouteToPickup, sequence: 7)
    let first = try pushed.encoded(change, format: .latLngList)
    let second = try pushed.encoded(change, format: .latLngList)
    #expect(first.bytes == (try Maps_Fleetengine_V1_Trip(change.snapshot, format: .latLngList).serializedBytes()))
    // The same storage: encoded once, not twice into equal bytes.
    #expect(address(first) == address(second))
  }

  @Test func aNewChangeAViewOrAFormatIsEncodedForItself() throws {
    let pushed = PushedTrips(slots: 16)
    let before = try pushed.encoded(update(.enrouteToPickup, sequence: 7), format: .latLngList)
    let later = try pushed.encoded(update(.arrivedAtPickup, sequence: 8), format: .latLngList)
    #expect(try Maps_Fleetengine_V1_Trip(serializedBytes: later.bytes).tripStatus == .arrivedAtPickup)
    let otherView = try pushed.encoded(update(.arrivedAtPickup, sequence: 8, view: .sdk), format: .latLngList)
    #expect(try Maps_Fleetengine_V1_Trip(serializedBytes: otherView.bytes).view == .sdk)
    let encoded = try pushed.encoded(update(.arrivedAtPickup, sequence: 8), format: .encodedPolyline)
    #expect(address(encoded) != address(later))
    #expect(address(before) != address(later))
  }

  /// Two trips in one slot take turns: each encoding is still its own trip's.
  @Test func tripsSharingASlotAreNeverMixedUp() throws {
    let pushed = PushedTrips(slots: 1)
    for sequence in 1...4 as ClosedRange<UInt64> {
      for id in ["a", "b"] {
        var trip = Trip(provider: "acme", id: id)
        trip.status = .enrouteToDropoff
        let change = TripUpdate(
          snapshot: TripSnapshot(
            trip: trip, remainingWaypoints: [], vehicleWaypoints: nil, lastLocation: nil, view: .journeySharingV1S),
          sequence: sequence)
        let sent = try Maps_Fleetengine_V1_Trip(serializedBytes: pushed.encoded(change, format: .latLngList).bytes)
        #expect(sent.name == "providers/acme/trips/\(id)")
      }
    }
  }
}
