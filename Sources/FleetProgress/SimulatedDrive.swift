import FleetCore
import FleetRouting

/// A car driving a route's shape, each road at a chosen share of its free-flow speed: where it
/// is after any number of seconds. For simulations and benchmarks (and test drives) of progress.
public struct SimulatedDrive: Sendable {
  /// Along the shape: the points, and metres and seconds from the start at each.
  public private(set) var points: [LatLng] = []
  var metres: [Double] = []
  var seconds: [Double] = []

  /// `speedShare` gives each road's share of its free-flow speed (1: free flow).
  public init(route: Route, speedShare: (RouteSpan, RouteLeg) -> Double = { _, _ in 1 }) {
    for leg in route.legs {
      for span in leg.spans {
        let share = speedShare(span, leg)
        let piece = Array(leg.geometry[span.firstPoint...span.lastPoint])
        let length = zip(piece, piece.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
        for point in piece {
          guard let last = points.last else {
            points.append(point)
            metres.append(0)
            seconds.append(0)
            continue
          }
          if last == point { continue }
          let step = point.distance(to: last)
          points.append(point)
          metres.append(metres.last! + step)
          seconds.append(seconds.last! + (length > 0 ? span.duration / share * step / length : 0))
        }
      }
    }
  }

  public var duration: Double { seconds.last ?? 0 }
  public var distance: Double { metres.last ?? 0 }

  /// Where the car is `t` seconds after it set off.
  public func position(after t: Double) -> LatLng {
    guard let (k, f) = interval(at: t) else { return points.last! }
    let a = points[k]
    let b = points[k + 1]
    return LatLng(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude))
  }

  /// How far along the car is after `t` seconds.
  public func distance(after t: Double) -> Double {
    guard let (k, f) = interval(at: t) else { return distance }
    return metres[k] + f * (metres[k + 1] - metres[k])
  }

  /// The stretch of the shape the car is on at `t`, and how far along it.
  func interval(at t: Double) -> (Int, Double)? {
    guard let k = seconds.lastIndex(where: { $0 <= t }), k + 1 < points.count else { return nil }
    let span = seconds[k + 1] - seconds[k]
    return (k, span > 0 ? (t - seconds[k]) / span : 0)
  }
}
