import FleetGeometry
import Foundation

/// A car driving a route's shape, each road at a chosen share of its free-flow speed: where it
/// is after any number of seconds. For simulations and benchmarks of progress, and the Driver
/// SDK's simulated location provider.
public struct SimulatedDrive: Sendable {
  /// Along the shape: the points, and metres and seconds from the start at each.
  public private(set) var points: [LatLng] = []
  var metres: [Double] = []
  var seconds: [Double] = []

  /// `speedShare` gives each road's share of its free-flow speed (1: free flow). With an
  /// `acceleration` (m/s²) the car starts each leg from standstill and brakes to a stop at its
  /// end instead of driving it at road speed throughout.
  public init(
    route: Route, acceleration: Double? = nil, speedShare: (RouteSpan, RouteLeg) -> Double = { _, _ in 1 }
  ) {
    for leg in route.legs {
      let legStart = points.count
      for span in leg.spans {
        let share = speedShare(span, leg)
        let piece = Array(leg.geometry[span.firstPoint...span.lastPoint])
        let length = zip(piece, piece.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
        for point in piece {
          guard let last = points.last else {
            append(point, metres: 0, seconds: 0)
            continue
          }
          if last == point { continue }
          let step = point.distance(to: last)
          append(
            point, metres: metres.last! + step,
            seconds: seconds.last! + (length > 0 ? span.freeFlowDuration / share * step / length : 0))
        }
      }
      if let acceleration, acceleration > 0 { stopAndGo(from: max(0, legStart - 1), acceleration: acceleration) }
    }
  }

  /// A shape driven at one speed (m/s), for when there is no road graph.
  public init(path: [LatLng], speed: Double, acceleration: Double? = nil) {
    for point in path {
      guard let last = points.last else {
        append(point, metres: 0, seconds: 0)
        continue
      }
      if last == point { continue }
      let step = point.distance(to: last)
      append(point, metres: metres.last! + step, seconds: seconds.last! + step / max(speed, 0.1))
    }
    if let acceleration, acceleration > 0 { stopAndGo(from: 0, acceleration: acceleration) }
  }

  mutating func append(_ point: LatLng, metres: Double, seconds: Double) {
    points.append(point)
    self.metres.append(metres)
    self.seconds.append(seconds)
  }

  /// Gives the stretch from `start` to the end a speed profile a car can drive: it sets off
  /// from standstill, changes speed between roads at most at `acceleration` (m/s²), and brakes
  /// to a stop at the end. Long pieces are cut to at most 5 m first, so that speed ramps.
  mutating func stopAndGo(from start: Int, acceleration: Double) {
    guard points.count - start >= 2 else { return }
    densify(from: start, longest: 5)
    let pieces = (start + 1)..<points.count
    func step(_ k: Int) -> Double { metres[k] - metres[k - 1] }
    var speeds = pieces.map { k in
      let planned = seconds[k] - seconds[k - 1]
      return planned > 0 ? step(k) / planned : Double.infinity
    }
    // v² ≤ v₀² + 2·a·d, forwards (speeding up) and backwards (braking).
    var speed = 0.0
    for (i, k) in pieces.enumerated() where step(k) > 0 {
      speeds[i] = min(speeds[i], (speed * speed + 2 * acceleration * step(k)).squareRoot())
      speed = speeds[i]
    }
    speed = 0
    for (i, k) in pieces.enumerated().reversed() where step(k) > 0 {
      speeds[i] = min(speeds[i], (speed * speed + 2 * acceleration * step(k)).squareRoot())
      speed = speeds[i]
    }
    var time = seconds[start]
    for (i, k) in pieces.enumerated() {
      if step(k) > 0 { time += step(k) / max(speeds[i], 0.3) }
      seconds[k] = time
    }
  }

  /// Adds points so that no piece from `start` on is longer than `longest` metres.
  mutating func densify(from start: Int, longest: Double) {
    var newPoints = Array(points[...start])
    var newMetres = Array(metres[...start])
    var newSeconds = Array(seconds[...start])
    for k in (start + 1)..<points.count {
      let step = metres[k] - metres[k - 1]
      let pieces = max(1, Int((step / longest).rounded(.up)))
      for i in 1..<pieces {
        let f = Double(i) / Double(pieces)
        let a = points[k - 1]
        let b = points[k]
        newPoints.append(
          LatLng(
            latitude: a.latitude + f * (b.latitude - a.latitude),
            longitude: a.longitude + f * (b.longitude - a.longitude)))
        newMetres.append(metres[k - 1] + f * step)
        newSeconds.append(seconds[k - 1] + f * (seconds[k] - seconds[k - 1]))
      }
      newPoints.append(points[k])
      newMetres.append(metres[k])
      newSeconds.append(seconds[k])
    }
    points = newPoints
    metres = newMetres
    seconds = newSeconds
  }

  public var duration: Double { seconds.last ?? 0 }
  public var distance: Double { metres.last ?? 0 }

  /// Where the car is `t` seconds after it set off.
  public func position(after t: Double) -> LatLng {
    guard let (k, f) = interval(at: t) else { return points.last! }
    let a = points[k]
    let b = points[k + 1]
    return LatLng(
      latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude))
  }

  /// How far along the car is after `t` seconds.
  public func distance(after t: Double) -> Double {
    guard let (k, f) = interval(at: t) else { return distance }
    return metres[k] + f * (metres[k + 1] - metres[k])
  }

  /// The rest of the shape from where the car is after `t` seconds.
  public func remainingPath(after t: Double) -> [LatLng] {
    guard let (k, _) = interval(at: t) else { return points.last.map { [$0] } ?? [] }
    return [position(after: t)] + points[(k + 1)...]
  }

  /// The car's speed (m/s) after `t` seconds: 0 before it sets off and once it has arrived.
  public func speed(after t: Double) -> Double {
    guard t >= 0, let (k, _) = interval(at: t) else { return 0 }
    let span = seconds[k + 1] - seconds[k]
    return span > 0 ? (metres[k + 1] - metres[k]) / span : 0
  }

  /// The car's heading after `t` seconds, degrees clockwise from north (the last one it drove
  /// once it has arrived).
  public func heading(after t: Double) -> Double? {
    guard points.count >= 2 else { return nil }
    let k = interval(at: max(0, t))?.0 ?? points.count - 2
    return points[k].bearing(to: points[k + 1])
  }

  /// The stretch of the shape the car is on at `t`, and how far along it.
  func interval(at t: Double) -> (Int, Double)? {
    // The last point reached by `t`: binary search, a provider asks every second of a drive.
    let k = seconds.partitioningIndex { $0 > t } - 1
    guard k >= 0, k + 1 < points.count else { return nil }
    let span = seconds[k + 1] - seconds[k]
    return (k, span > 0 ? (t - seconds[k]) / span : 0)
  }
}
