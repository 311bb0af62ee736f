import Foundation
import Synchronization

/// Sends a ride's live status to a receiver the way SiriKit's ride-status contract wants it:
/// `startSendingUpdates(rideIdentifier:observer:)` once, then every new valid status — polled
/// every `interval` and pushed at once when the source reports a change — until
/// `stopSendingUpdates()`, the ride's end, or too many failures in a row.
///
/// When the source fails (an error, no answer within `deadline`, an invalid status) the receiver
/// gets the last valid status again rather than silence or something invalid; after
/// `maximumConsecutiveFailures` the updater stops and says why.
///
/// The work runs inside `run()`, which the app runs for as long as it may send updates (e.g. in
/// its service group); start and stop are plain calls that may come from anywhere, including
/// from inside `send(_:)`.
public final class RideStatusUpdater: Sendable {
  public struct Configuration: Sendable, Hashable {
    /// How often the source is polled.
    public var interval: Duration = .seconds(5)
    /// How long a poll may take before it counts as a failure.
    public var deadline: Duration = .seconds(4)
    /// Failures in a row after which the updater stops and tells the receiver.
    public var maximumConsecutiveFailures = 6

    public init() {}
  }

  enum Lifecycle {
    case idle, running, finished
  }

  struct State {
    var lifecycle = Lifecycle.idle
    var current: RideStatusSession?
  }

  public let configuration: Configuration
  let source: any RideStatusSource
  let state = Mutex(State())
  let sessions: AsyncStream<RideStatusSession>
  let newSession: AsyncStream<RideStatusSession>.Continuation
  /// Held while a receiver is called and while a session ends, so that nothing is delivered
  /// once `stopSendingUpdates()` has returned. Recursive: a receiver may stop from inside `send`.
  let deliveryLock = NSRecursiveLock()

  public init(source: any RideStatusSource, configuration: Configuration = Configuration()) {
    self.source = source
    self.configuration = configuration
    (sessions, newSession) = AsyncStream.makeStream()
  }

  /// Whether a ride's updates are being sent.
  public var isSending: Bool { state.withLock { $0.current != nil } }

  /// The ride whose updates are being sent.
  public var rideIdentifier: String? { state.withLock { $0.current?.rideIdentifier } }

  /// Sends the updates of every started ride until cancelled. Runs once: a second call returns
  /// at once, and after it ends no ride can start.
  public func run() async {
    let first = state.withLock { state in
      guard state.lifecycle == .idle else { return false }
      state.lifecycle = .running
      return true
    }
    guard first else { return }
    defer {
      state.withLock { $0.lifecycle = .finished }
      stopSendingUpdates()
    }
    await withDiscardingTaskGroup { group in
      for await session in sessions {
        group.addTask { await self.send(session) }
      }
    }
  }

  /// Starts sending `rideIdentifier`'s statuses to `observer`, which is held until the updates
  /// stop. Called once per ride: while a ride's updates are being sent it throws
  /// `alreadySending`; after a stop a ride may start again.
  public func startSendingUpdates(rideIdentifier: String, observer: any RideStatusReceiver)
    throws(RideStatusUpdaterError)
  {
    guard !rideIdentifier.isEmpty else {
      throw RideStatusUpdaterError(.invalidRideIdentifier, "rideIdentifier must not be empty")
    }
    let session = try state.withLock { state throws(RideStatusUpdaterError) in
      if let current = state.current {
        throw RideStatusUpdaterError(
          .alreadySending, "updates for ride '\(current.rideIdentifier)' are being sent; stop them first")
      }
      guard state.lifecycle != .finished else {
        throw RideStatusUpdaterError(.updaterEnded, "the updater's run() has ended; make a new updater")
      }
      let session = RideStatusSession(rideIdentifier: rideIdentifier, receiver: observer)
      state.current = session
      return session
    }
    newSession.yield(session)
  }

  /// Stops sending and releases the receiver. Idempotent; may be called from inside `send(_:)`.
  /// From another thread it waits for a `send` under way to return, so nothing arrives after it.
  public func stopSendingUpdates() {
    deliveryLock.lock()
    defer { deliveryLock.unlock() }
    let session = state.withLock { state in
      defer { state.current = nil }
      return state.current
    }
    _ = session?.end()
  }

