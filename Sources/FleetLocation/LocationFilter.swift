import FleetPositioning
import Foundation

/// What the device is doing, as Core Location's `activityType`: it sets how long and how
/// still the device must be before updates pause.
public enum ActivityType: String, Sendable, Hashable, Codable, CaseIterable {
  /// Driving: a car can stand at lights and in queues for minutes without having stopped.
  case automotive
  /// Walking, running, cycling: slower, so a smaller radius.
  case fitness
  case other

  /// The radius the device must stay within to count as stationary, metres.
  public var stationaryRadius: Double {
    switch self {
    case .automotive: 25
    case .fitness: 10
    case .other: 15
    }
  }

  /// How long it must stay there before updates pause.
  public var stationaryDuration: Duration {
    switch self {
    case .automotive: .seconds(180)
    case .fitness, .other: .seconds(120)
    }
  }
}

/// Which fixes reach the app. Every option saves battery and work downstream at the cost of
/// detail; the defaults deliver every fix.
public struct LocationOptions: Sendable, Hashable {
  /// Fixes whose accuracy radius is larger than this many metres are dropped; nil keeps all.
  /// A fix that states no accuracy (many GPX and NMEA tracks) is kept.
  public var desiredAccuracy: Double?
  /// A fix is delivered only once it is at least this many metres from the last delivered one
  /// (0: every fix).
  public var distanceFilter: Double
  public var activityType: ActivityType
  /// Stop delivering once the device has stayed within the activity's stationary radius for
  /// its stationary duration; resume with the first fix outside that radius.
  public var pausesWhenStationary: Bool

  public init(
    desiredAccuracy: Double? = nil, distanceFilter: Double = 0, activityType: ActivityType = .other,
    pausesWhenStationary: Bool = false
  ) {
    self.desiredAccuracy = desiredAccuracy
    self.distanceFilter = max(0, distanceFilter)
    self.activityType = activityType
    self.pausesWhenStationary = pausesWhenStationary
  }
}

/// Decides, fix by fix, what is delivered. A plain value: the service feeds it fixes in time
/// order and acts on what it returns.
public struct LocationFilter: Sendable {
  public enum Verdict: Sendable, Hashable {
    case deliver
    /// Worse than the desired accuracy.
    case dropInaccurate
    /// Closer than the distance filter to the last delivered fix.
    case dropTooClose
    /// Updates are paused: the device has not moved.
    case dropPaused
  }

  /// What the app hears besides the fix itself.
  public enum Transition: Sendable, Hashable {
    case paused
    case resumed
  }

  public var options: LocationOptions
  public private(set) var lastDelivered: LocationFix?
  public private(set) var isPaused = false
  /// Where and since when the device has stayed within the stationary radius.
  var stillSince: LocationFix?

  public init(options: LocationOptions) { self.options = options }

  public mutating func consider(_ fix: LocationFix) -> (verdict: Verdict, transition: Transition?) {
    if let desired = options.desiredAccuracy, let accuracy = fix.horizontalAccuracy, accuracy > desired {
      return (.dropInaccurate, nil)
    }
    var transition: Transition?
    if isPaused, !options.pausesWhenStationary {
      isPaused = false
      transition = .resumed
    }
    let activity = options.activityType
    if let anchor = stillSince,
      anchor.coordinate.distance(to: fix.coordinate) <= Self.stillRadius(activity, anchor, fix)
    {
      let still = Duration.seconds(fix.time.timeIntervalSince(anchor.time))
      if options.pausesWhenStationary, !isPaused, still >= activity.stationaryDuration {
        isPaused = true
        return (.dropPaused, .paused)
      }
    } else {
      stillSince = fix
      if isPaused {
        isPaused = false
        transition = .resumed
      }
    }
    if isPaused { return (.dropPaused, nil) }
    if transition == nil, let last = lastDelivered,
      last.coordinate.distance(to: fix.coordinate) < options.distanceFilter
    {
      return (.dropTooClose, nil)
    }
    lastDelivered = fix
    return (.deliver, transition)
  }

  /// Two fixes closer than their accuracies allow to tell apart show no movement, however
  /// small the activity's radius.
  static func stillRadius(_ activity: ActivityType, _ anchor: LocationFix, _ fix: LocationFix) -> Double {
    max(activity.stationaryRadius, (anchor.horizontalAccuracy ?? 0) + (fix.horizontalAccuracy ?? 0))
  }

  /// Forgets the delivered and stationary history (a new start of updates).
  public mutating func reset() {
    lastDelivered = nil
    stillSince = nil
    isPaused = false
  }
}
