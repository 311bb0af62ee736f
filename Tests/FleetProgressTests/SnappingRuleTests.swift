import FleetGeometry
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
