import Foundation

/// Runs `work` on a thread of its own and returns its result. For synchronous CPU that takes
/// from a tenth of a second (a dispatch round's matching) to seconds (building a road graph's
/// hierarchy, a geocoding index): Swift's concurrency runs on as many shared threads as there are
/// cores, and holding one that long leaves every other task in the process the rest — answers
/// queue, timers fire late.
public func onDedicatedThread<T: Sendable, Failure: Error>(
  named name: String, stackSize: Int = 16 << 20, _ work: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
  let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
    let thread = Thread {
      // Named from inside: on Linux a thread starts with its creator's name, and a name set
      // before the start does not reach the system (perf, top and debuggers show this one).
      Thread.current.name = name
      do throws(Failure) {
        continuation.resume(returning: .success(try work()))
      } catch {
        continuation.resume(returning: .failure(error))
      }
    }
    thread.stackSize = stackSize
    thread.start()
  }
  return try result.get()
}
