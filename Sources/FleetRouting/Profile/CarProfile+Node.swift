import Foundation

/// Which way along its road a sign at a node faces (`direction`, `traffic_signals:direction`).
public enum ObstacleDirection: Sendable, Hashable {
  /// Untagged: every arrival, or as the profile infers.
  case any
  /// Arrivals driving the way's node order.
  case forward
  /// Arrivals driving against it.
  case backward
}

/// What a node means for a car.
public struct NodeAttributes: Sendable, Hashable {
  /// Cars cannot pass (bollard, block, …).
  public var blocks = false
  /// What costs time to pass here.
  public var obstacles: [NodeObstacle] = []

  public init() {}
  public var isPlain: Bool { !blocks && obstacles.isEmpty }
}

/// One thing at a node that costs time to pass, and which arrivals it applies to.
public struct NodeObstacle: Sendable, Hashable {
  public var kind: Obstacle.Kind
  public var seconds: Double
  public var direction: ObstacleDirection
}

extension CarProfile {
  /// A node's barrier and obstacles, as OSRM's car profile reads them (`process_node`).
  public func node(_ tags: OSMTags) -> NodeAttributes {
    var result = NodeAttributes()
    if tags.isEmpty { return result }
    if let access = accessHierarchy.lazy.compactMap({ tags[$0] }).first.map(resolveAccess) {
      if accessDenied.contains(access) && !accessRestricted.contains(access) { result.blocks = true }
    } else if let barrier = tags["barrier"] {
      let tooLow =
        barrier == "height_restrictor"
        && (tags["maxheight"].flatMap(TagValues.height).map { $0 < vehicleHeight } ?? false)
      let risingBollard = tags["bollard"] == "rising"
      let flatKerb = tags["kerb"] == "lowered" || tags["kerb"] == "flush"
      let crossingKerb = barrier == "kerb" && tags["highway"] == "crossing"
      let audibleFence = barrier == "fence" && (tags["sensory"] == "audible" || tags["sensory"] == "audio")
      let penalty = barrierPenalties[barrier]
      if (!passableBarriers.contains(barrier) && !risingBollard && !flatKerb && !crossingKerb && !audibleFence
        && penalty == nil) || tooLow
      {
        result.blocks = true
      }
      if let penalty { result.obstacles.append(NodeObstacle(kind: .gate, seconds: penalty, direction: .any)) }
    }
    let direction = { (value: String?) -> ObstacleDirection in
      switch value {
      case "forward": .forward
      case "backward": .backward
      default: .any
      }
    }
    switch tags["highway"] {
    case "traffic_signals":
      result.obstacles.append(
        NodeObstacle(
          kind: .trafficSignals, seconds: trafficSignalPenalty,
          direction: direction(tags["traffic_signals:direction"] ?? tags["direction"])))
    case "stop":
      result.obstacles.append(
        NodeObstacle(
          kind: tags["stop"] == "minor" ? .minorStop : .stop, seconds: stopPenalty,
          direction: direction(tags["direction"])))
    case "give_way":
      result.obstacles.append(
        NodeObstacle(kind: .giveWay, seconds: giveWayPenalty, direction: direction(tags["direction"])))
    default: break
    }
    return result
  }

  /// Seconds for a turn of `angle` degrees (positive right, negative left, ±180 a U-turn) at a
  /// junction of `roads` roads, as OSRM's car profile computes it (`process_turn`). A change of
  /// mode (boarding a ferry) costs a turn even where nothing else meets.
  public func turnCost(
    angle: Double, roads: Int, isUTurn: Bool, involvesRoundabout: Bool = false, leftHandTraffic: Bool = false,
    changesMode: Bool = false
  ) -> Double {
    guard roads > 2 || isUTurn || changesMode else { return 0 }
    // Where traffic keeps left, turns mirror: the bias favours left turns instead.
    let bias = leftHandTraffic ? 1 / turnBias : turnBias
    var seconds: Double
    if angle >= 0 {
      seconds = turnPenalty / (1 + exp(-((13 / bias) * angle / 180 - 6.5 * bias)))
    } else {
      seconds = turnPenalty / (1 + exp(-((13 * bias) * -angle / 180 - 6.5 / bias)))
    }
    // A turn across oncoming lanes: left where traffic keeps right, right where it keeps left.
    let crossesOncoming = leftHandTraffic ? angle > 0 : angle < 0
    if crossesOncoming && !isUTurn && roads > 2 && !involvesRoundabout {
      let sharpness = 1 / (1 + exp(-(13 * abs(angle) / 180 - 3.25)))
      seconds += oncomingTurnPenalty * sharpness
    }
    if isUTurn { seconds += uTurnPenalty }
    return seconds
  }
}
