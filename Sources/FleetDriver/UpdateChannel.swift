import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization

/// How the reporter's updates reach fleetd: over one long-lived fleetkit.v1.VehicleUpdates
/// stream when the server offers it, else (Fleet Engine itself, an older fleetd) as unary
/// UpdateVehicle calls, for good once the stream was answered UNIMPLEMENTED. Each update is
/// answered alone either way, with UpdateVehicle's codes, so the reporter's rules stay the same.
/// A gateway relaying many vehicles (or a load generator) shares one channel between them with
/// a server token: each report names its vehicle. Delivery vehicles report on it too (their
/// unary call is UpdateDeliveryVehicle).
public final class UpdateChannel: Sendable {
  struct State {
    var unaryOnly = false
    /// A stream is open, or about to be: reports queue for its writer.
    var streamOpen = false
    /// Reports waiting for the stream's writer, each with the token it goes under.
    var queue: [(report: Fleetkit_V1_LocationReport, token: String)] = []
    /// The token the open stream was last given.
    var token: String?
    var nextSequence: UInt64 = 1
    var waiting: [UInt64: Waiter] = [:]
  }

  /// A report sent or queued, waiting for its answer until `deadline`.
  struct Waiter {
    let continuation: CheckedContinuation<Fleetkit_V1_Acknowledgement, any Error>
    let deadline: ContinuousClock.Instant
  }

  /// Reports in one message at most: what is queued when the writer is free goes together.
  public static let maximumBatch = 256

  let vehicles: Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>
  let deliveries: Maps_Fleetengine_Delivery_V1_DeliveryService.Client<HTTP2ClientTransport.Posix>
  let updates: Fleetkit_V1_VehicleUpdates.Client<HTTP2ClientTransport.Posix>
  let timeout: Duration
  /// The vehicle fields the answers need (the stream's read_mask); empty, all of them.
  let readMask: [String]
  let state = Mutex(State())
  let opening = Wakeup()
  /// Reports were queued for the writer.
  let queued = Wakeup()

  /// `readMask` names the top-level Vehicle fields the answers need (`waypoints`, …): a stream's
  /// acknowledgements carry only those; empty, the whole vehicle, as UpdateVehicle returns it.
  public init(client: GRPCClient<HTTP2ClientTransport.Posix>, timeout: Duration, readMask: [String] = []) {
    vehicles = .init(wrapping: client)
    deliveries = .init(wrapping: client)
    updates = .init(wrapping: client)
    self.timeout = timeout
    self.readMask = readMask
  }

  /// Sends one update and returns the vehicle as fleetd stored it (over the stream, with at
  /// least the fields of `readMask`). `run()` must be running: it writes the stream and fails the
  /// reports not answered within the timeout.
  public func send(_ request: Maps_Fleetengine_V1_UpdateVehicleRequest, token: String) async throws
    -> Maps_Fleetengine_V1_Vehicle
  {
    let report = Fleetkit_V1_LocationReport.with {
      $0.name = request.name
      $0.vehicle = request.vehicle
      $0.updateMask = request.updateMask
    }
    if let answer = try await streamedUnlessUnary(report, token: token) { return answer.vehicle }
    return try await vehicles.updateVehicle(request, metadata: ["authorization": "Bearer \(token)"], options: options)
  }

  /// Sends a delivery vehicle's update (its position and navigation) and returns the delivery
  /// vehicle as fleetd stored it, with its remaining stops.
  public func send(_ request: Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest, token: String) async throws
    -> Maps_Fleetengine_Delivery_V1_DeliveryVehicle
  {
    let report = Fleetkit_V1_LocationReport.with {
      $0.name = request.deliveryVehicle.name
      $0.deliveryVehicle = request.deliveryVehicle
      $0.updateMask = request.updateMask
    }
    if let answer = try await streamedUnlessUnary(report, token: token) { return answer.deliveryVehicle }
    return try await deliveries.updateDeliveryVehicle(
      request, metadata: ["authorization": "Bearer \(token)"], options: options)
  }

  /// The unary calls' options: the channel's timeout.
  var options: CallOptions {
    var options = CallOptions.defaults
    options.timeout = timeout
    return options
  }

  /// The report's answer over the stream; nil once fleetd has answered the stream UNIMPLEMENTED
  /// (the caller makes the unary call).
  func streamedUnlessUnary(_ report: Fleetkit_V1_LocationReport, token: String) async throws
    -> Fleetkit_V1_Acknowledgement?
  {
    guard !state.withLock({ $0.unaryOnly }) else { return nil }
    do {
      return try await streamed(report, token: token)
    } catch let error as RPCError where error.code == .unimplemented {
      state.withLock { $0.unaryOnly = true }
      return nil
    }
  }

  /// Keeps the stream open while updates are sent, reopening it after a failure, and fails the
  /// reports not answered in time; until cancelled. Reports queued while the writer is busy go
  /// out together in one message: one vehicle's app sends one at a time, a gateway or a load
  /// generator relaying many vehicles sends batches, which cost fleetd about half as much per
  /// report (docs/benchmarks.md, issue 22).
  public func run() async {
    await withDiscardingTaskGroup { group in
      group.addTask { await self.expireLateReports() }
      await stream()
      group.cancelAll()
    }
  }

