import FleetCore
import FleetTestSupport
import Foundation
import Synchronization
import Testing

@testable import FleetRideStatus

/// A valid status of ride-1 in `phase`, told apart by `minutes` to pickup.
func rideStatus(_ phase: RidePhase, minutes: Double = 5, ride: String = "ride-1") -> RideStatus {
  RideStatus(
    rideIdentifier: ride, phase: phase,
    completionStatus: phase == .completed ? RideCompletionStatus(outcome: .completed) : nil,
    estimatedPickupDate: now + minutes * 60,
    vehicle: RideVehicle(location: pickup, heading: 10, mapAnnotationImageName: "car"),
    rideOption: RideOption(name: "Ride", estimatedPickupDate: now + minutes * 60))
}

struct ScriptedFailure: Error, CustomStringConvertible {
  var description: String
}

/// A source whose answer the test sets, and which pushes what the test pushes.
final class ScriptedSource: RideStatusSource {
  enum Answer: Sendable {
    case status(RideStatus)
    case failure(String)
    /// Never answers (until cancelled).
    case hang
  }

  let answer: Mutex<Answer>
  /// Answers given one per poll before `answer`.
  let script: Mutex<[Answer]>
  let watchers = Mutex<[@Sendable (RideStatus) -> Void]>([])
  let polls = Counter()

  init(_ answer: Answer, after script: [Answer] = []) {
    self.answer = Mutex(answer)
    self.script = Mutex(script)
  }

  func set(_ answer: Answer) { self.answer.withLock { $0 = answer } }

  func status(rideIdentifier: String) async throws -> RideStatus {
    polls.increment()
    let next = script.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? answer.withLock { $0 }
    switch next {
    case .status(let status): return status
    case .failure(let message): throw ScriptedFailure(description: message)
    case .hang:
      try await Task.sleep(for: .seconds(3600))
      throw CancellationError()
    }
  }

  func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async {
    watchers.withLock { $0.append(onChange) }
    try? await Task.sleep(for: .seconds(3600))
  }

  var isWatched: Bool { !watchers.withLock { $0 }.isEmpty }

  func push(_ status: RideStatus) {
    for watcher in watchers.withLock({ $0 }) { watcher(status) }
  }
}

/// Records what it receives; optionally acts inside `send`.
final class RecordingReceiver: RideStatusReceiver {
  let sent = Mutex<[RideStatus]>([])
  let stops = Mutex<[RideStatusUpdatesStopReason]>([])
  let onSend: (@Sendable (RideStatus) -> Void)?

  init(onSend: (@Sendable (RideStatus) -> Void)? = nil) { self.onSend = onSend }

  var statuses: [RideStatus] { sent.withLock { $0 } }
  var phases: [RidePhase] { statuses.map(\.phase) }
  var stopReasons: [RideStatusUpdatesStopReason] { stops.withLock { $0 } }

  func send(_ status: RideStatus) {
    sent.withLock { $0.append(status) }
    onSend?(status)
  }

  func rideStatusUpdatesStopped(_ reason: RideStatusUpdatesStopReason) {
    stops.withLock { $0.append(reason) }
  }

  /// Waits for the updates to stop; the failures counted and the last error when the source
  /// failed, else nil (recorded as an issue).
  func sourceFailure() async throws -> (count: Int, lastError: String)? {
    try await eventually("the stop") { !stopReasons.isEmpty }
    guard case .sourceFailing(let count, let lastError) = stopReasons.first else {
      Issue.record("stopped for \(stopReasons)")
      return nil
    }
    return (count, lastError)
  }
}

func configuration(interval: Duration = .seconds(3600), deadline: Duration = .seconds(5), failures: Int = 3)
  -> RideStatusUpdater.Configuration
{
  var configuration = RideStatusUpdater.Configuration()
  configuration.interval = interval
  configuration.deadline = deadline
  configuration.maximumConsecutiveFailures = failures
  return configuration
}

