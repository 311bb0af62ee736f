import FleetCore
import Foundation
import Synchronization

/// One trip followed for the rider (Fleet Engine's `GMTCTripModel`). Get it from
/// `TripService.tripModel(forTripName:)`; register a subscriber to start following the trip,
/// unregister the last one (or call `stopTracking()`) to stop. Subscribers are held weakly:
/// when the last one is gone, updates stop.
///
/// The same updates are available as an `AsyncSequence` through `updates()`; a live iteration
/// counts as a subscriber.
public final class TripModel: Sendable {
  public let tripName: String
  public let tripID: String
  let configuration: ConsumerConfiguration
  let tokenProvider: any AuthorizationTokenProvider
  /// Tells the service that this model wants (or no longer wants) to be tracked.
  let demandChanged: @Sendable () -> Void

  struct WeakSubscriber {
    weak var value: (any TripModelSubscriber)?
    let id: ObjectIdentifier
  }

  struct State {
    var subscribers: [WeakSubscriber] = []
    var streams: [UUID: AsyncStream<TripModelEvent>.Continuation] = [:]
    var trip: TripInfo?
    var modelState = TripModelState.inactive
    /// A tracking task is running for this model.
    var isTracking = false
    /// `stopTracking()` was called; a new registration clears it.
    var isStopped = false
    /// Woken when the model stops wanting to be tracked.
    var unwantedWaiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    var consecutiveFailures = 0

    var hasListeners: Bool { subscribers.contains { $0.value != nil } || !streams.isEmpty }
    var wantsTracking: Bool { hasListeners && !isStopped && !(trip?.hasEnded ?? false) }
  }

  let state = Mutex(State())

  init(
    tripName: String, tripID: String, configuration: ConsumerConfiguration, tokenProvider: any AuthorizationTokenProvider,
    demandChanged: @escaping @Sendable () -> Void
  ) {
    self.tripName = tripName
    self.tripID = tripID
    self.configuration = configuration
    self.tokenProvider = tokenProvider
    self.demandChanged = demandChanged
  }

  /// The newest reading of the trip; nil before the first one.
  public var currentTrip: TripInfo? { state.withLock { $0.trip } }
  public var modelState: TripModelState { state.withLock { $0.modelState } }

  /// Starts (or keeps) following the trip and tells `subscriber` about every change. A new
  /// subscriber first gets the whole current trip, if there is one, as a change of every field
  /// that is set.
  @MainActor
  public func register(_ subscriber: any TripModelSubscriber) {
    let id = ObjectIdentifier(subscriber)
    let current = state.withLock { s -> TripInfo? in
      s.subscribers.removeAll { $0.value == nil }
      guard !s.subscribers.contains(where: { $0.id == id }) else { return nil }
      s.subscribers.append(WeakSubscriber(value: subscriber, id: id))
      s.isStopped = false
      return s.trip
    }
    if let current {
      subscriber.deliver(.trip(current, TripPropertyFields.changes(from: nil, to: current)), from: self)
    }
    demandChanged()
  }

  /// Stops telling `subscriber`; with no subscriber left, the trip is no longer followed.
  @MainActor
  public func unregister(_ subscriber: any TripModelSubscriber) {
    let id = ObjectIdentifier(subscriber)
    state.withLock { s in s.subscribers.removeAll { $0.id == id || $0.value == nil } }
    wakeIfUnwanted()
    demandChanged()
  }

  /// Stops following the trip until a subscriber registers again (Fleet Engine's
  /// `stopTracking`); subscribers stay registered but hear nothing.
  public func stopTracking() {
    state.withLock { $0.isStopped = true }
    wakeIfUnwanted()
    demandChanged()
  }

  /// Every event as it happens, starting with the current trip if there is one. Iterating keeps
  /// the trip followed; the sequence finishes when the trip has ended or the iteration stops.
  public func updates() -> AsyncStream<TripModelEvent> {
    let (stream, continuation) = AsyncStream<TripModelEvent>.makeStream(bufferingPolicy: .unbounded)
    let id = UUID()
    let current = state.withLock { s -> TripInfo? in
      s.streams[id] = continuation
      s.isStopped = false
      return s.trip
    }
    if let current {
      continuation.yield(.trip(current, TripPropertyFields.changes(from: nil, to: current)))
      if current.hasEnded { continuation.finish() }
    }
    continuation.onTermination = { [weak self] _ in
      guard let self else { return }
      self.state.withLock { _ = $0.streams.removeValue(forKey: id) }
      self.wakeIfUnwanted()
      self.demandChanged()
    }
    demandChanged()
    return stream
  }

  // MARK: Delivery

  /// Applies a new reading of the trip; tells listeners what changed, if anything.
  func received(_ trip: TripInfo) async {
    let changed = state.withLock { s -> TripPropertyFields? in
      let fields = TripPropertyFields.changes(from: s.trip, to: trip)
      s.trip = trip
      s.consecutiveFailures = 0
      return fields.isEmpty ? nil : fields
    }
    guard let changed else { return }
    await publish(.trip(trip, changed))
    if trip.hasEnded {
      let streams = state.withLock { s in
        defer { s.streams = [:] }
        return Array(s.streams.values)
      }
      for stream in streams { stream.finish() }
      wakeIfUnwanted()
    }
  }

