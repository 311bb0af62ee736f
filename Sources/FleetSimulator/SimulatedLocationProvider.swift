import FleetGeometry
import FleetPositioning
import FleetRouting
import Foundation
import Synchronization

/// A simulated car: it stands still until it is given a drive, drives it at the drive's speeds
/// (road speeds, starting and stopping smoothly when the drive was built with an
/// acceleration), `speedup` times faster than real time, and waits where the drive ends. Fixes
/// come every `interval` of real time, stamped with the real time, optionally with GPS noise.
public final class SimulatedLocationProvider: LocationProvider {
  public struct Configuration: Sendable {
    /// Real time between fixes.
    public var interval: Duration = .seconds(1)
    /// Simulated seconds per real second.
    public var speedup: Double = 1
    /// The accuracy each fix reports, metres.
    public var accuracy: Double = 5
    /// Standard deviation of the noise added to each position, metres (0: exact positions).
    public var noise: Double = 0
    public var seed: UInt64 = 1

    public init(
      interval: Duration = .seconds(1), speedup: Double = 1, accuracy: Double = 5, noise: Double = 0, seed: UInt64 = 1
    ) {
      self.interval = interval
      self.speedup = speedup
      self.accuracy = accuracy
      self.noise = noise
      self.seed = seed
    }
  }

  struct State {
    var drive: SimulatedDrive?
    /// Where the car stands when it is not driving.
    var parked: LatLng
    var lastHeading: Double?
    /// Simulated seconds since the provider was made, when the current drive began.
    var driveStart: Double = 0
    var random: SplitMix64
  }

  /// A simulated driver's car: a fix every simulated second, at most 20 a real second.
  static func driving(from start: LatLng, speedup: Double) -> SimulatedLocationProvider {
    SimulatedLocationProvider(
      start: start,
      configuration: .init(interval: .milliseconds(max(50, Int(1000 / max(speedup, 1)))), speedup: speedup))
  }

  public let configuration: Configuration
  let clock: PositioningClock
  let createdAt: Date
  let state: Mutex<State>

  public init(start: LatLng, configuration: Configuration = Configuration(), clock: PositioningClock = .system) {
    self.configuration = configuration
    self.clock = clock
    createdAt = clock.now()
    state = Mutex(State(parked: start, random: SplitMix64(seed: configuration.seed)))
  }

  /// Simulated seconds since the provider was made.
  var elapsed: Double { clock.now().timeIntervalSince(createdAt) * configuration.speedup }

  /// Starts driving `drive` now, from wherever it starts (the car is put there).
  public func drive(_ drive: SimulatedDrive) {
    let now = elapsed
    state.withLock { s in
      s.drive = drive
      s.driveStart = now
    }
  }

  /// Where the car is now (exact, without noise).
  public var position: LatLng { state.withLock { s in Self.position(in: s, at: elapsed) } }

  /// Whether the current drive is over (true when there is none).
  public var hasArrived: Bool {
    let now = elapsed
    return state.withLock { s in s.drive.map { now - s.driveStart >= $0.duration } ?? true }
  }

  /// What is left of the current drive: the path from the car on, metres and simulated seconds.
  public var remaining: (path: [LatLng], metres: Double, seconds: Double)? {
    let now = elapsed
    return state.withLock { s in
      guard let drive = s.drive else { return nil }
      let t = now - s.driveStart
      return (
        drive.remainingPath(after: t), max(0, drive.distance - drive.distance(after: t)), max(0, drive.duration - t)
      )
    }
  }

  static func position(in s: State, at elapsed: Double) -> LatLng {
    guard let drive = s.drive else { return s.parked }
    return drive.position(after: elapsed - s.driveStart)
  }

  /// The fix now: position, speed and heading of the drive, with noise if configured.
  public func currentFix() -> LocationFix {
    let now = elapsed
    let time = clock.now()
    return state.withLock { s in
      var point = Self.position(in: s, at: now)
      var speed = 0.0
      if let drive = s.drive {
        let t = now - s.driveStart
        speed = drive.speed(after: t)
        if let heading = drive.heading(after: t) { s.lastHeading = heading }
        if t >= drive.duration {
          s.parked = point
          s.drive = nil
        }
      }
      if configuration.noise > 0 {
        // Box–Muller: two Gaussian offsets in metres, north and east.
        let u1 = max(Double.ulpOfOne, s.random.nextUnit())
        let u2 = s.random.nextUnit()
        let r = configuration.noise * (-2 * log(u1)).squareRoot()
        let north = r * cos(2 * .pi * u2)
        let east = r * sin(2 * .pi * u2)
        point = LatLng(
          latitude: point.latitude + north / 111_320,
          longitude: point.longitude + east / (111_320 * cos(point.latitude * .pi / 180)))
      }
      return LocationFix(
        coordinate: point, horizontalAccuracy: configuration.accuracy, heading: s.lastHeading, speed: speed, time: time,
        sensor: .gps)
    }
  }

  public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    let started = StartFlag()
    return AsyncThrowingStream { [self] in
      if started.wasSet() { try await clock.sleep(configuration.interval) }
      return currentFix()
    }
  }
}

/// A small seeded generator, so that simulated noise repeats run to run.
struct SplitMix64: RandomNumberGenerator, Sendable {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// Waits `seconds` of simulated time, `speedup` times faster than real time.
func sleep(simulated seconds: Double, speedup: Double) async throws {
  try await Task.sleep(for: .milliseconds(Int(seconds * 1000 / max(speedup, 0.001))))
}

/// Set by the first caller; every later one learns it was already set.
final class StartFlag: Sendable {
  let value = Atomic(false)
  func wasSet() -> Bool { value.exchange(true, ordering: .relaxed) }
}
