import FleetCore
import FleetRouting
import Foundation
import Synchronization

/// Drives for vehicle search and dispatch on the road graph, at the speeds trip progress has
/// learned from the fleet (`TrafficModel`): many vehicles to one pickup in one query, the legs
/// of a planned route, and matrices for fitting a shared ride between other riders' stops.
public final class RoadTravelEstimator: TravelEstimator {
  public let routing: RoutingEngine
  public let traffic: TrafficModel
  /// Off: free-flow estimates only.
  public let learnsTraffic: Bool
  /// Road positions by point: a vehicle searched again from where it stands costs no
  /// nearest-road search. Cleared when it grows past `anchorCacheSize`.
  let anchors = Mutex<[LatLng: RoadAnchor]>([:])
  let anchorCacheSize: Int

  public init(routing: RoutingEngine, traffic: TrafficModel, learnsTraffic: Bool = true, anchorCacheSize: Int = 200_000)
  {
    self.routing = routing
    self.traffic = traffic
    self.learnsTraffic = learnsTraffic
    self.anchorCacheSize = anchorCacheSize
  }

  public var followsRoads: Bool { true }

  func anchor(_ point: LatLng) -> RoadAnchor? {
    if let cached = anchors.withLock({ $0[point] }) { return cached }
    guard let anchor = try? routing.anchor(point) else { return nil }
    anchors.withLock { cache in
      if cache.count >= anchorCacheSize { cache.removeAll(keepingCapacity: true) }
      cache[point] = anchor
    }
    return anchor
  }

  public func fan(to target: LatLng, from origins: [LatLng], now: Date) -> any TravelFan {
    guard let end = anchor(target) else { return Unreachable() }
    return TrafficFan(fan: routing.fan(from: anchors(origins), to: end), estimator: self, now: now)
  }

  /// Many points' anchors with one look at the cache; those not in it are found outside the lock.
  func anchors(_ points: [LatLng]) -> [RoadAnchor?] {
    var found = anchors.withLock { cache in points.map { cache[$0] } }
    var missing: [(Int, RoadAnchor)] = []
    for (i, point) in points.enumerated() where found[i] == nil {
      guard let anchor = try? routing.anchor(point) else { continue }
      found[i] = anchor
      missing.append((i, anchor))
    }
    if !missing.isEmpty {
      anchors.withLock { cache in
        if cache.count + missing.count > anchorCacheSize { cache.removeAll(keepingCapacity: true) }
        for (i, anchor) in missing { cache[points[i]] = anchor }
      }
    }
    return found
  }

  public func legs(through points: [LatLng], now: Date) -> [TravelEstimate]? {
    guard points.count >= 2, let route = try? routing.route(points) else { return nil }
    return route.legs.map { withTraffic($0, now: now) }
  }

  public func matrix(_ points: [LatLng]) -> [[TravelEstimate?]] { matrix(from: points, to: points) }

  public func matrix(from sources: [LatLng], to targets: [LatLng]) -> [[TravelEstimate?]] {
    guard let table = try? routing.matrix(sources: sources, destinations: targets) else {
      return sources.map { _ in targets.map { _ in nil } }
    }
    return zip(table.durations, table.distances).map { durations, distances in
      zip(durations, distances).map { seconds, metres in
        seconds.flatMap { s in metres.map { TravelEstimate(seconds: s, metres: $0) } }
      }
    }
  }

  /// A leg's time at the learned speeds of the road edges it drives.
  func withTraffic(_ leg: RouteLeg, now: Date) -> TravelEstimate {
    guard learnsTraffic, !leg.spans.isEmpty else { return TravelEstimate(seconds: leg.duration, metres: leg.distance) }
    let spanSeconds = leg.spans.reduce(0) { $0 + $1.duration }
    let learned = traffic.estimate(leg.spans.map { ($0, $0.distance) }, at: now).reduce(0) { $0 + $1.seconds }
    // Turn costs are spread over the spans (see RouteLeg), so learned seconds include them;
    // a leg on no road at all keeps its own duration.
    return TravelEstimate(seconds: spanSeconds > 0 ? max(learned, leg.duration) : leg.duration, metres: leg.distance)
  }

  /// One many-to-one query; traffic is added for the drives asked for, along their paths.
  final class TrafficFan: TravelFan {
    let fan: RoadFan
    let estimator: RoadTravelEstimator
    let now: Date
    var refined: [Int: TravelEstimate?] = [:]

    init(fan: RoadFan, estimator: RoadTravelEstimator, now: Date) {
      self.fan = fan
      self.estimator = estimator
      self.now = now
    }

    var targetOffRoadMetres: Double { fan.target.offRoadMetres }

    func freeFlow(_ origin: Int) -> TravelEstimate? {
      fan.estimate(origin).map { TravelEstimate(seconds: $0.duration, metres: $0.distance) }
    }

    func withTraffic(_ origin: Int) -> TravelEstimate? {
      if let known = refined[origin] { return known }
      guard let free = freeFlow(origin) else { return nil }
      var estimate = free
      if estimator.learnsTraffic, let leg = fan.leg(origin) {
        estimate = estimator.withTraffic(leg, now: now)
        // Never faster than free flow: what the search's bounds rely on.
        estimate.seconds = max(estimate.seconds, free.seconds)
        estimate.metres = free.metres
      }
      refined[origin] = estimate
      return estimate
    }
  }

  /// The target is off the network: nothing reaches it.
  struct Unreachable: TravelFan {
    var targetOffRoadMetres: Double { 0 }
    func freeFlow(_ origin: Int) -> TravelEstimate? { nil }
    func withTraffic(_ origin: Int) -> TravelEstimate? { nil }
  }
}
