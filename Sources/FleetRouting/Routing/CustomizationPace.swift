import Foundation

/// How a customization made in the background shares the machine with the queries it serves: it
/// works in slices of `slice` and rests after each, so that over its run it takes at most `share`
/// of one core. Unpaced, a metro's customization (half a second to a second of one core, every
/// traffic interval) took a core whole while the event loops needed both, and the answers queued
/// behind it came in bursts of slow ones (docs/benchmarks.md, "Customizations paced").
public struct CustomizationPace: Sendable {
  /// The share of one core the customization may take, in (0, 1].
  public let share: Double
  /// How long it works before resting.
  public let slice: Duration
  /// Once true, the rest of the work is done without resting: fleetd is stopping, and waits for it.
  public let hurry: @Sendable () -> Bool

  public init(share: Double, slice: Duration = .milliseconds(2), hurry: @escaping @Sendable () -> Bool = { false }) {
    precondition(share > 0 && share <= 1, "a customization's share of a core is in (0, 1]")
    precondition(slice > .zero, "a customization's slice is positive")
    self.share = share
    self.slice = slice
    self.hurry = hurry
  }
}

/// What a paced customization did: how long it worked and rested, and how often it rested.
public struct CustomizationRun: Sendable {
  public internal(set) var worked: Duration = .zero
  public internal(set) var rested: Duration = .zero
  public internal(set) var rests = 0
}

/// Keeps a customization to its pace: `checkpoint()` is called often (every few thousand
/// elements) and rests once a slice is used up, for as long as that slice's work times
/// (1 − share) / share. Work is clock time: a slice in which the thread waited for a core counts
/// whole, so a busy machine gets longer rests. Without a pace it only counts the time.
struct Pacer {
  let pace: CustomizationPace?
  let started = ContinuousClock.now
  var sliceStarted = ContinuousClock.now
  var run = CustomizationRun()

  init(_ pace: CustomizationPace?) { self.pace = pace }

  mutating func checkpoint() {
    guard let pace else { return }
    let now = ContinuousClock.now
    let worked = now - sliceStarted
    guard worked >= pace.slice, !pace.hurry() else { return }
    let rest = worked * ((1 - pace.share) / pace.share)
    if rest > .zero {
      var time = timespec(
        tv_sec: Int(rest.components.seconds), tv_nsec: Int(rest.components.attoseconds / 1_000_000_000))
      nanosleep(&time, nil)
      run.rests += 1
    }
    sliceStarted = ContinuousClock.now
    run.rested += sliceStarted - now
  }

  /// The run, once the work is done: its work is all of its time but the rests.
  mutating func finish() -> CustomizationRun {
    run.worked = ContinuousClock.now - started - run.rested
    return run
  }
}
