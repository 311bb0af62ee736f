import FleetGeometry
import Foundation

/// How long and how far one drive is.
public struct TravelEstimate: Sendable, Hashable {
  public var seconds: Double
  public var metres: Double

  public init(seconds: Double, metres: Double) {
    self.seconds = seconds
    self.metres = metres
  }

  public static let zero = TravelEstimate(seconds: 0, metres: 0)

  public static func + (a: TravelEstimate, b: TravelEstimate) -> TravelEstimate {
    TravelEstimate(seconds: a.seconds + b.seconds, metres: a.metres + b.metres)
  }
}

/// The port to what estimates drives for vehicle search and dispatch: FleetProgress answers on
/// the road graph with the traffic trip progress learns; `StraightLineTravel` without a graph.
/// `Fleet` calls it outside its lock.
public protocol TravelEstimator: Sendable {
  /// True when estimates follow roads; false when they are straight lines at a set speed.
  var followsRoads: Bool { get }
  /// Drives from every origin to one target, all in one query.
  func fan(to target: LatLng, from origins: [LatLng], now: Date) -> any TravelFan
  /// The legs through `points` in order (one fewer than the points), with current traffic
  /// (the usual traffic of a later `now`); nil when some leg has no route.
  func legs(through points: [LatLng], now: Date) -> [TravelEstimate]?
  /// Drives between all `points` with current traffic (row: from, column: to); nil where there
  /// is none.
  func matrix(_ points: [LatLng]) -> [[TravelEstimate?]]
  /// Drives from each source to each target with current traffic, in one query.
  func matrix(from sources: [LatLng], to targets: [LatLng]) -> [[TravelEstimate?]]
  /// One drive with current traffic (the usual traffic of a later `now`) and the shape it
  /// follows; nil when there is no route.
  func drive(from: LatLng, to: LatLng, now: Date) -> (estimate: TravelEstimate, path: [LatLng])?
}

extension TravelEstimator {
  /// Without a road graph, or where only the time matters: the leg, on a straight line.
  public func drive(from: LatLng, to: LatLng, now: Date) -> (estimate: TravelEstimate, path: [LatLng])? {
    legs(through: [from, to], now: now)?.first.map { ($0, [from, to]) }
  }
}

/// The result of one many-to-one query.
public protocol TravelFan {
  /// Metres from the target to the road the drives end on (0 for straight lines).
  var targetOffRoadMetres: Double { get }
  /// The drive from `origins[origin]` to the target with current traffic; nil: no route.
  func drive(_ origin: Int) -> TravelEstimate?
}
