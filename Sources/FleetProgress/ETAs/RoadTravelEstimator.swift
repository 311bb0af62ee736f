import FleetCore
import FleetGeometry
import FleetRouting
import Foundation
import Synchronization

/// Drives for vehicle search, dispatch and quotes on the road graph: many vehicles to one pickup
/// in one query, the legs of a planned route, and matrices for fitting a shared ride between
/// other riders' stops. Every drive is timed with the routing metric: the fleet's traffic as
/// last customized (fleetd re-customizes it with what trip progress learns every
/// `--traffic-interval`), or for a later departure the usual traffic of its time of the week.
/// A drive is not re-timed along its roads with what was learned since: that cost a search a
/// fifth of its time for news at most one interval old, and a trip in progress is re-timed on
/// every report anyway (`ProgressEngine`).
public final class RoadTravelEstimator: TravelEstimator {
  public let routing: RoutingEngine
  /// Off: free-flow estimates only.
  public let learnsTraffic: Bool
  /// Road positions by point: a vehicle searched again from where it stands costs no
  /// nearest-road search.
  let anchors: Mutex<AnchorTable>

  /// `anchorCacheSlots` bounds the cache; at that size it is emptied when 70 % full.
  public init(routing: RoutingEngine, learnsTraffic: Bool = true, anchorCacheSlots: Int = 1 << 18) {
    self.routing = routing
    self.learnsTraffic = learnsTraffic
    anchors = Mutex(AnchorTable(slots: anchorCacheSlots))
  }

  public var followsRoads: Bool { true }

  func anchor(_ point: LatLng) -> RoadAnchor? { anchors([point])[0] }

  public func fan(to target: LatLng, from origins: [LatLng], now: Date) -> any TravelFan {
    guard let end = anchor(target) else { return Unreachable() }
    return Fan(fan: routing.fan(from: anchors(origins), to: end, traffic: current))
  }

  /// Many points' anchors with one look at the cache; those not in it are found outside the lock.
  func anchors(_ points: [LatLng]) -> [RoadAnchor?] {
    var found = anchors.withLock { table in points.map { table.find($0) } }
    var missing: [(Int, RoadAnchor)] = []
    for (i, point) in points.enumerated() where found[i] == nil {
      guard let anchor = try? routing.anchor(point) else { continue }
      found[i] = anchor
      missing.append((i, anchor))
    }
    if !missing.isEmpty {
      anchors.withLock { table in
        for (i, anchor) in missing { table.insert(points[i], anchor) }
      }
    }
    return found
  }

  /// `now` may be a later departure (a quote's pickup time): the route is then chosen and timed
  /// with the usual traffic of that time of the week (`TrafficTiming.departing`). One drive is a
  /// one-to-one query that sums its seconds and metres without unpacking its path; through stops,
  /// the legs are a route's, which passes each stop without turning back at it.
  public func legs(through points: [LatLng], now: Date) -> [TravelEstimate]? {
    guard points.count >= 2 else { return nil }
    if points.count == 2 {
      let ends = anchors(points)
      guard let from = ends[0], let to = ends[1],
        let drive = routing.fan(from: [from], to: to, traffic: timing(now)).estimate(0)
      else { return nil }
      return [TravelEstimate(seconds: drive.duration, metres: drive.distance)]
    }
    guard let legs = try? routing.drivenLegs(points, traffic: timing(now)) else { return nil }
    return legs.map { TravelEstimate(seconds: $0.duration, metres: $0.distance) }
  }

  public func drive(from: LatLng, to: LatLng, now: Date) -> (estimate: TravelEstimate, path: [LatLng])? {
    guard let route = try? routing.routes([from, to], options: RouteOptions(traffic: timing(now))).first,
      let leg = route.legs.first
    else { return nil }
    return (TravelEstimate(seconds: leg.duration, metres: leg.distance), route.geometry)
  }

  public func matrix(_ points: [LatLng]) -> [[TravelEstimate?]] { matrix(from: points, to: points) }

  public func matrix(from sources: [LatLng], to targets: [LatLng]) -> [[TravelEstimate?]] {
    guard let table = try? routing.matrix(sources: sources, destinations: targets, traffic: current) else {
      return sources.map { _ in targets.map { _ in nil } }
    }
    return zip(table.durations, table.distances).map { durations, distances in
      zip(durations, distances).map { seconds, metres in
        seconds.flatMap { s in metres.map { TravelEstimate(seconds: s, metres: $0) } }
      }
    }
  }

  /// Current traffic, or the usual traffic of a departure's time when `time` is not now; free
  /// flow when traffic is not learned.
  func timing(_ time: Date) -> TrafficTiming { learnsTraffic ? .departing(time) : .freeFlow }

  /// Current traffic; free flow when traffic is not learned.
  var current: TrafficTiming { learnsTraffic ? .current : .freeFlow }

  /// One many-to-one query.
  struct Fan: TravelFan {
    let fan: RoadFan

    var targetOffRoadMetres: Double { fan.target.offRoadMetres }

    func drive(_ origin: Int) -> TravelEstimate? {
      fan.estimate(origin).map { TravelEstimate(seconds: $0.duration, metres: $0.distance) }
    }
  }

  /// The target is off the network: nothing reaches it.
  struct Unreachable: TravelFan {
    var targetOffRoadMetres: Double { 0 }
    func drive(_ origin: Int) -> TravelEstimate? { nil }
  }
}

/// Anchors by point, with open addressing on the point's coordinates to the centimetre: for
/// thousands of lookups per search, a generic hash costs more than the rest of a lookup. It
/// grows with the fleet up to `maximumSlots`, and is emptied when that fills.
struct AnchorTable: Sendable {
  var keys: [UInt64]
  var values: [RoadAnchor?]
  var count = 0
  let maximumSlots: Int

  init(slots: Int) {
    maximumSlots = max(1024, slots)
    keys = [UInt64](repeating: 0, count: 1024)
    values = [RoadAnchor?](repeating: nil, count: 1024)
  }

  static func key(_ point: LatLng) -> UInt64 {
    guard point.latitude.isFinite, point.longitude.isFinite else { return 0 }
    let latitude = UInt32(bitPattern: Int32((point.latitude * 1e7).rounded()))
    let longitude = UInt32(bitPattern: Int32((point.longitude * 1e7).rounded()))
    return UInt64(latitude) << 32 | UInt64(longitude)
  }

  func slot(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - keys.count.trailingZeroBitCount))
  }

  func find(_ point: LatLng) -> RoadAnchor? {
    let key = Self.key(point)
    var i = slot(key)
    while values[i] != nil {
      if keys[i] == key { return values[i] }
      i = (i + 1) & (keys.count - 1)
    }
    return nil
  }

  mutating func insert(_ point: LatLng, _ anchor: RoadAnchor) {
    if count * 10 >= keys.count * 7 {
      if keys.count < maximumSlots {
        grow()
      } else {
        for i in values.indices { values[i] = nil }
        count = 0
      }
    }
    place(Self.key(point), anchor)
  }

  mutating func place(_ key: UInt64, _ anchor: RoadAnchor) {
    var i = slot(key)
    while values[i] != nil {
      if keys[i] == key {
        values[i] = anchor
        return
      }
      i = (i + 1) & (keys.count - 1)
    }
    keys[i] = key
    values[i] = anchor
    count += 1
  }

  mutating func grow() {
    let old = zip(keys, values).compactMap { key, value in value.map { (key, $0) } }
    keys = [UInt64](repeating: 0, count: keys.count * 2)
    values = [RoadAnchor?](repeating: nil, count: keys.count)
    count = 0
    for (key, value) in old { place(key, value) }
  }
}
