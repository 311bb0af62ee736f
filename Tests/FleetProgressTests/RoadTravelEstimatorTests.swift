import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import FleetTestSupport
import Foundation
import Testing

/// Search, dispatch and quotes time their drives with `RoadTravelEstimator`: one drive as a
/// one-to-one query that never unpacks its path, a drive through stops as a route through them,
/// many vehicles to one pickup in one fan. Each must say what a route on the same metric says.
@Suite("Road travel estimates")
struct RoadTravelEstimatorTests {
  /// Points anywhere in Monaco, the same on every run.
  static func points(_ count: Int, seed: UInt64) -> [LatLng] {
    var state = seed
    func next() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
    return (0..<count).map { _ in LatLng(latitude: 43.7245 + next() * 0.027, longitude: 7.4095 + next() * 0.0330) }
  }

  @Test func aDriveIsTimedAsItsRouteIs() async throws {
    let routing = try await monacoRouting()
    let estimator = RoadTravelEstimator(routing: routing)
    let from = Self.points(150, seed: 7)
    let to = Self.points(150, seed: 11)
    let now = Date()
    let compared = try await onDedicatedThread(named: "estimator-vs-route") {
      var compared = 0
      for (a, b) in zip(from, to) {
        let estimate = estimator.legs(through: [a, b], now: now)
        let route = try? routing.drivenLegs([a, b])
        #expect((estimate == nil) == (route == nil), "\(a) → \(b)")
        guard let drive = estimate?.first, let leg = route?.first else { continue }
        #expect(
          abs(drive.seconds - leg.duration) < 1e-6, "\(a) → \(b): \(drive.seconds) s, the route \(leg.duration) s")
        #expect(abs(drive.metres - leg.distance) < 1e-6, "\(a) → \(b): \(drive.metres) m, the route \(leg.distance) m")
        compared += 1
      }
      return compared
    }
    #expect(compared >= 140)
  }

  @Test func aDriveThroughStopsIsTheRouteThroughThem() async throws {
    let routing = try await monacoRouting()
    let estimator = RoadTravelEstimator(routing: routing)
    let stops = [Place.palace, Place.casino, Place.port, Place.larvotto]
    let legs = try #require(estimator.legs(through: stops, now: Date()))
    let route = try routing.drivenLegs(stops)
    #expect(legs.map(\.seconds) == route.map(\.duration))
    #expect(legs.map(\.metres) == route.map(\.distance))
  }

  @Test func aFanTimesEachVehicleAsItsOwnDrive() async throws {
    let routing = try await monacoRouting()
    let estimator = RoadTravelEstimator(routing: routing)
    let vehicles = Self.points(60, seed: 3)
    let pickup = Place.casino
    let fan = estimator.fan(to: pickup, from: vehicles, now: Date())
    for (i, vehicle) in vehicles.enumerated() {
      let one = estimator.legs(through: [vehicle, pickup], now: Date())?.first
      #expect(fan.drive(i) == one, "\(vehicle)")
    }
  }
}
