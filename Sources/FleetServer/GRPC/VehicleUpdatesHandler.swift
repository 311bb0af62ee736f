import FleetCore
import FleetProto
import Foundation
import GRPCCore
import ServiceLifecycle
import Synchronization

/// fleetkit.v1.VehicleUpdates over gRPC: location reports on one long-lived stream.
///
/// The stream is read in order and each message is applied in memory before the next is read;
/// its commit is awaited in a task of its own, so that many messages share one group commit.
/// Answers are gathered by one writer, which merges those ready together into one response.
/// No more than `window` reports are ever unanswered: past that, the stream is not read.
/// A stream may carry a whole fleet's reports, so its work runs on the loop `balancer` picks,
/// not necessarily its connection's.
struct VehicleUpdatesHandler: Fleetkit_V1_VehicleUpdates.ServiceProtocol {
  let intake: ReportIntake
  let window: Int
  let balancer: LoopBalancer
  let requestIDs = RequestIDs()

  func reportLocations(
    request: StreamingServerRequest<Fleetkit_V1_ReportLocationsRequest>, context: ServerContext
  ) async throws -> StreamingServerResponse<Fleetkit_V1_ReportLocationsResponse> {
    let opening = request.metadata[stringValues: "authorization"].first(where: { _ in true })
    let requestID = request.metadata[stringValues: "x-request-id"].first(where: { _ in true }) ?? requestIDs.next()
    return StreamingServerResponse { [intake, window, balancer] writer in
      try await balancer.run {
        let credits = ReportCredits(window)
        let outbox = ReportOutbox()
        let tally = StreamTally()
        // One log line per stream, when it ends (each refused report has its own).
        defer { tally.log(intake.gate, requestID: requestID) }
        var first = Fleetkit_V1_ReportLocationsResponse()
        first.window = Int32(clamping: window)
        try await writer.write(first)
        let (submissions, submit) = AsyncStream.makeStream(of: Submission.self)
        try await withRPCCancellationHandler {
          try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
              // The writer: whatever is answered when it wakes goes out as one response.
              do {
                for await _ in outbox.wakes {
                  guard let (response, answered) = outbox.take() else { continue }
                  try await writer.write(response)
                  credits.release(answered)
                }
              } catch {
                credits.cancel()
                throw error
              }
            }
            group.addTask {
              // The reader stops at graceful shutdown; what it took is still answered, then the
              // stream ends and the client reconnects (to another instance, or after the restart).
              defer { submit.finish() }
              try await cancelWhenGracefulShutdown {
                try await Self.read(
                  request.messages, opening: opening, requestID: requestID, intake: intake, credits: credits,
                  submit: submit)
              }
            }
            // Each message's commit is awaited on its own, so that many share a group commit.
            await withDiscardingTaskGroup { commits in
              for await submission in submissions {
                commits.addTask {
                  let response = await intake.answer(
                    submission.reports, vehicles: submission.vehicles, transport: "grpc")
                  tally.count(response, caller: submission.reports.caller)
                  outbox.post(response, credits: submission.credits)
                }
              }
            }
            // Every answer is posted: the writer sends the last of them and ends.
            outbox.finish()
            try await group.waitForAll()
          }
        } onCancelRPC: {
          credits.cancel()
          outbox.finish()
        }
        return [:]
      }
    }
  }

  /// One message's reports, applied in memory, with the credits they hold.
  struct Submission: Sendable {
    let reports: SubmittedReports
    /// What the acknowledgements carry of each vehicle: the first message's return_vehicles
    /// and read_mask; nil, no vehicle.
    let vehicles: VehicleReadMask?
    let credits: Int
  }

  /// Reads the client's messages in order and applies each before reading the next.
  static func read(
    _ messages: RPCAsyncSequence<Fleetkit_V1_ReportLocationsRequest, any Error>, opening: String?,
    requestID: String, intake: ReportIntake, credits: ReportCredits, submit: AsyncStream<Submission>.Continuation
  ) async throws {
    var authorization = opening
    // The first message says what the acknowledgements carry of each vehicle.
    var vehicles: VehicleReadMask?
    var first = true
    for try await message in messages {
      if !message.authorization.isEmpty {
        authorization =
          message.authorization.hasPrefix("Bearer ") ? message.authorization : "Bearer \(message.authorization)"
      }
      if first {
        first = false
        do throws(FleetError) { vehicles = try VehicleReadMask.acknowledgements(of: message) } catch {
          throw error.rpcError
        }
      }
      guard !message.reports.isEmpty else { continue }
      let taken = try await credits.acquire(message.reports.count)
      let reports = await intake.submit(message.reports, authorization: authorization, requestID: requestID)
      submit.yield(Submission(reports: reports, vehicles: vehicles, credits: taken))
    }
  }
}

