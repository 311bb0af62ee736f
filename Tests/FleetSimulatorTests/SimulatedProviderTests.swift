import FleetGeometry
import FleetPositioning
import FleetRouting
import FleetSimulator
import FleetTestSupport
import Foundation
import Testing

/// The shared Monaco road network (`data/monaco.osm.pbf`), built once per test process on a
/// thread of its own.
func monacoRouting() async throws -> RoutingEngine { try await sharedRoutingEngine(graph: try await monacoGraph()) }

let palace = LatLng(latitude: 43.7300, longitude: 7.4200)
let casino = LatLng(latitude: 43.7395, longitude: 7.4280)

@Suite("Simulated and road-snapped location providers")
struct SimulatedProviderTests {
  @Test func simulatedCarDrivesARouteAtRoadSpeedsStartingAndStoppingSmoothly() async throws {
    let time = TestTime()
    let clock = PositioningClock(now: { time.now }, sleep: { _ in time.advance(1) })
    let route = try await monacoRouting().route([palace, casino])
    let drive = SimulatedDrive(route: route, acceleration: 1.5)
    #expect(drive.duration > route.duration, "starting and stopping takes longer than road speed throughout")
    #expect(drive.duration < route.duration * 1.5)
    let car = SimulatedLocationProvider(start: palace, configuration: .init(speedup: 1), clock: clock)
    #expect(car.hasArrived)
    car.drive(drive)
    var fixes: [LocationFix] = []
    for try await fix in car.fixes() {
      fixes.append(fix)
      if car.hasArrived || fixes.count > 2000 { break }
    }
    #expect(!fixes.isEmpty)
    // One fix a second, moving forward along the route, from standstill to standstill.
    #expect(
      fixes.first!.speed! <= (2 * 1.5 * 5.0).squareRoot(),
      "sets off from standstill: its first 5 m at most at √(2·a·5 m)")
    #expect(fixes.map(\.speed!).max()! > 8)
    #expect(fixes.map(\.speed!).allSatisfy { $0 < 40 })
    let accelerations = zip(fixes, fixes.dropFirst()).map { $1.speed! - $0.speed! }
    #expect(accelerations.max()! < 3, "no jump to road speed")
    #expect(fixes.suffix(2).first!.speed! < 4, "brakes to a stop")
    let end = fixes.last!.coordinate
    #expect(end.distance(to: drive.points.last!) < 1)
    #expect(Double(fixes.count) >= drive.duration.rounded(.down))
    #expect(fixes.allSatisfy { $0.heading != nil })
    // Parked: the position stays.
    #expect(car.currentFix().coordinate == drive.points.last!)
    #expect(car.currentFix().speed == 0)
  }

  @Test func noiseIsSeededAndAroundTheTruePosition() {
    let time = TestTime()
    let clock = PositioningClock(now: { time.now }, sleep: { _ in })
    let noisy = SimulatedLocationProvider(start: palace, configuration: .init(noise: 5, seed: 7), clock: clock)
    let again = SimulatedLocationProvider(start: palace, configuration: .init(noise: 5, seed: 7), clock: clock)
    let distances = (0..<500).map { _ in noisy.currentFix().coordinate.distance(to: palace) }
    #expect(
      (0..<500).map { _ in again.currentFix().coordinate.distance(to: palace) } == distances, "same seed, same noise")
    let mean = distances.reduce(0, +) / Double(distances.count)
    // The mean distance of a 2-D Gaussian with σ = 5 m is σ·√(π/2) ≈ 6.3 m.
    #expect(mean > 5 && mean < 7.5)
  }

  @Test func roadSnappedProviderPutsNoisyFixesOnTheRoadDriven() async throws {
    let time = TestTime()
    let clock = PositioningClock(now: { time.now }, sleep: { _ in time.advance(2) })
    let route = try await monacoRouting().route([palace, casino])
    let noisy = SimulatedLocationProvider(start: palace, configuration: .init(noise: 8, seed: 3), clock: clock)
    noisy.drive(SimulatedDrive(route: route))
    let snapped = RoadSnappedLocationProvider(base: noisy, routing: try await monacoRouting())
    var rawOff: [Double] = []
    var snappedOff: [Double] = []
    let geometry = route.legs.flatMap(\.geometry)
    func distanceToRoute(_ p: LatLng) -> Double {
      zip(geometry, geometry.dropFirst()).map { segmentDistance(p, $0, $1) }.min()!
    }
    for try await fix in snapped.fixes() {
      #expect(fix.isRoadSnapped)
      #expect(fix.sensor == .roadSnapped)
      #expect(fix.rawSensor == .gps)
      rawOff.append(distanceToRoute(fix.rawCoordinate!))
      snappedOff.append(distanceToRoute(fix.coordinate))
      if rawOff.count == 60 || noisy.hasArrived { break }
    }
    #expect(rawOff.count >= 60, "every fix of the first two minutes, none dropped")
    let median = { (v: [Double]) in v.sorted()[v.count / 2] }
    #expect(
      median(snappedOff) < median(rawOff) / 2, "snapped \(median(snappedOff)) m, raw \(median(rawOff)) m off the route")
    #expect(median(snappedOff) < 3)
  }
}

/// Metres from `p` to the segment a–b (flat over the few metres that matter here).
func segmentDistance(_ p: LatLng, _ a: LatLng, _ b: LatLng) -> Double {
  let scale = cos(p.latitude * .pi / 180)
  let (ax, ay) = ((a.longitude - p.longitude) * scale, a.latitude - p.latitude)
  let (bx, by) = ((b.longitude - p.longitude) * scale, b.latitude - p.latitude)
  let (dx, dy) = (bx - ax, by - ay)
  let length = dx * dx + dy * dy
  let t = length > 0 ? max(0, min(1, -(ax * dx + ay * dy) / length)) : 0
  let (x, y) = (ax + t * dx, ay + t * dy)
  return (x * x + y * y).squareRoot() * 111_195
}
