/// What `fleet simulate` and `fleetd demo` both take — the drivers' report interval, the
/// simulated clock and the demand — checked by one set of rules, so that each flag means the
/// same in both commands (only their defaults differ).
public struct CityRunSettings: Sendable {
  /// Seconds between a vehicle's location updates; nil for the command's default.
  public var interval: Double?
  public var speedup: Double
  public var ridersPerMinute: Double
  public var profile: String
  public var clock: String

  public init(interval: Double?, speedup: Double, ridersPerMinute: Double, profile: String, clock: String) {
    self.interval = interval
    self.speedup = speedup
    self.ridersPerMinute = ridersPerMinute
    self.profile = profile
    self.clock = clock
  }

  /// The first flag that breaks its rule, as a message naming it; nil when all hold.
  public var problem: String? {
    if let interval, !(1...60).contains(interval) { return "--interval must be between 1 and 60 seconds" }
    guard speedup > 0, speedup <= 100 else { return "--speedup must be above 0 and at most 100" }
    guard ridersPerMinute >= 0, ridersPerMinute <= 60_000 else {
      return "--riders-per-minute must be between 0 and 60000"
    }
    guard startOfDay != nil else { return "--clock must be HH:MM (00:00-23:59), got '\(clock)'" }
    do {
      _ = try DemandProfile.named(profile)
    } catch {
      return "--profile: \(error.message)"
    }
    return nil
  }

  /// `--clock` as seconds after midnight.
  public var startOfDay: Double? { DemandProfile.secondOfDay(clock) }
}
