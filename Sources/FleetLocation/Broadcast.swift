import Foundation
import Synchronization

/// Hands each value to every current subscriber's `AsyncStream`. A subscriber that stops
/// iterating is dropped; a slow one keeps the newest `buffer` values.
final class Broadcast<Value: Sendable>: Sendable {
  let subscribers = Mutex<[UUID: AsyncStream<Value>.Continuation]>([:])
  let buffer: Int

  init(buffer: Int = 64) { self.buffer = buffer }

  /// A new subscription; `initial`, when it gives a value, is delivered first. Callers that need
  /// nothing to fall between the initial value and later ones read it under the same lock of
  /// their own that they hold while yielding. (The stream is new here: nobody waits on it yet,
  /// so yielding under our lock wakes no task.)
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
    // Not under the lock: a yield can wake a consumer, which takes that task's own lock, while
    // a consumer being cancelled holds its task's lock and then takes ours (`onTermination`).
    // Holding ours across the yield deadlocks the two.
    let targets = subscribers.withLock { Array($0.values) }
    for continuation in targets { continuation.yield(value) }
  }

  func finish() {
    let all = subscribers.withLock { s in
      defer { s.removeAll() }
      return Array(s.values)
    }
    for continuation in all { continuation.finish() }
  }
}