/// What a stream did, for its one log line.
final class StreamTally: Sendable {
  struct Counts {
    var acknowledged = 0
    var refused = 0
    var caller: Caller?
  }

  let counts = Mutex(Counts())
  let opened = ContinuousClock.now

  func count(_ response: Fleetkit_V1_ReportLocationsResponse, caller: Caller?) {
    counts.withLock { c in
      c.acknowledged += response.acknowledged.count
      c.refused += response.errors.count
      c.caller = c.caller ?? caller
    }
  }

  func log(_ gate: RequestGate, requestID: String) {
    let c = counts.withLock { $0 }
    gate.record(
      .reportLocations, transport: "grpc", requestID: requestID, caller: c.caller, outcomes: [],
      elapsed: ContinuousClock.now - opened,
      call: "stream ended: \(c.acknowledged) reports acknowledged, \(c.refused) refused")
  }
}

/// How many more reports a stream may have unanswered. One reader waits on it at a time.
final class ReportCredits: Sendable {
  struct State {
    var available: Int
    var waiter: (needed: Int, continuation: CheckedContinuation<Void, any Error>)?
    var cancelled = false
  }

  let window: Int
  let state: Mutex<State>

  init(_ window: Int) {
    self.window = window
    state = Mutex(State(available: window))
  }

  /// Takes credits for `count` reports, waiting while too many are unanswered; a message larger
  /// than the window waits for all of it. Returns the credits taken, to give back with `release`.
  func acquire(_ count: Int) async throws -> Int {
    let needed = min(count, window)
    // The reader is cancelled at graceful shutdown, perhaps while a client that stopped reading
    // holds every credit: it must not wait for them.
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let ready: Result<Void, any Error>? = state.withLock { s in
          if s.cancelled || Task.isCancelled { return .failure(CancellationError()) }
          guard s.available < needed else {
            s.available -= needed
            return .success(())
          }
          s.waiter = (needed, continuation)
          return nil
        }
        if let ready { continuation.resume(with: ready) }
      }
    } onCancel: {
      cancel()
    }
    return needed
  }

  func release(_ count: Int) {
    let woken: CheckedContinuation<Void, any Error>? = state.withLock { s in
      s.available += count
      guard let waiter = s.waiter, s.available >= waiter.needed else { return nil }
      s.available -= waiter.needed
      s.waiter = nil
      return waiter.continuation
    }
    woken?.resume()
  }

  /// The RPC ended: a waiting reader stops.
  func cancel() {
    let woken = state.withLock { s in
      s.cancelled = true
      defer { s.waiter = nil }
      return s.waiter?.continuation
    }
    woken?.resume(throwing: CancellationError())
  }
}

/// Answers ready to send, merged until the writer takes them.
final class ReportOutbox: Sendable {
  struct Pending {
    var response = Fleetkit_V1_ReportLocationsResponse()
    var credits = 0
  }

  let pending = Mutex(Pending())
  let wakes: AsyncStream<Void>
  let wake: AsyncStream<Void>.Continuation

  init() {
    (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
  }

  func post(_ response: Fleetkit_V1_ReportLocationsResponse, credits: Int) {
    pending.withLock { p in
      p.response.acknowledged += response.acknowledged
      p.response.errors += response.errors
      p.credits += credits
    }
    wake.yield()
  }

  /// What has been answered since the last call, and the credits it gives back.
  func take() -> (Fleetkit_V1_ReportLocationsResponse, Int)? {
    pending.withLock { p in
      guard p.credits > 0 else { return nil }
      defer { p = Pending() }
      return (p.response, p.credits)
    }
  }

  /// Every answer is posted: the writer ends after sending them.
  func finish() {
    wake.yield()
    wake.finish()
  }
}
