import FleetGeometry
import Foundation

/// Estimates without a road graph: straight lines at a fixed speed. `ordered_by` then says
/// PICKUP_POINT_STRAIGHT_DISTANCE, since nothing else was used.
public struct StraightLineTravel: TravelEstimator {
  /// 30 km/h: a city's average driving speed, slower than its limits.
  public static let defaultSpeed = 30 / 3.6
  public let metresPerSecond: Double

  public init(metresPerSecond: Double = Self.defaultSpeed) { self.metresPerSecond = metresPerSecond }

  public var followsRoads: Bool { false }

  func estimate(_ a: LatLng, _ b: LatLng) -> TravelEstimate {
    let metres = a.distance(to: b)
    return TravelEstimate(seconds: metres / metresPerSecond, metres: metres)
  }

  public func fan(to target: LatLng, from origins: [LatLng], now: Date) -> any TravelFan {
    Fan(estimates: origins.map { estimate($0, target) })
  }

  public func legs(through points: [LatLng], now: Date) -> [TravelEstimate]? {
    zip(points, points.dropFirst()).map { estimate($0, $1) }
  }

  public func matrix(_ points: [LatLng]) -> [[TravelEstimate?]] {
    matrix(from: points, to: points)
  }

  public func matrix(from sources: [LatLng], to targets: [LatLng]) -> [[TravelEstimate?]] {
    sources.map { a in targets.map { b in estimate(a, b) } }
  }

  struct Fan: TravelFan {
    let estimates: [TravelEstimate]
    var targetOffRoadMetres: Double { 0 }
    func drive(_ origin: Int) -> TravelEstimate? { estimates[origin] }
  }
}
