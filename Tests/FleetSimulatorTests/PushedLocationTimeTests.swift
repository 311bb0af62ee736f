import FleetProto
import Foundation
import SwiftProtobuf
import Testing

@testable import FleetSimulator

/// The simulated riders read one field of each pushed trip, parsed from its bytes: the same
/// time SwiftProtobuf decodes, or none.
@Suite("The pushed location's time")
struct PushedLocationTimeTests {
  func read(_ trip: Maps_Fleetengine_V1_Trip) throws -> Date? {
    try PushedLocationTime().deserialize(try trip.serializedBytes() as [UInt8])
  }

  /// A trip as a rider's app gets it: route, waypoints, times around the location.
  func busyTrip() -> Maps_Fleetengine_V1_Trip {
    var trip = Maps_Fleetengine_V1_Trip()
    trip.name = "providers/p/trips/t1"
    trip.vehicleID = "v1"
    trip.tripStatus = .enrouteToDropoff
    trip.currentRouteSegment = String(repeating: "_p~iF~ps|U", count: 40)
    trip.pickupPoint.point.latitude = 43.73
    trip.pickupTime = Google_Protobuf_Timestamp(seconds: 1_800_000_000, nanos: 5)
    var waypoint = Maps_Fleetengine_V1_TripWaypoint()
    waypoint.tripID = "t1"
    waypoint.eta = Google_Protobuf_Timestamp(seconds: 1_800_000_900, nanos: 0)
    trip.remainingWaypoints = [waypoint, waypoint]
    trip.lastLocation.location.latitude = 43.74
    trip.lastLocation.serverTime = Google_Protobuf_Timestamp(seconds: 1_800_000_050, nanos: 1)
    trip.lastLocation.heading = .init(90)
    trip.lastLocation.updateTime = Google_Protobuf_Timestamp(seconds: 1_800_000_042, nanos: 250_000_000)
    trip.numberOfPassengers = 2
    return trip
  }

  @Test func readsTheTimeSwiftProtobufDecodes() throws {
    let trip = busyTrip()
    let decoded = try Maps_Fleetengine_V1_Trip(serializedBytes: try trip.serializedBytes() as [UInt8])
    #expect(try read(trip) == decoded.lastLocation.updateTime.date)
    #expect(try read(trip) == Date(timeIntervalSince1970: 1_800_000_042.25))
  }

  @Test func aTripWithoutALocationOrItsTimeHasNone() throws {
    var trip = busyTrip()
    trip.lastLocation.clearUpdateTime()
    #expect(try read(trip) == nil)
    trip.clearLastLocation()
    #expect(try read(trip) == nil)
  }

  @Test func cutBytesAreRefused() throws {
    let bytes: [UInt8] = try busyTrip().serializedBytes()
    #expect(throws: PushedLocationTime.Malformed.self) {
      try PushedLocationTime().deserialize(Array(bytes.prefix(bytes.count - 3)))
    }
  }
}