/// Runs `updater` while `body` runs.
func running(_ updater: RideStatusUpdater, _ body: () async throws -> Void) async throws {
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await updater.run() }
    try await body()
    group.cancelAll()
  }
}

@Suite struct RideStatusUpdaterTests {
  @Test func aNewStatusIsSentOnceAndAPushArrivesWithoutWaitingForTheTimer() async throws {
    let source = ScriptedSource(.status(rideStatus(.confirmed)))
    let updater = RideStatusUpdater(source: source, configuration: configuration())
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the first poll's status") { receiver.phases == [.confirmed] }
      try await eventually("the source watched") { source.isWatched }
      // The interval is an hour: only a push can bring these.
      source.push(rideStatus(.confirmed))
      source.push(rideStatus(.approachingPickup, minutes: 1))
      source.push(rideStatus(.approachingPickup, minutes: 1))
      source.push(rideStatus(.pickup, minutes: 0))
      try await eventually("the pushed statuses") { receiver.phases.count == 3 }
      #expect(receiver.phases == [.confirmed, .approachingPickup, .pickup])
      #expect(source.polls.count == 1)
      #expect(updater.isSending)
      #expect(updater.rideIdentifier == "ride-1")
    }
  }

  @Test func theTimerPollsAndAChangeIsSent() async throws {
    let source = ScriptedSource(.status(rideStatus(.confirmed)))
    let updater = RideStatusUpdater(source: source, configuration: configuration(interval: .milliseconds(20)))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("a few polls") { source.polls.count >= 4 }
      #expect(receiver.phases == [.confirmed])
      source.set(.status(rideStatus(.confirmed, minutes: 4)))
      try await eventually("the new ETA") { receiver.statuses.count == 2 }
      #expect(receiver.statuses.last?.estimatedPickupDate == now + 240)
    }
  }

  @Test func stopFromInsideADeliveryEndsTheUpdatesAndReleasesTheReceiver() async throws {
    let source = ScriptedSource(.status(rideStatus(.confirmed)))
    let updater = RideStatusUpdater(source: source, configuration: configuration(interval: .milliseconds(10)))
    weak var released: RecordingReceiver?
    try await running(updater) {
      do {
        let receiver = RecordingReceiver { _ in updater.stopSendingUpdates() }
        released = receiver
        try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
        try await eventually("the first status") { receiver.statuses.count == 1 }
        #expect(!updater.isSending)
        source.set(.status(rideStatus(.ongoing)))
        source.push(rideStatus(.pickup))
        try await Task.sleep(for: .milliseconds(200))
        #expect(receiver.phases == [.confirmed])
        // Stopped by the app: the receiver is not told.
        #expect(receiver.stopReasons.isEmpty)
      }
      try await eventually("the receiver released") { released == nil }
    }
  }

  @Test func stopTwiceThenStartAgainAndStartOnlyOnce() async throws {
    let source = ScriptedSource(.status(rideStatus(.confirmed)))
    let updater = RideStatusUpdater(source: source, configuration: configuration())
    try await running(updater) {
      let first = RecordingReceiver()
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: first)
      #expect(throws: RideStatusUpdaterError.self) {
        try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: RecordingReceiver())
      }
      try await eventually("the first ride's status") { first.statuses.count == 1 }
      updater.stopSendingUpdates()
      updater.stopSendingUpdates()
      #expect(!updater.isSending)

      source.set(.status(rideStatus(.ongoing, ride: "ride-2")))
      let second = RecordingReceiver()
      try updater.startSendingUpdates(rideIdentifier: "ride-2", observer: second)
      try await eventually("the second ride's status") { second.statuses.count == 1 }
      #expect(second.statuses.first?.rideIdentifier == "ride-2")
      #expect(first.statuses.count == 1)

      let error = #expect(throws: RideStatusUpdaterError.self) {
        try updater.startSendingUpdates(rideIdentifier: "ride-3", observer: RecordingReceiver())
      }
      #expect(error?.code == .alreadySending)
      updater.stopSendingUpdates()
      let empty = #expect(throws: RideStatusUpdaterError.self) {
        try updater.startSendingUpdates(rideIdentifier: "", observer: RecordingReceiver())
      }
      #expect(empty?.code == .invalidRideIdentifier)
    }
  }

  @Test func failuresRepeatTheLastValidStatusThenStopAndSayWhy() async throws {
    let source = ScriptedSource(.status(rideStatus(.ongoing)))
    let updater = RideStatusUpdater(source: source, configuration: configuration(interval: .milliseconds(20)))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the status") { receiver.statuses.count == 1 }
      source.set(.failure("connection refused"))
      try await eventually("the stop") { !receiver.stopReasons.isEmpty }
      // One real status, then the same one for each of the three failures: never nothing.
      #expect(receiver.statuses == Array(repeating: rideStatus(.ongoing), count: 4))
      #expect(receiver.stopReasons == [.sourceFailing(consecutiveFailures: 3, lastError: "connection refused")])
      #expect(!updater.isSending)
    }
  }

  @Test func aSourceThatRecoversResetsTheFailureCount() async throws {
    let first = rideStatus(.ongoing)
    let second = rideStatus(.ongoing, minutes: 2)
    // Two failures, a recovery, two failures: never three in a row, so no stop at a limit of 3.
    let source = ScriptedSource(
      .status(second),
      after: [
        .status(first), .failure("timeout"), .failure("timeout"), .status(second), .failure("timeout"),
        .failure("timeout"),
      ])
    let updater = RideStatusUpdater(source: source, configuration: configuration(interval: .milliseconds(20)))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the script and more") { source.polls.count >= 9 }
      #expect(receiver.stopReasons.isEmpty)
      #expect(receiver.statuses == [first, first, first, second, second, second])
      #expect(updater.isSending)
    }
  }

  @Test func aSourceThatDoesNotAnswerMissesItsDeadline() async throws {
    let source = ScriptedSource(.hang)
    let updater = RideStatusUpdater(
      source: source,
      configuration: configuration(interval: .milliseconds(10), deadline: .milliseconds(50), failures: 2))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      guard let stop = try await receiver.sourceFailure() else { return }
      #expect(stop.count == 2)
      #expect(stop.lastError.contains("deadlineExceeded"))
      // Nothing valid was ever known, so nothing was sent.
      #expect(receiver.statuses.isEmpty)
    }
  }

  @Test func aPushWhileAPollHangsIsSentAtOnceAndCountsBeforeThePollsFailure() async throws {
    // The first poll hangs until its deadline; the next ones fail.
    let source = ScriptedSource(.failure("down"), after: [.hang])
    let updater = RideStatusUpdater(
      source: source,
      configuration: configuration(interval: .milliseconds(10), deadline: .seconds(2), failures: 2))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the source watched and polled") { source.isWatched && source.polls.count == 1 }
      source.push(rideStatus(.confirmed))
      // Sent while the poll still hangs: a push does not wait behind it.
      try await eventually("the pushed status") { receiver.phases == [.confirmed] }
      #expect(source.polls.count == 1)
      #expect(receiver.stopReasons.isEmpty)
      // The push came before the hung poll's failure, so that failure is the first in a row,
      // the next poll's the second: the stop, with the pushed status repeated each time.
      guard let stop = try await receiver.sourceFailure() else { return }
      #expect(stop.count == 2)
      #expect(stop.lastError.contains("down"))
      #expect(source.polls.count == 2)
      #expect(receiver.phases == [.confirmed, .confirmed, .confirmed])
    }
  }

  @Test func anInvalidStatusIsNeverSent() async throws {
    var unknown = rideStatus(.ongoing)
    unknown.phase = .unknown
    let source = ScriptedSource(.status(rideStatus(.confirmed)))
    let updater = RideStatusUpdater(source: source, configuration: configuration(failures: 4))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the status") { receiver.statuses.count == 1 }
      try await eventually("the source watched") { source.isWatched }
      source.push(unknown)
      source.push(rideStatus(.ongoing, ride: "ride-9"))
      var completedWithoutOutcome = rideStatus(.completed)
      completedWithoutOutcome.completionStatus = nil
      source.push(completedWithoutOutcome)
      var noImage = rideStatus(.ongoing)
      noImage.vehicle?.mapAnnotationImageName = nil
      source.push(noImage)
      guard let stop = try await receiver.sourceFailure() else { return }
      #expect(receiver.statuses == Array(repeating: rideStatus(.confirmed), count: 5))
      #expect(stop.count == 4)
      #expect(stop.lastError.contains("invalidVehicle"))
    }
  }

  @Test func theCompletedStatusEndsTheUpdates() async throws {
    let source = ScriptedSource(.status(rideStatus(.ongoing)))
    let updater = RideStatusUpdater(source: source, configuration: configuration(interval: .milliseconds(20)))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the status") { receiver.statuses.count == 1 }
      source.set(.status(rideStatus(.completed)))
      try await eventually("the stop") { !receiver.stopReasons.isEmpty }
      #expect(receiver.phases == [.ongoing, .completed])
      #expect(receiver.stopReasons == [.rideEnded])
      #expect(!updater.isSending)
      let polls = source.polls.count
      try await Task.sleep(for: .milliseconds(150))
      #expect(source.polls.count == polls)
    }
  }

  @Test func noRideStartsOnceRunHasEnded() async throws {
    let updater = RideStatusUpdater(source: ScriptedSource(.status(rideStatus(.confirmed))))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "ride-1", observer: receiver)
      try await eventually("the status") { receiver.statuses.count == 1 }
    }
    // run() was cancelled: the ride's updates stopped with it.
    try await eventually("the updates stopped") { !updater.isSending }
    let error = #expect(throws: RideStatusUpdaterError.self) {
      try updater.startSendingUpdates(rideIdentifier: "ride-2", observer: receiver)
    }
    #expect(error?.code == .updaterEnded)
  }
}

