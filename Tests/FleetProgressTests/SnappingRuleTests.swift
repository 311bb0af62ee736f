import FleetCore
import FleetGeometry
import FleetTestSupport
import Testing

@testable import FleetProgress
@testable import FleetRouting

/// When a fix is snapped to its nearest road at once and when the fixes before it must decide
/// (map matching), by the candidates' distances and where they snapped.
@Suite struct SnappingRuleTests {
  let here = LatLng(latitude: -34.9285, longitude: 138.6007)

  func road(_ metresNorth: Double, _ distance: Double) -> SnappedPoint {
    SnappedPoint(
      location: LatLng(latitude: here.latitude + metresNorth / 111_320, longitude: here.longitude), name: "",
      distance: distance)
  }

  @Test func aLoneRoadOrAFarOneIsUnambiguous() {
    #expect(ProgressEngine.isUnambiguous([road(0, 3)]))
    // The next road is 30 m off: no fix 3 m from one road was on the other.
    #expect(ProgressEngine.isUnambiguous([road(0, 3), road(33, 30)]))
  }

  @Test func aParallelRoadCloseByLeavesItToTheFixesBefore() {
    // A service road 9 m beside the main road, the fix between them: map matching decides.
    #expect(!ProgressEngine.isUnambiguous([road(0, 4), road(9, 5)]))
    // Twice as far but only 6 m farther: still a road the car may be on.
    #expect(!ProgressEngine.isUnambiguous([road(0, 6), road(18, 12)]))
  }

  @Test func theArmsOfAJunctionMeetWhereTheFixSnaps() {
    // Every arm of a junction snaps the fix to the junction itself: any of them is right.
    #expect(ProgressEngine.isUnambiguous([road(0, 5), road(1, 5), road(-1, 5.5)]))
  }

  @Test func noRoadIsNotUnambiguous() { #expect(!ProgressEngine.isUnambiguous([])) }
}

/// A parked car's fixes, each within its accuracy of the last one snapped, stay where it was
/// snapped; one that moved is snapped again.
@Suite struct StandingStillTests {
  @Test func aCarThatHasNotMovedStaysWhereItWasSnapped() async throws {
    let clock = TestTime()
    let fleet = try await makeFleet(clock: clock)
    try await createVehicle(fleet, "parked", at: Place.port)
    let off = LatLng(latitude: Place.port.latitude + 0.00012, longitude: Place.port.longitude)  // 13 m north
    clock.advance(5)
    let first = try await report(fleet, "parked", at: off, time: clock.now)
    let snapped = try #require(first.lastLocation?.location)
    #expect(first.lastLocation?.isRoadSnapped == true)
    // 1.5 m on, with no accuracy given: standing still.
    clock.advance(5)
    let jitter = LatLng(latitude: off.latitude, longitude: off.longitude + 0.00002)
    let second = try await report(fleet, "parked", at: jitter, time: clock.now)
    #expect(second.lastLocation?.location == snapped)
    #expect(second.lastLocation?.rawLocation == jitter)
    // 200 m on: snapped afresh, onto a road near the new fix.
    clock.advance(30)
    let moved = LatLng(latitude: Place.port.latitude + 0.0018, longitude: Place.port.longitude)
    let third = try await report(fleet, "parked", at: moved, time: clock.now)
    let again = try #require(third.lastLocation?.location)
    #expect(again.distance(to: snapped) > 100)
    #expect(again.distance(to: moved) < 50)
  }
}
