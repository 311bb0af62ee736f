import FleetCore
import FleetGeometry
import FleetProgress
import Foundation
import Testing

@Suite("Vehicle trace")
struct VehicleTraceTests {
  static let start = Date(timeIntervalSince1970: 1_790_000_000)

  /// A point `metres` east of a fixed place in Monaco, at `seconds` after `start`.
  static func at(_ metres: Double, _ seconds: Double) -> (point: LatLng, time: Date) {
    (
      LatLng(latitude: 43.73, longitude: 7.42 + metres / (111_195 * cos(43.73 * .pi / 180))),
      start.addingTimeInterval(seconds)
    )
  }

  @Test func positionsArrivingLateTakeTheirPlaceInTime() {
    var trace = VehicleTrace()
    trace.ingest([Self.at(300, 30), Self.at(400, 40)])
    // The backlog of an outage, sent after the newer positions and out of order.
    #expect(trace.ingest([Self.at(200, 20), Self.at(0, 0), Self.at(100, 10)]) == 3)
    #expect(trace.fixes.map(\.time) == [0, 10, 20, 30, 40].map { Self.start.addingTimeInterval($0) })
    #expect(trace.latestPlausible?.time == Self.start.addingTimeInterval(40))
    #expect(trace.fixes.allSatisfy { $0.isPlausible })
  }

  @Test func repeatedPositionsAreIgnored() {
    var trace = VehicleTrace()
    trace.ingest([Self.at(0, 0), Self.at(100, 10)])
    #expect(trace.ingest([Self.at(100, 10)]) == 0)
    #expect(trace.fixes.count == 2)
  }

  @Test func aJumpNoCarCouldMakeIsKeptButNotTrusted() {
    var trace = VehicleTrace()
    // 5 km in 10 s is 1,800 km/h.
    trace.ingest([Self.at(0, 0), Self.at(100, 10), Self.at(5_100, 20)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, false])
    #expect(trace.latestPlausible?.time == Self.start.addingTimeInterval(10))
    // The next good fix is judged against the last trusted one, not the outlier.
    trace.ingest([Self.at(250, 30)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, false, true])
    #expect(trace.latestPlausible?.time == Self.start.addingTimeInterval(30))
  }

  @Test func oldPositionsLeaveTheWindow() {
    var trace = VehicleTrace(window: 60, maximumCount: 3)
    trace.ingest([Self.at(0, 0), Self.at(100, 10)])
    trace.ingest([Self.at(900, 90)])
    #expect(trace.fixes.map(\.time) == [Self.start.addingTimeInterval(90)])
    trace.ingest([Self.at(1_000, 100), Self.at(1_100, 110), Self.at(1_200, 120)])
    #expect(trace.fixes.count == 3)
    #expect(trace.fixes.first?.time == Self.start.addingTimeInterval(100))
  }

  @Test func twoFixesThatAgreeOutvoteAWildAnchor() {
    var trace = VehicleTrace()
    // The first fix was the wild one: the next two agree with each other, 500 m away.
    trace.ingest([Self.at(0, 0), Self.at(500, 1), Self.at(510, 2)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, true])
    #expect(trace.latestPlausible?.time == Self.start.addingTimeInterval(2))
    // A lone outlier still does not.
    trace.ingest([Self.at(3_000, 3), Self.at(520, 4)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, true, false, true])
  }

  @Test func aWildFixStaysUntrustedWhenTheFixesBeforeItLeaveTheWindow() {
    var trace = VehicleTrace(window: 300, maximumCount: 3)
    trace.ingest([Self.at(0, 0), Self.at(100, 10), Self.at(5_100, 20)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, false])
    // The fixes that showed it wild leave the window one by one; it is never trusted, and the
    // good fixes after it are judged against the last trusted one.
    trace.ingest([Self.at(250, 30)])
    trace.ingest([Self.at(400, 40)])
    #expect(trace.fixes.map(\.time) == [20, 30, 40].map { Self.start.addingTimeInterval($0) })
    #expect(trace.fixes.map(\.isPlausible) == [false, true, true])
    trace.ingest([Self.at(550, 50)])
    #expect(trace.fixes.map(\.isPlausible) == [true, true, true])
    #expect(trace.latestPlausible?.time == Self.start.addingTimeInterval(50))
  }
}
