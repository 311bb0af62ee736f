import FleetCore
import GRPCCore
import Synchronization

/// Reads what the gate needs from gRPC metadata and turns domain errors into RPC errors.
struct GRPCFront: Sendable {
  let gate: RequestGate
  let rpcs: FleetRPCs
  let requestIDs = RequestIDs()

  func respond<Input: Sendable, Output: Sendable>(
    _ operation: FleetOperation, _ request: ServerRequest<Input>,
    _ body: @escaping @Sendable (Input, Caller) async throws(FleetError) -> Output
  ) async throws -> ServerResponse<Output> {
    let metadata = request.metadata
    let message = request.message
    let authorization = metadata[stringValues: "authorization"].first(where: { _ in true })
    let requestID = metadata[stringValues: "x-request-id"].first(where: { _ in true }) ?? requestIDs.next()
    do {
      let output = try await gate.run(
        operation, transport: "grpc", authorization: authorization, requestID: requestID,
        timeout: GRPCTimeout.parse(metadata[stringValues: "grpc-timeout"].first(where: { _ in true }))
      ) { caller throws(FleetError) in try await body(message, caller) }
      return ServerResponse(message: output, metadata: ["x-request-id": "\(requestID)"])
    } catch {
      throw error.rpcError
    }
  }
}

/// Short, unique request IDs for logs when the client sends none.
final class RequestIDs: Sendable {
  let counter = Atomic<UInt64>(0)
  let prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)

  func next() -> String {
    "\(prefix)-\(String(counter.wrappingAdd(1, ordering: .relaxed).newValue, radix: 36))"
  }
}

/// gRPC's `grpc-timeout` header: up to 8 digits and a unit (H, M, S, m, u, n).
enum GRPCTimeout {
  static func parse(_ value: String?) -> Duration? {
    // At most 8 digits (the gRPC spec), which also keeps the arithmetic below from overflowing.
    guard let value, let unit = value.last, (1...8).contains(value.count - 1),
      let amount = Int64(value.dropLast()), amount >= 0
    else { return nil }
    switch unit {
    case "H": return .seconds(amount * 3600)
    case "M": return .seconds(amount * 60)
    case "S": return .seconds(amount)
    case "m": return .milliseconds(amount)
    case "u": return .microseconds(amount)
    case "n": return .nanoseconds(amount)
    default: return nil
    }
  }
}
