import FleetCore
import FleetRouting
import Foundation
import Synchronization

/// Road speeds learned from the fleet's own traces, per directed road edge. Each observation is
/// the speed a vehicle actually drove over a stretch of road between two positions; the learned
/// speed is a moving average of them, and its weight halves every `halfLife` without news, so
/// that a road nobody has driven lately returns to its free-flow speed. What is learned now
/// customizes the routing hierarchy (`slowdowns`), and each observation also teaches the usual
/// traffic of its time of the week (`weekly`).
public final class TrafficModel: Sendable {
  struct Learned: Sendable {
    /// Metres per second.
    var speed: Double
    var time: Date
    /// The road's free-flow speed, metres per second.
    var freeFlow: Double
  }

  /// How fast an observation's weight decays toward free flow.
  public let halfLife: TimeInterval
  /// Weight of a new observation against what was learned before (after that has decayed).
  public let learningRate: Double
  let speeds = Mutex<[Int64: Learned]>([:])
  /// The usual traffic by time of the week, when kept.
  public let weekly: WeeklyTraffic?

  public init(halfLife: TimeInterval = 600, learningRate: Double = 0.5, weekly: WeeklyTraffic? = nil) {
    self.halfLife = halfLife
    self.learningRate = learningRate
    self.weekly = weekly
  }

  static func key(_ span: RouteSpan) -> Int64 { Int64(span.edge) * 2 + (span.reversed ? 1 : 0) }

  /// Records that `metres` of each span were driven, all of them together in `seconds`, ending at
  /// `time`. The stretch's slowdown against free flow is shared by its spans: each is learned
  /// as that much slower than its own free-flow speed (never faster than it).
  public func observe(_ driven: [(span: RouteSpan, metres: Double)], seconds: Double, at time: Date) {
    let freeFlowSeconds = driven.reduce(0) {
      $0 + ($1.span.distance > 0 ? $1.span.freeFlowDuration * $1.metres / $1.span.distance : 0)
    }
    guard seconds > 0, freeFlowSeconds > 0 else { return }
    let slowdown = max(1, seconds / freeFlowSeconds)
    weekly?.record(driven.compactMap { $0.span.freeFlowDuration > 0 ? Self.key($0.span) : nil }, slowdown, at: time)
    speeds.withLock { speeds in
      for (span, _) in driven where span.distance > 0 && span.freeFlowDuration > 0 {
        let key = Self.key(span)
        let freeFlow = span.distance / span.freeFlowDuration
        let speed = freeFlow / slowdown
        let previous =
          speeds[key].map { old in
            let weight = self.weight(age: time.timeIntervalSince(old.time))
            return weight * old.speed + (1 - weight) * freeFlow
          } ?? freeFlow
        speeds[key] = Learned(
          speed: learningRate * speed + (1 - learningRate) * previous, time: max(time, speeds[key]?.time ?? time),
          freeFlow: freeFlow)
      }
    }
  }

  /// How much of an observation `age` seconds old still counts.
  func weight(age: TimeInterval) -> Double { age <= 0 ? 1 : pow(0.5, age / halfLife) }

  /// The seconds to drive `metres` of each span now (learned speed, decayed toward free flow),
  /// and each span's traffic class. One short lock for a whole leg, which only reads what was
  /// learned: this runs on every update, beside `observe` on other threads.
  public func estimate(_ stretch: [(span: RouteSpan, metres: Double)], at now: Date) -> [(
    seconds: Double, speed: TrafficSpeed
  )] {
    let learned = speeds.withLock { speeds in stretch.map { speeds[Self.key($0.span)] } }
    return zip(stretch, learned).map { part, learned in
      let (span, metres) = part
      guard span.distance > 0, span.freeFlowDuration > 0 else { return (0, .normal) }
      let freeFlow = span.distance / span.freeFlowDuration
      guard let learned, learned.speed > 0 else { return (span.freeFlowDuration * metres / span.distance, .normal) }
      let secondsPerMetre = secondsPerMetre(learned, freeFlow: freeFlow, at: now)
      let ratio = 1 / (freeFlow * secondsPerMetre)
      let speed: TrafficSpeed = ratio >= Self.slowBelow ? .normal : ratio >= Self.jamBelow ? .slow : .trafficJam
      return (metres * secondsPerMetre, speed)
    }
  }

  /// The learned speed's seconds per metre, decayed toward free flow by its age.
  func secondsPerMetre(_ learned: Learned, freeFlow: Double, at now: Date) -> Double {
    let weight = weight(age: now.timeIntervalSince(learned.time))
    return weight / max(learned.speed, 0.5) + (1 - weight) / freeFlow
  }

  /// Every directed road's slowdown now, for customizing the routing hierarchy: `roads` factors
  /// (`TurnGraph.directed` order), 1 where nothing was learned or it has decayed to within
  /// `RoadSlowdowns`' resolution of free flow. Free flow itself when no road is slowed.
  public func slowdowns(at now: Date, roads: Int) -> RoadSlowdowns {
    let learned = speeds.withLock { $0 }
    return RoadSlowdowns(
      roads: roads,
      slowed: learned.lazy.filter { $0.value.freeFlow > 0 }.map { key, learned in
        (Int(key), Float(learned.freeFlow * self.secondsPerMetre(learned, freeFlow: learned.freeFlow, at: now)))
      })
  }

  /// Below this share of free-flow speed a road is SLOW, below the next a TRAFFIC_JAM.
  public static let slowBelow = 0.65
  public static let jamBelow = 0.3

  /// Roads with a learned speed, for metrics.
  public var learnedRoads: Int { speeds.withLock { $0.count } }
}