  /// Every tenth of the timeout (10 ms to 1 s), fails the reports past their deadline: one timer
  /// for the channel rather than one per report, which a gateway relaying thousands of vehicles
  /// would pay for in wake-ups.
  func expireLateReports() async {
    let period = min(max(timeout / 10, .milliseconds(10)), .seconds(1))
    while !Task.isCancelled {
      try? await Task.sleep(for: period)
      let now = ContinuousClock.now
      let late = state.withLock { s in
        let late = s.waiting.filter { $0.value.deadline <= now }
        guard !late.isEmpty else { return late }
        for sequence in late.keys { s.waiting[sequence] = nil }
        s.queue.removeAll { late[$0.report.sequence] != nil }
        return late
      }
      for waiter in late.values {
        waiter.continuation.resume(
          throwing: RPCError(code: .deadlineExceeded, message: "fleetd did not answer the report within \(timeout)"))
      }
    }
  }

  /// Opens the stream when a report is queued and writes the queue to it; reopens it after it ends.
  func stream() async {
    while !Task.isCancelled {
      await opening.wait()
      guard state.withLock({ $0.streamOpen }) else { continue }
      var ending: any Error = RPCError(code: .unavailable, message: "the report stream ended")
      do {
        try await updates.reportLocations(
          requestProducer: { writer in
            while !Task.isCancelled {
              guard let message = self.nextMessage() else {
                await self.queued.wait()
                continue
              }
              try await writer.write(message)
            }
          },
          onResponse: { response in
            for try await answer in response.messages { self.deliver(answer) }
          })
      } catch {
        ending = error
      }
      end(with: ending)
    }
    end(with: CancellationError())
  }

  /// The queued reports that share the first one's token (up to `maximumBatch`), as one message;
  /// nil when none is queued.
  func nextMessage() -> Fleetkit_V1_ReportLocationsRequest? {
    state.withLock { s in
      guard let token = s.queue.first?.token else { return nil }
      let count = s.queue.prefix(Self.maximumBatch).prefix { $0.token == token }.count
      var message = Fleetkit_V1_ReportLocationsRequest()
      message.reports = s.queue.prefix(count).map(\.report)
      s.queue.removeFirst(count)
      message.returnVehicles = true
      message.readMask.paths = readMask
      // The token travels in-band, and only when it changes.
      if s.token != token {
        message.authorization = token
        s.token = token
      }
      return message
    }
  }

  /// One report on the stream, answered within the call timeout (`run` fails it when the
  /// deadline passes); given up on when the caller is cancelled.
  func streamed(_ unnumbered: Fleetkit_V1_LocationReport, token: String) async throws -> Fleetkit_V1_Acknowledgement {
    let sequence = state.withLock { s in
      defer { s.nextSequence += 1 }
      return s.nextSequence
    }
    var report = unnumbered
    report.sequence = sequence
    let deadline = ContinuousClock.now + timeout
    return try await withTaskCancellationHandler {
      try await answer(to: report, token: token, deadline: deadline)
    } onCancel: {
      abandon(sequence, CancellationError())
    }
  }

  /// Queues a report, opening the stream if none is open, and waits for its answer.
  /// Cancelled before it is queued (the cancellation handler found nothing to abandon), it
  /// fails at once.
  func answer(to report: Fleetkit_V1_LocationReport, token: String, deadline: ContinuousClock.Instant) async throws
    -> Fleetkit_V1_Acknowledgement
  {
    try await withCheckedThrowingContinuation { continuation in
      let opened = state.withLock { s -> Bool? in
        guard !Task.isCancelled else { return nil }
        let opened = !s.streamOpen
        if opened {
          s.streamOpen = true
          s.token = nil
        }
        s.waiting[report.sequence] = Waiter(continuation: continuation, deadline: deadline)
        s.queue.append((report, token))
        return opened
      }
      guard let opened else { return continuation.resume(throwing: CancellationError()) }
      if opened { opening.signal() }
      queued.signal()
    }
  }

  func deliver(_ answer: Fleetkit_V1_ReportLocationsResponse) {
    var ready:
      [(CheckedContinuation<Fleetkit_V1_Acknowledgement, any Error>, Result<Fleetkit_V1_Acknowledgement, any Error>)] =
        []
    state.withLock { s in
      for ack in answer.acknowledged {
        if let waiter = s.waiting.removeValue(forKey: ack.sequence) {
          ready.append((waiter.continuation, .success(ack)))
        }
      }
      for error in answer.errors {
        guard let waiter = s.waiting.removeValue(forKey: error.sequence) else { continue }
        let code = Status.Code(rawValue: Int(error.code)).flatMap { RPCError.Code($0) } ?? .unknown
        ready.append((waiter.continuation, .failure(RPCError(code: code, message: error.message))))
      }
    }
    for (waiter, result) in ready { waiter.resume(with: result) }
  }

  /// A report given up on (its caller cancelled): not sent if still queued (the reporter sends
  /// its fix again), and a late answer is dropped.
  func abandon(_ sequence: UInt64, _ error: any Error) {
    state.withLock { s in
      if let queued = s.queue.firstIndex(where: { $0.report.sequence == sequence }) { s.queue.remove(at: queued) }
      return s.waiting.removeValue(forKey: sequence)
    }?.continuation.resume(throwing: error)
  }

  /// The stream ended: every report still waiting (queued or sent) fails with its error, and
  /// the next update opens a new stream (or goes unary, when fleetd has no stream).
  func end(with error: any Error) {
    let waiting = state.withLock { s in
      defer {
        s.waiting = [:]
        s.queue = []
        s.streamOpen = false
        s.token = nil
      }
      return s.waiting
    }
    for waiter in waiting.values { waiter.continuation.resume(throwing: error) }
  }
}
