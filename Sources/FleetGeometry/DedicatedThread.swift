import Foundation

/// Runs `work` on a thread of its own and returns its result. For seconds of synchronous CPU
/// (building a road graph's hierarchy, a geocoding index): Swift's concurrency runs on a few
/// shared threads, and holding one that long starves every other task in the process — servers
/// stop answering, timers stop firing.
public func onDedicatedThread<T: Sendable>(
  named name: String, stackSize: Int = 16 << 20, _ work: @escaping @Sendable () throws -> T
) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    let thread = Thread { continuation.resume(with: Result { try work() }) }
    thread.name = name
    thread.stackSize = stackSize
    thread.start()
  }
}
