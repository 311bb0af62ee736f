import FleetAuth
import FleetCore
import Foundation
import Logging
import Synchronization

/// What every request goes through, whichever transport brought it: authentication, the
/// provider's quota, the client's deadline, then one domain call; metrics and a log line after.
final class RequestGate: Sendable {
  let verifier: TokenVerifier
  let quotas: Mutex<QuotaLimiter>
  let metrics: RequestMetrics
  let logger: Logger
  let epoch = ContinuousClock.now
  /// How many instances share the quotas (each allows its part).
  let quotaShare: @Sendable () -> Int
  /// Run before each call: with several instances, it applies the others' commits made before
  /// the request arrived, so that a client sees its own writes whichever instance it reaches.
  let barrier: @Sendable () async throws -> Void

  init(
    verifier: TokenVerifier, quotas: QuotaConfiguration, quotaShare: @escaping @Sendable () -> Int = { 1 },
    barrier: @escaping @Sendable () async throws -> Void = {}, metrics: RequestMetrics, logger: Logger
  ) {
    self.verifier = verifier
    self.quotaShare = quotaShare
    self.barrier = barrier
    self.quotas = Mutex(QuotaLimiter(configuration: quotas))
    self.metrics = metrics
    self.logger = logger
  }

  /// What a call may go on with: its caller, and how many of its items (one for most calls, a
  /// message's location reports) its provider's quota allowed; the rest are refused.
  struct Admission: Sendable {
    let caller: Caller
    let granted: Int
    let refusal: FleetError?
  }

  /// The front half of every call: the caller's token, one quota token per item, and with
  /// several instances the read barrier (the others' commits made before the call arrived).
  func admit(_ operation: FleetOperation, items: Int = 1, authorization: String?) async throws(FleetError)
    -> Admission
  {
    let caller = try await verifier.verify(authorizationHeader: authorization)
    let now = (ContinuousClock.now - epoch).seconds
    let share = quotaShare()
    let (granted, refusal) = quotas.withLock { q in
      q.acquire(upTo: items, provider: caller.provider, bucket: operation.bucket, now: now, share: share)
    }
    if granted > 0 {
      do {
        try await barrier()
      } catch {
        throw FleetError(.unavailable, "the other fleetd instances' changes cannot be read: \(error)")
      }
    }
    return Admission(caller: caller, granted: granted, refusal: refusal)
  }

  func run<T: Sendable>(
    _ operation: FleetOperation, transport: String, authorization: String?, requestID: String, timeout: Duration?,
    _ body: @escaping @Sendable (Caller) async throws(FleetError) -> T
  ) async throws(FleetError) -> T {
    let start = ContinuousClock.now
    var caller: Caller?
    let result: Result<T, FleetError>
    do throws(FleetError) {
      let admission = try await admit(operation, authorization: authorization)
      caller = admission.caller
      if let refusal = admission.refusal { throw refusal }
      result = .success(
        try await Self.within(timeout) { () async throws(FleetError) -> T in try await body(admission.caller) })
    } catch {
      result = .failure(error)
    }
    record(
      operation, transport: transport, requestID: requestID, caller: caller, outcomes: [result.failure],
      elapsed: ContinuousClock.now - start)
    return try result.get()
  }

  /// The back half: one metric per item, a log line for each item refused (at error level when
  /// the server failed it), and, when `call` names what went well, one debug line for the call.
  /// `item` names an item in its line ("report 17"); a call of one item needs none.
  func record(
    _ operation: FleetOperation, transport: String, requestID: String, caller: Caller?, outcomes: [FleetError?],
    item: ((Int) -> String)? = nil, elapsed: Duration, call: String? = "ok"
  ) {
    if outcomes.count == 1 {
      // Most calls: no counting to do.
      let code = outcomes[0]?.code.metricsLabel ?? "OK"
      metrics.record(rpc: operation.rawValue, transport: transport, code: code, duration: elapsed)
    } else {
      var counts: [String: Int] = [:]
      for outcome in outcomes { counts[outcome?.code.metricsLabel ?? "OK", default: 0] += 1 }
      for (code, count) in counts {
        metrics.record(rpc: operation.rawValue, transport: transport, code: code, duration: elapsed, count: count)
      }
    }
    for (i, outcome) in outcomes.enumerated() {
      guard let error = outcome else { continue }
      let level: Logger.Level = error.code == .internal || error.code == .unavailable ? .error : .info
      let item = item.map { "\($0(i)): " } ?? ""
      logger.log(
        level: level, "\(item)\(error.code.rawValue): \(error.message)",
        metadata: metadata(operation, requestID, caller, elapsed))
    }
    // A call of one refused item has said everything in that item's line.
    let refusedAlone = outcomes.count == 1 && outcomes[0] != nil
    if let call, !refusedAlone, logger.logLevel <= .debug {
      logger.debug("\(call)", metadata: metadata(operation, requestID, caller, elapsed))
    }
  }

  /// Built only when a line is logged: the hot path of a successful request logs nothing.
  func metadata(_ operation: FleetOperation, _ requestID: String, _ caller: Caller?, _ elapsed: Duration)
    -> Logger.Metadata
  {
    var metadata: Logger.Metadata = [
      "request.id": "\(requestID)", "rpc": "\(operation.rawValue)", "duration.ms": "\(elapsed.milliseconds)",
    ]
    if let caller {
      metadata["provider"] = "\(caller.provider)"
      metadata["role"] = "\(caller.role.rawValue)"
    }
    return metadata
  }

  /// Runs `body`, failing with DEADLINE_EXCEEDED if `timeout` passes first.
  static func within<T: Sendable>(
    _ timeout: Duration?, _ body: @escaping @Sendable () async throws(FleetError) -> T
  ) async throws(FleetError) -> T {
    guard let timeout else { return try await body() }
    guard timeout > .zero else { throw FleetError(.deadlineExceeded, "the request's deadline had already passed") }
    let outcome: Result<T, FleetError>? = await withTaskGroup(of: Result<T, FleetError>?.self) { group in
      group.addTask {
        do throws(FleetError) { return .success(try await body()) } catch { return .failure(error) }
      }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
    guard let outcome else {
      throw FleetError(.deadlineExceeded, "the request's deadline of \(timeout) passed before it completed")
    }
    return try outcome.get()
  }
}

extension Duration {
  var milliseconds: String { String(format: "%.3f", seconds * 1000) }
}

extension Result {
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
