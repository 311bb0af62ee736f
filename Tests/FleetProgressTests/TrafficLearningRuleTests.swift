import FleetCore
import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Testing

@testable import FleetProgress

@Suite("What trip progress learns as traffic")
struct TrafficLearningRuleTests {
  /// The plan forks off to d; a car that keeps to the branch to c is near the plan's branch
  /// (the two part at a narrow angle) but on its own road: its slow drive there teaches nothing
  /// about the plan's branch. The same slow drive on the plan's branch is learned.
  @Test(arguments: [false, true]) func aCarKeepingToAnotherRoadWhereItsPlanTurnsOffTeachesNothing(onPlan: Bool) throws {
    var map = MapFixture(
      """
      a     1 b           2 c

                              d
      """)
    map.way("abc", ["highway": "secondary"])
    map.way("bd", ["highway": "secondary"])
    let engine = try map.engine()
    let traffic = TrafficModel()
    let progress = ProgressEngine(routing: engine, traffic: traffic)
    let name = ResourceName(provider: "p", kind: .vehicles, id: "car")
    var vehicle = Vehicle(provider: "p", id: "car")
    vehicle.waypoints = [
      TripWaypoint(location: TerminalLocation(point: map.point("d")), tripID: "t", waypointType: .dropOff)
    ]
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    // 150 m past b: on the road to c, or as far along the plan's branch to d.
    let (b, d) = (map.point("b"), map.point("d"))
    let share = map.point("b").distance(to: map.point("2")) / b.distance(to: d)
    let onBranch = LatLng(
      latitude: b.latitude + (d.latitude - b.latitude) * share,
      longitude: b.longitude + (d.longitude - b.longitude) * share)
    // At road speed to 1, then 100 s for the 175 m past it: a jam, wherever it is.
    for (point, seconds) in [(map.point("a"), 0.0), (map.point("1"), 10), (onPlan ? onBranch : map.point("2"), 110)] {
      var fix = VehicleLocation(location: point)
      fix.updateTime = start.addingTimeInterval(seconds)
      vehicle.lastLocation = progress.locate(name, fixes: [fix]).last
      _ = progress.progress(of: vehicle, now: fix.updateTime!)
    }
    let slowdowns = traffic.slowdowns(at: start.addingTimeInterval(110), roads: engine.network.edges.count * 2)
    #expect(slowdowns.isFreeFlow == !onPlan, "\(slowdowns.slowedRoads) roads slowed")
  }
}
