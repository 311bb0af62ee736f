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

  func synchronize() async throws(FleetError) {
    do {
      try await barrier()
    } catch {
      throw FleetError(.unavailable, "the other fleetd instances' changes cannot be read: \(error)")
    }
  }

  func run<T: Sendable>(
    _ operation: FleetOperation, transport: String, authorization: String?, requestID: String, timeout: Duration?,
    _ body: @escaping @Sendable (Caller) async throws(FleetError) -> T
  ) async throws(FleetError) -> T {
    let start = ContinuousClock.now
    var caller: Caller?
    let result: Result<T, FleetError>
    do {
      let verified = try await verifier.verify(authorizationHeader: authorization)
      caller = verified
      let now = (start - epoch).seconds
      let share = quotaShare()
      try quotas.withLock { (q: inout QuotaLimiter) throws(FleetError) in
        try q.acquire(provider: verified.provider, bucket: operation.bucket, now: now, share: share)
      }
      try await synchronize()
      result = .success(try await Self.within(timeout) { () async throws(FleetError) -> T in try await body(verified) })
    } catch {
      result = .failure(error)
    }
    let elapsed = ContinuousClock.now - start
    let code = (try? result.get()).map { _ in "OK" } ?? result.failure!.code.metricsLabel
    metrics.record(rpc: operation.rawValue, transport: transport, code: code, duration: elapsed)
    switch result {
    case .success(let value):
      if logger.logLevel <= .debug {
        logger.debug("ok", metadata: metadata(operation, requestID, caller, elapsed))
      }
      return value
    case .failure(let error):
      let level: Logger.Level = error.code == .internal || error.code == .unavailable ? .error : .info
      logger.log(
        level: level, "\(error.code.rawValue): \(error.message)",
        metadata: metadata(operation, requestID, caller, elapsed))
      throw error
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
