import FleetCore
import FleetProgress
import FleetRouting
import Foundation
import Testing

/// A vehicle's progress through its waypoints on the real Monaco network.
@Suite("Vehicle progress")
struct ProgressCalculatorTests {
  static let calculator: ProgressCalculator = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    return ProgressCalculator(engine: try! RoutingEngine(osm: root.appendingPathComponent("shared/data/monaco.osm.pbf").path))
  }()

  static let palace = LatLng(latitude: 43.7300, longitude: 7.4200)
  static let larvotto = LatLng(latitude: 43.7400, longitude: 7.4300)
  static let casino = LatLng(latitude: 43.7395, longitude: 7.4280)
  static let port = LatLng(latitude: 43.7350, longitude: 7.4230)
  static let now = Date(timeIntervalSince1970: 1_790_000_000)

  static func stop(_ point: LatLng, _ trip: String, _ type: WaypointType) -> TripWaypoint {
    TripWaypoint(location: TerminalLocation(point: point), tripID: trip, waypointType: type)
  }

  @Test func withoutWaypointsThereAreNoLegs() throws {
    let progress = try Self.calculator.progress(of: Self.port, through: [], at: Self.now)
    #expect(progress.legs.isEmpty)
    #expect(progress.currentRouteSegment.isEmpty)
    #expect(progress.remainingDistanceToFirstWaypoint == nil)
    #expect(progress.roadPosition.distance < 50)
  }

  @Test func legsFollowTheWaypointsAndTheirETAsAddUp() throws {
    let stops = [Self.stop(Self.larvotto, "a", .pickup), Self.stop(Self.casino, "a", .dropOff)]
    let progress = try Self.calculator.progress(of: Self.palace, through: stops, at: Self.now)
    #expect(progress.legs.map(\.waypoint) == stops)
    let first = progress.legs[0]
    let second = progress.legs[1]
    #expect(first.distanceMeters > 1_000 && second.distanceMeters > 100)
    #expect(first.eta == Self.now.addingTimeInterval(first.duration))
    #expect(abs(second.eta.timeIntervalSince(Self.now) - (first.duration + second.duration)) < 1e-6)
    #expect(progress.eta(trip: "a", at: .pickup) == first.eta)
    #expect(progress.eta(trip: "a", at: .dropOff) == second.eta)
    // The first leg starts where the vehicle is on the road and is the current route segment.
    let start = try #require(first.path.first)
    #expect(abs(start.latitude - progress.roadPosition.location.latitude) < 1e-5)
    #expect(abs(start.longitude - progress.roadPosition.location.longitude) < 1e-5)
    #expect(progress.currentRouteSegment == first.path)
    #expect(progress.remainingTimeToFirstWaypoint == first.duration)
  }

  @Test func remainingDistanceFallsAsTheVehicleAdvances() throws {
    let stops = [Self.stop(Self.larvotto, "a", .pickup)]
    let start = try Self.calculator.progress(of: Self.palace, through: stops, at: Self.now)
    let path = start.currentRouteSegment
    var previous = try #require(start.remainingDistanceToFirstWaypoint)
    var previousETA = try #require(start.etaToFirstWaypoint)
    for fraction in [0.25, 0.5, 0.75] {
      let position = path[Int(Double(path.count - 1) * fraction)]
      let progress = try Self.calculator.progress(of: position, through: stops, at: Self.now)
      let remaining = try #require(progress.remainingDistanceToFirstWaypoint)
      let eta = try #require(progress.etaToFirstWaypoint)
      #expect(remaining < previous, "at \(fraction) of the way: \(remaining) m, before \(previous) m")
      #expect(eta < previousETA)
      previous = remaining
      previousETA = eta
    }
  }

  @Test func aSharedTripsLegsEndAtItsLastWaypoint() throws {
    let stops = [
      Self.stop(Self.port, "a", .pickup), Self.stop(Self.larvotto, "b", .pickup),
      Self.stop(Self.casino, "a", .dropOff), Self.stop(Self.palace, "b", .dropOff),
    ]
    let progress = try Self.calculator.progress(of: Self.palace, through: stops, at: Self.now)
    #expect(progress.legs(forTrip: "a").map(\.waypoint) == Array(stops.prefix(3)))
    #expect(progress.legs(forTrip: "b").count == 4)
    #expect(progress.legs(forTrip: "c").isEmpty)
    let dropOffB = try #require(progress.eta(trip: "b", at: .dropOff))
    let dropOffA = try #require(progress.eta(trip: "a", at: .dropOff))
    #expect(dropOffB > dropOffA)
  }
}
