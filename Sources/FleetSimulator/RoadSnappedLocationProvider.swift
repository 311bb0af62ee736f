import FleetGeometry
import FleetPositioning
import FleetRouting
import Foundation

/// Puts another provider's fixes on the road: each fix is map-matched together with the few
/// before it (so that it lands on the road the car is really on, not merely the nearest one),
/// else moved to the nearest road within reach; a fix with no road near it passes unchanged.
/// A snapped fix keeps the measured position as `rawCoordinate`, as Fleet Engine's
/// road-snapped locations carry `raw_location`.
public struct RoadSnappedLocationProvider: LocationProvider {
  public let base: any LocationProvider
  public let routing: RoutingEngine
  /// Fixes matched together.
  public var window: Int
  /// The farthest a fix is moved, metres, unless its accuracy says it may be farther off
  /// (then twice its accuracy).
  public var maximumSnapDistance: Double

  public init(base: any LocationProvider, routing: RoutingEngine, window: Int = 5, maximumSnapDistance: Double = 30) {
    self.base = base
    self.routing = routing
    self.window = max(2, window)
    self.maximumSnapDistance = maximumSnapDistance
  }

  public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    // Pulled one fix at a time: the source is read only as fast as the consumer reads, so no
    // fix is dropped or snapped for nobody.
    let reader = SnappingReader(
      upstream: base.fixes().makeAsyncIterator(),
      snapper: Snapper(routing: routing, window: window, maximumSnapDistance: maximumSnapDistance))
    return AsyncThrowingStream { try await reader.next() }
  }
}

/// The source's iterator and the snapper of one stream. Unchecked: only the stream's single
/// consumer calls `next`, one call at a time (AsyncThrowingStream's unfolding contract), so its
/// state is never touched by two tasks at once.
final class SnappingReader: @unchecked Sendable {
  var upstream: AsyncThrowingStream<LocationFix, any Error>.Iterator
  var snapper: Snapper

  init(upstream: AsyncThrowingStream<LocationFix, any Error>.Iterator, snapper: Snapper) {
    self.upstream = upstream
    self.snapper = snapper
  }

  func next() async throws -> LocationFix? {
    guard let fix = try await upstream.next() else { return nil }
    return snapper.snap(fix)
  }
}

/// The snapping itself, over a window of recent fixes.
public struct Snapper: Sendable {
  let routing: RoutingEngine
  let window: Int
  let maximumSnapDistance: Double
  var recent: [LocationFix] = []

  public init(routing: RoutingEngine, window: Int = 5, maximumSnapDistance: Double = 30) {
    self.routing = routing
    self.window = window
    self.maximumSnapDistance = maximumSnapDistance
  }

  public mutating func snap(_ fix: LocationFix) -> LocationFix {
    if fix.isRoadSnapped { return fix }
    // A long silence breaks the trace: an old fix says nothing about the road now.
    if let last = recent.last, fix.time.timeIntervalSince(last.time) > 60 || fix.time < last.time { recent.removeAll() }
    recent.append(fix)
    if recent.count > window { recent.removeFirst(recent.count - window) }
    let reach = max(maximumSnapDistance, 2 * (fix.horizontalAccuracy ?? 0))
    var snapped: LatLng?
    if recent.count >= 2,
      let matched = try? routing.match(recent.map(\.coordinate), accuracies: recent.map(\.horizontalAccuracy)),
      let last = matched.tracepoints.last, let point = last, point.snapped.distance <= reach
    {
      snapped = point.snapped.location
    } else if let nearest = try? routing.nearest(fix.coordinate, radius: reach).first {
      snapped = nearest.location
    }
    guard let snapped else { return fix }
    var result = fix
    result.rawCoordinate = fix.coordinate
    result.rawSensor = fix.sensor
    result.coordinate = snapped
    result.sensor = .roadSnapped
    return result
  }
}
