import FleetCore
import FleetGeometry
import Foundation

/// A vehicle's recent positions in time order: what road snapping matches and learned traffic
/// reads. Positions may arrive late and out of order (`past_locations` after an outage); they
/// are put in their place, and a position no car could have reached from the one before it is
/// kept but marked implausible, so that it never moves the vehicle or its ETAs.
public struct VehicleTrace: Sendable, Hashable {
  public struct Fix: Sendable, Hashable {
    public var point: LatLng
    public var time: Date
    /// Reachable from the previous plausible fix at no more than `maximumSpeed`.
    public var isPlausible: Bool
  }

  public private(set) var fixes: [Fix] = []
  /// Fixes older than this before the newest are dropped.
  public let window: TimeInterval
  public let maximumCount: Int
  /// Metres per second no car exceeds (OSRM's map-matching bound: 180 km/h).
  public let maximumSpeed: Double
  /// GPS noise tolerated between two fixes taken at the same time or very close together.
  public static let positionTolerance = 30.0

  public init(window: TimeInterval = 300, maximumCount: Int = 120, maximumSpeed: Double = 50) {
    self.window = window
    self.maximumCount = maximumCount
    self.maximumSpeed = maximumSpeed
  }

  /// The newest position the vehicle can be trusted to have been at.
  public var latestPlausible: Fix? { fixes.last { $0.isPlausible } }

  /// Adds positions in any order; repeated ones (same time and place) are ignored. Returns how
  /// many were new. Only the new fixes and those after them are judged: a fix keeps its
  /// judgement when older ones leave the window, so a wild fix never becomes trusted just
  /// because the fixes that showed it wild are gone.
  @discardableResult
  public mutating func ingest(_ positions: [(point: LatLng, time: Date)]) -> Int {
    var added = 0
    // The first index whose judgement may have changed.
    var firstChanged = Int.max
    for position in positions {
      // Fixes are in time order and new ones are usually the newest: look from the end.
      var index = fixes.endIndex
      while index > 0, fixes[index - 1].time > position.time { index -= 1 }
      if index > 0, fixes[index - 1].time == position.time, fixes[index - 1].point == position.point { continue }
      fixes.insert(Fix(point: position.point, time: position.time, isPlausible: true), at: index)
      firstChanged = min(firstChanged, index)
      added += 1
    }
    guard added > 0 else { return 0 }
    var dropped = 0
    if let newest = fixes.last?.time {
      dropped = fixes.firstIndex { newest.timeIntervalSince($0.time) <= window } ?? fixes.count
    }
    dropped = max(dropped, fixes.count - maximumCount)
    if dropped > 0 { fixes.removeFirst(dropped) }
    judge(from: firstChanged - dropped)
    return added
  }

  /// Each fix from `start` on against the last plausible one before it: a single wild fix does
  /// not make the good ones after it look impossible. Two fixes in a row that agree with each
  /// other but not with the anchor outvote it: then the anchor was the wild one (or the vehicle
  /// was moved). The fixes before `start` keep their judgement.
  mutating func judge(from start: Int) {
    let start = min(max(0, start), fixes.count)
    var anchor = fixes[..<start].last { $0.isPlausible }
    for i in start..<fixes.count {
      guard let previous = anchor else {
        fixes[i].isPlausible = true
        anchor = fixes[i]
        continue
      }
      fixes[i].isPlausible = reachable(from: previous, fixes[i])
      if !fixes[i].isPlausible, i > 0, !fixes[i - 1].isPlausible, reachable(from: fixes[i - 1], fixes[i]) {
        fixes[i - 1].isPlausible = true
        fixes[i].isPlausible = true
      }
      if fixes[i].isPlausible { anchor = fixes[i] }
    }
  }

  func reachable(from a: Fix, _ b: Fix) -> Bool {
    a.point.distance(to: b.point) <= Self.positionTolerance + maximumSpeed * b.time.timeIntervalSince(a.time)
  }

}
