import Foundation
import Synchronization

/// Replays a recorded track: the fixes of a GPX or NMEA file, spaced as they were recorded
/// (divided by `speedup`). By default each fix is re-stamped as if the track were being driven
/// now, so that a server takes it as live; `keepsRecordedTimes` keeps the file's times.
public struct ReplayLocationProvider: LocationProvider {
  public var track: [LocationFix]
  public var speedup: Double
  public var keepsRecordedTimes: Bool
  let clock: PositioningClock

  public init(
    track: [LocationFix], speedup: Double = 1, keepsRecordedTimes: Bool = false, clock: PositioningClock = .system
  ) {
    self.track = track.sorted { $0.time < $1.time }
    self.speedup = max(speedup, 0.001)
    self.keepsRecordedTimes = keepsRecordedTimes
    self.clock = clock
  }

  /// Reads a GPX or NMEA file.
  public init(
    contentsOf url: URL, speedup: Double = 1, keepsRecordedTimes: Bool = false, clock: PositioningClock = .system
  )
    throws(LocationError)
  {
    self.init(
      track: try TrackFile.read(contentsOf: url), speedup: speedup, keepsRecordedTimes: keepsRecordedTimes, clock: clock
    )
  }

  public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    let track = track
    let speedup = speedup
    let keepsTimes = keepsRecordedTimes
    let clock = clock
    let position = ReplayPosition()
    return AsyncThrowingStream {
      guard let (index, start) = position.next(startingAt: clock.now()), index < track.count else { return nil }
      let recorded = track[index]
      let offset = recorded.time.timeIntervalSince(track[0].time) / speedup
      let due = start.addingTimeInterval(offset)
      let wait = due.timeIntervalSince(clock.now())
      if wait > 0 { try await clock.sleep(.milliseconds(Int64(wait * 1000))) }
      var fix = recorded
      if !keepsTimes { fix.time = due }
      return fix
    }
  }
}

/// Where a replay stands: the next index, and when it started.
final class ReplayPosition: Sendable {
  let state = Mutex<(next: Int, start: Date?)>((0, nil))
  func next(startingAt now: Date) -> (Int, Date)? {
    state.withLock { s in
      let start = s.start ?? now
      s.start = start
      defer { s.next += 1 }
      return (s.next, start)
    }
  }
}