@Suite struct RideStatusDeliveryTests {
  @Test func sendsChangesRepeatsTheCacheOnFailureAndStops() {
    var delivery = RideStatusDelivery(rideIdentifier: "ride-1", maximumConsecutiveFailures: 2)
    #expect(delivery.failed("down") == .init(send: nil, stop: nil))
    #expect(delivery.received(rideStatus(.confirmed)) == .init(send: rideStatus(.confirmed)))
    #expect(delivery.consecutiveFailures == 0)
    #expect(delivery.received(rideStatus(.confirmed)) == .none)
    #expect(delivery.failed("down") == .init(send: rideStatus(.confirmed)))
    #expect(
      delivery.failed("down again")
        == .init(
          send: rideStatus(.confirmed), stop: .sourceFailing(consecutiveFailures: 2, lastError: "down again")))
    var ending = RideStatusDelivery(rideIdentifier: "ride-1", maximumConsecutiveFailures: 2)
    #expect(ending.received(rideStatus(.completed)) == .init(send: rideStatus(.completed), stop: .rideEnded))
  }

  @Test func anInvalidStatusCountsAsAFailureAndIsNotCached() {
    var delivery = RideStatusDelivery(rideIdentifier: "ride-1", maximumConsecutiveFailures: 5)
    _ = delivery.received(rideStatus(.confirmed))
    let action = delivery.received(rideStatus(.ongoing, ride: "ride-2"))
    #expect(action.send == rideStatus(.confirmed))
    #expect(delivery.consecutiveFailures == 1)
    #expect(delivery.lastValid == rideStatus(.confirmed))
  }
}
