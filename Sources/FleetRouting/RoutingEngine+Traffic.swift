import Foundation
import Synchronization

/// Which speeds a query times its roads with.
public enum TrafficTiming: Sendable, Hashable {
  /// The fleet's traffic as last customized (`RoutingEngine.customize`): the default.
  case current
  /// Every road at its free-flow speed.
  case freeFlow
  /// The traffic usually seen at that time of the week (`TrafficProfiles`); current traffic
  /// when the time is within `RoutingEngine.currentTrafficHorizon` of now.
  case departing(Date)
}

/// Where the engine finds the traffic usually seen at a time of the week (learned by trip
/// progress and kept in the store).
public protocol TrafficProfiles: Sendable {
  /// The time-of-week bin `date` falls in: departures in one bin share one metric.
  func bin(of date: Date) -> Int
  /// The slowdowns learned for `bin` (free flow where nothing was learned).
  func slowdowns(bin: Int) -> RoadSlowdowns
}

/// The metrics queries read: the current traffic's, swapped whole so that a query never waits
/// for a customization, and those made on demand for free flow, exclusions and departures at
/// other times.
struct TrafficMetrics: Sendable {
  /// What a metric was customized from.
  enum Base: Hashable {
    case freeFlow
    case current(generation: Int)
    case departure(bin: Int)
  }

  var current: CustomizedCCH
  /// The current metric before the last customization, which the next one is made in
  /// (`CustomizedCCH.init(spare:)`): by then no query reads it.
  var spare: CustomizedCCH?
  var generation = 0
  var profiles: (any TrafficProfiles)?
  /// Metrics customized on demand, by base and excluded classes, with when they were made.
  var onDemand: [Key: (metric: CustomizedCCH, made: Date)] = [:]

  struct Key: Hashable {
    var base: Base
    var excluding: RoadClasses
  }

  /// Removes the on-demand metrics `drop` picks and returns them, so that the caller releases
  /// them after the lock: freeing a metric's arrays (as large as the current one's) inside it
  /// held back every query meanwhile.
  mutating func dropOnDemand(_ drop: (Key) -> Bool) -> [CustomizedCCH] {
    let keys = onDemand.keys.filter(drop)
    return keys.compactMap { onDemand.removeValue(forKey: $0)?.metric }
  }
}

extension RoutingEngine {
  /// How far ahead a departure is timed with current traffic rather than the usual traffic of
  /// its time of the week.
  public static let currentTrafficHorizon: TimeInterval = 15 * 60
  /// How long a departure's metric is kept before its bin is customized again from what has been
  /// learned since (one time-of-day bin).
  public static let departureMetricLifetime: TimeInterval = 15 * 60
  /// At most this many metrics customized on demand are kept (each is as large as the current one).
  static let onDemandMetricLimit = 2

  /// Customizes the hierarchy with `slowdowns` and makes it the current metric. Takes about as
  /// long as building the metric at load (see docs/benchmarks.md), or longer by its `pace`;
  /// queries meanwhile read the previous one, so call it off the threads that answer requests.
  /// The metric it replaces is kept, and the next customization is made in it.
  @discardableResult
  public func customize(_ slowdowns: RoadSlowdowns, pace: CustomizationPace? = nil) -> CustomizationRun {
    var spare = metrics.withLock { state in
      defer { state.spare = nil }
      return state.spare
    }
    var pacer = Pacer(pace)
    let metric = CustomizedCCH(
      cch: hierarchy, graph: turns, network: network, slowdowns: slowdowns, spare: &spare, pacer: &pacer)
    // The metrics dropped are released here, after the lock (`dropOnDemand`).
    _ = metrics.withLock { state in
      state.spare = state.current
      state.current = metric
      state.generation += 1
      let generation = state.generation
      return state.dropOnDemand { key in
        switch key.base {
        case .current(let made): return made != generation
        // Free flow is the current metric again while nothing is slowed.
        case .freeFlow: return slowdowns.isFreeFlow
        case .departure: return false
        }
      }
    }
    return pacer.finish()
  }