  func publish(_ event: TripModelEvent) async {
    if case .modelState(let new) = event {
      let isChange = state.withLock { s in
        defer { s.modelState = new }
        return s.modelState != new
      }
      guard isChange else { return }
    }
    for stream in state.withLock({ Array($0.streams.values) }) { stream.yield(event) }
    await MainActor.run {
      let subscribers = state.withLock { s in s.subscribers.map(\.id) }
      for id in subscribers {
        // Looked up again before each call: a subscriber unregistered by an earlier one in
        // this same delivery hears nothing more.
        guard let subscriber = state.withLock({ s in s.subscribers.first { $0.id == id }?.value }) else { continue }
        subscriber.deliver(event, from: self)
      }
    }
    wakeIfUnwanted()
  }

  // MARK: Tracking

  /// Marks the model as tracked if it wants to be and is not yet; the caller then runs `track`.
  func claimTracking() -> Bool {
    state.withLock { s in
      guard s.wantsTracking, !s.isTracking else { return false }
      s.isTracking = true
      return true
    }
  }

  /// Follows the trip until it ends, nobody listens, tracking is stopped, or the task is
  /// cancelled.
  func track(_ transport: TripTransport) async {
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await self.follow(transport) }
      group.addTask { await self.waitUntilUnwanted() }
      await group.next()
      group.cancelAll()
    }
    state.withLock { $0.isTracking = false }
    await publish(.modelState(.inactive))
    // Somebody may have registered again while this was winding down.
    demandChanged()
  }

  func waitUntilUnwanted() async {
    let id = UUID()
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let resumeNow = state.withLock { s -> Bool in
          if !s.wantsTracking || Task.isCancelled { return true }
          s.unwantedWaiters[id] = continuation
          return false
        }
        if resumeNow { continuation.resume() }
      }
    } onCancel: {
      state.withLock { s in s.unwantedWaiters.removeValue(forKey: id) }?.resume()
    }
  }

  func wakeIfUnwanted() {
    let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
      guard !s.wantsTracking else { return [] }
      defer { s.unwantedWaiters = [:] }
      return Array(s.unwantedWaiters.values)
    }
    for waiter in waiters { waiter.resume() }
  }

  /// The reading loop: the push stream if fleetd has it, else GetTrip at the polling interval;
  /// failures retried with backoff, client errors reported (Fleet Engine's Consumer SDK).
  func follow(_ transport: TripTransport) async {
    await publish(.modelState(.active))
    var usesPush = configuration.transport != .polling
    var retriedUnauthenticated = false
    let context = AuthorizationContext.trip(tripID)
    while !Task.isCancelled, !(currentTrip?.hasEnded ?? false) {
      let opened = ContinuousClock.now
      do {
        let token: String
        do {
          token = try await tokenProvider.token(for: context)
        } catch {
          throw FleetClientError(.unauthenticated, "no token for trip \(tripID): \(error)")
        }
        if usesPush {
          try await transport.watchTrip(tripName, token) { [self] wire in await received(TripInfo(wire)) }
          retriedUnauthenticated = false
          if currentTrip?.hasEnded ?? false { break }
          // fleetd closed the stream before the trip ended (it is shutting down).
          throw FleetClientError(.unavailable, "the trip's stream ended before the trip did")
        } else {
          await received(TripInfo(try await transport.getTrip(tripName, token)))
          retriedUnauthenticated = false
          if currentTrip?.hasEnded ?? false { break }
          try await Task.sleep(for: configuration.pollingInterval)
        }
      } catch {
        if Task.isCancelled { break }
        let error = FleetClientError(error)
        if usesPush, configuration.transport == .automatic, error.code == .unimplemented {
          usesPush = false  // Not fleetd, or an older one: poll instead.
          continue
        }
        if usesPush, error.code == .deadlineExceeded,
          ContinuousClock.now - opened >= configuration.pushStreamLifetime * 0.9
        {
          continue  // The stream's lifetime is up: reopen it at once.
        }
        let failures = state.withLock { s in
          s.consecutiveFailures += 1
          return s.consecutiveFailures
        }
        if !error.isRecoveredAutomatically { await publish(.failure(error)) }
        if error.code == .unauthenticated {
          await tokenProvider.invalidateToken(for: context)
          if !retriedUnauthenticated {
            // A fresh token may be all it takes: try again at once, once.
            retriedUnauthenticated = true
            continue
          }
        }
        do { try await sleep(failures: failures) } catch { break }
      }
    }
  }

  func sleep(failures: Int) async throws {
    try await Task.sleep(
      for: configuration.retryBackoff.delay(afterFailures: failures, jitter: Double.random(in: 0...1)))
  }
}
