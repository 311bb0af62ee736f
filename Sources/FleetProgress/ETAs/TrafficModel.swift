import FleetCore
import FleetRouting
import Foundation
import Synchronization

/// Road speeds learned from the fleet's own traces, per directed road edge. Each observation is
/// the speed a vehicle actually drove over a stretch of road between two positions; the learned
/// speed is a moving average of them, and its weight halves every `halfLife` without news, so
/// that a road nobody has driven lately returns to its free-flow speed.
public final class TrafficModel: Sendable {
  struct Learned: Sendable {
    /// Metres per second.
    var speed: Double
    var time: Date
  }

  /// How fast an observation's weight decays toward free flow.
  public let halfLife: TimeInterval
  /// Weight of a new observation against what was learned before (after that has decayed).
  public let learningRate: Double
  let speeds = Mutex<[Int64: Learned]>([:])

  public init(halfLife: TimeInterval = 600, learningRate: Double = 0.5) {
    self.halfLife = halfLife
    self.learningRate = learningRate
  }

  static func key(_ span: RouteSpan) -> Int64 { Int64(span.edge) * 2 + (span.reversed ? 1 : 0) }

  /// Records that `metres` of each span were driven, all of them together in `seconds`, ending at
  /// `time`. The stretch's slowdown against free flow is shared by its spans: each is learned
  /// as that much slower than its own free-flow speed (never faster than it).
  public func observe(_ driven: [(span: RouteSpan, metres: Double)], seconds: Double, at time: Date) {
    let freeFlowSeconds = driven.reduce(0) {
      $0 + ($1.span.distance > 0 ? $1.span.duration * $1.metres / $1.span.distance : 0)
    }
    guard seconds > 0, freeFlowSeconds > 0 else { return }
    let slowdown = max(1, seconds / freeFlowSeconds)
    speeds.withLock { speeds in
      for (span, _) in driven where span.distance > 0 && span.duration > 0 {
        let key = Self.key(span)
        let freeFlow = span.distance / span.duration
        let speed = freeFlow / slowdown
        let previous =
          speeds[key].map { old in
            let weight = self.weight(age: time.timeIntervalSince(old.time))
            return weight * old.speed + (1 - weight) * freeFlow
          } ?? freeFlow
        speeds[key] = Learned(
          speed: learningRate * speed + (1 - learningRate) * previous, time: max(time, speeds[key]?.time ?? time))
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
      guard span.distance > 0, span.duration > 0 else { return (0, .normal) }
      let freeFlow = span.distance / span.duration
      guard let learned, learned.speed > 0 else { return (span.duration * metres / span.distance, .normal) }
      // The learned speed, decayed toward free flow by its age.
      let weight = weight(age: now.timeIntervalSince(learned.time))
      let secondsPerMetre = weight / max(learned.speed, 0.5) + (1 - weight) / freeFlow
      let ratio = 1 / (freeFlow * secondsPerMetre)
      let speed: TrafficSpeed = ratio >= Self.slowBelow ? .normal : ratio >= Self.jamBelow ? .slow : .trafficJam
      return (metres * secondsPerMetre, speed)
    }
  }

  /// Below this share of free-flow speed a road is SLOW, below the next a TRAFFIC_JAM.
  public static let slowBelow = 0.65
  public static let jamBelow = 0.3

  /// Roads with a learned speed, for metrics.
  public var learnedRoads: Int { speeds.withLock { $0.count } }
}
