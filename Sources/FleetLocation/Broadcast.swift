import Foundation
import Synchronization

/// Hands each value to every current subscriber's `AsyncStream`. A subscriber that stops
/// iterating is dropped; a slow one keeps the newest `buffer` values.
final class Broadcast<Value: Sendable>: Sendable {
  let subscribers = Mutex<[UUID: AsyncStream<Value>.Continuation]>([:])
  let buffer: Int

  init(buffer: Int = 64) { self.buffer = buffer }

  /// A new subscription; `initial`, when it gives a value, is delivered first — read under the
  /// same lock as later values, so nothing falls between the two.
  func subscribe(initial: @Sendable () -> Value? = { nil }) -> AsyncStream<Value> {
    let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(buffer))
    let id = UUID()
    subscribers.withLock {
      if let first = initial() { continuation.yield(first) }
      $0[id] = continuation
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
    }
    return stream
  }

  func yield(_ value: Value) {
    subscribers.withLock { for continuation in $0.values { continuation.yield(value) } }
  }

  func finish() {
    let all = subscribers.withLock { s in
      defer { s.removeAll() }
      return Array(s.values)
    }
    for continuation in all { continuation.finish() }
  }
}