  /// The slowdowns the current metric was customized with.
  public var currentSlowdowns: RoadSlowdowns { metrics.withLock { $0.current.slowdowns } }

  /// Where departures at other times find their traffic.
  public func useTrafficProfiles(_ profiles: any TrafficProfiles) {
    // The metrics dropped are released here, after the lock (`dropOnDemand`).
    _ = metrics.withLock { state in
      state.profiles = profiles
      return state.dropOnDemand { key in
        if case .departure = key.base { return true }
        return false
      }
    }
  }

  /// The current metric.
  var customized: CustomizedCCH { metrics.withLock { $0.current } }

  /// The metric a query with `timing` and `excluding` reads. Only the current metric stays
  /// resident (on a metro area each is about 150 MB); free flow while traffic has slowed
  /// nothing is the current one, and every other metric is customized on first use and kept
  /// among the last `onDemandMetricLimit` made (a departure's for one bin's length).
  func metric(_ timing: TrafficTiming = .current, excluding: RoadClasses = [], now: Date = Date()) -> CustomizedCCH {
    let (key, known, profiles, current) = metrics.withLock {
      state -> (TrafficMetrics.Key, CustomizedCCH?, (any TrafficProfiles)?, RoadSlowdowns) in
      let key = TrafficMetrics.Key(base: self.base(timing, state, now: now), excluding: excluding)
      switch key.base {
      case .current where excluding.isEmpty: return (key, state.current, nil, state.current.slowdowns)
      case .freeFlow where excluding.isEmpty && state.current.slowdowns.isFreeFlow:
        return (key, state.current, nil, state.current.slowdowns)
      default: break
      }
      if let known = state.onDemand[key] {
        let expired: Bool
        if case .departure = key.base {
          expired = now.timeIntervalSince(known.made) > Self.departureMetricLifetime
        } else {
          expired = false
        }
        if !expired { return (key, known.metric, nil, state.current.slowdowns) }
      }
      return (key, nil, state.profiles, state.current.slowdowns)
    }
    if let known { return known }
    let slowdowns: RoadSlowdowns
    switch key.base {
    case .freeFlow: slowdowns = .freeFlow
    case .current: slowdowns = current
    case .departure(let bin):
      slowdowns = profiles?.slowdowns(bin: bin) ?? .freeFlow
      // A bin with nothing learned is free flow: that metric, shared with other such queries.
      if slowdowns.isFreeFlow { return metric(.freeFlow, excluding: excluding, now: now) }
    }
    let made = CustomizedCCH(
      cch: hierarchy, graph: turns, network: network, excluding: excluding, slowdowns: slowdowns)
    // The metrics dropped are released here, after the lock (`dropOnDemand`).
    _ = metrics.withLock { state in
      var dropped: [CustomizedCCH] = []
      if state.onDemand[key] == nil, state.onDemand.count >= Self.onDemandMetricLimit,
        let oldest = state.onDemand.min(by: { $0.value.made < $1.value.made })?.key
      {
        dropped += state.onDemand.removeValue(forKey: oldest).map { [$0.metric] } ?? []
      }
      dropped += state.onDemand.updateValue((made, now), forKey: key).map { [$0.metric] } ?? []
      return dropped
    }
    return made
  }

  func base(_ timing: TrafficTiming, _ state: TrafficMetrics, now: Date) -> TrafficMetrics.Base {
    switch timing {
    case .freeFlow: return .freeFlow
    case .current: return .current(generation: state.generation)
    case .departing(let date):
      guard let profiles = state.profiles, abs(date.timeIntervalSince(now)) > Self.currentTrafficHorizon else {
        return .current(generation: state.generation)
      }
      return .departure(bin: profiles.bin(of: date))
    }
  }
}