  /// One ride: polls on a timer, listens for pushes, and acts on each answer in the order it
  /// came. A poll runs beside the loop rather than inside it, so a push is never held behind a
  /// slow poll, and a push that came before a poll's failure is not counted after it.
  func send(_ session: RideStatusSession) async {
    var delivery = RideStatusDelivery(
      rideIdentifier: session.rideIdentifier, maximumConsecutiveFailures: configuration.maximumConsecutiveFailures)
    // Discarding: a session polls for hours, and no poll's task is kept once it has answered.
    await withDiscardingTaskGroup { group in
      group.addTask { [interval = configuration.interval] in
        while !Task.isCancelled {
          session.requestPoll()
          try? await Task.sleep(for: interval)
        }
      }
      group.addTask { [source] in
        await source.watch(rideIdentifier: session.rideIdentifier) { session.push($0) }
      }
      for await trigger in session.triggers {
        guard session.isActive else { break }
        let action: RideStatusDelivery.Action
        switch trigger {
        case .poll:
          group.addTask { session.polled(await self.poll(session.rideIdentifier)) }
          continue
        case .polled(.success(let status)):
          action = delivery.received(status)
        case .polled(.failure(let error)):
          action = delivery.failed(String(describing: error))
        case .pushed(let status):
          action = delivery.received(status)
        }
        guard !Task.isCancelled, perform(action, in: session) else { break }
      }
      group.cancelAll()
    }
  }

  /// The source's answer, or a deadline failure when it takes too long. The source must give
  /// up when cancelled (FleetClient's HTTPClient closes its connection).
  func poll(_ rideIdentifier: String) async -> Result<RideStatus, any Error> {
    let deadline = configuration.deadline
    return await withTaskGroup(of: Result<RideStatus, any Error>?.self) { [source] group in
      group.addTask {
        do { return .success(try await source.status(rideIdentifier: rideIdentifier)) } catch { return .failure(error) }
      }
      group.addTask {
        try? await Task.sleep(for: deadline)
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first ?? .failure(RideStatusUpdaterError(.deadlineExceeded, "no status within \(deadline)"))
    }
  }

  /// Sends what the delivery decided; whether the session goes on.
  func perform(_ action: RideStatusDelivery.Action, in session: RideStatusSession) -> Bool {
    deliveryLock.lock()
    defer { deliveryLock.unlock() }
    guard let receiver = session.receiver else { return false }
    if let status = action.send { receiver.send(status) }
    guard let reason = action.stop else { return session.isActive }
    state.withLock { state in
      if state.current === session { state.current = nil }
    }
    // Not told when it stopped the updates itself from inside `send`.
    if session.end() { receiver.rideStatusUpdatesStopped(reason) }
    return false
  }
}

/// What wakes a session: the timer, a poll's answer, or a status the source pushed.
enum RideStatusTrigger: Sendable {
  case poll
  case polled(Result<RideStatus, any Error>)
  case pushed(RideStatus)
}

/// One ride's updates: the receiver (until the end) and the session's wake-ups.
final class RideStatusSession: Sendable {
  struct State {
    var receiver: (any RideStatusReceiver)?
    /// A poll is queued or under way: the timer does not start another.
    var polling = false
  }

  let rideIdentifier: String
  let state: Mutex<State>
  let triggers: AsyncStream<RideStatusTrigger>
  let wake: AsyncStream<RideStatusTrigger>.Continuation

  init(rideIdentifier: String, receiver: any RideStatusReceiver) {
    self.rideIdentifier = rideIdentifier
    state = Mutex(State(receiver: receiver))
    (triggers, wake) = AsyncStream.makeStream()
  }

  var receiver: (any RideStatusReceiver)? { state.withLock { $0.receiver } }
  var isActive: Bool { state.withLock { $0.receiver != nil } }

  func requestPoll() {
    let start = state.withLock { state in
      defer { state.polling = true }
      return !state.polling
    }
    if start { wake.yield(.poll) }
  }

  /// A poll's answer, queued behind whatever came before it; the timer may start the next.
  func polled(_ result: Result<RideStatus, any Error>) {
    wake.yield(.polled(result))
    state.withLock { $0.polling = false }
  }

  func push(_ status: RideStatus) { wake.yield(.pushed(status)) }

  /// Releases the receiver and ends the session's loop; whether it was still active.
  func end() -> Bool {
    let wasActive = state.withLock { state in
      defer { state.receiver = nil }
      return state.receiver != nil
    }
    wake.finish()
    return wasActive
  }
}
