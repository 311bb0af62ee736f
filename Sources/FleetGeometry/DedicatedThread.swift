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
      nameCurrentThread(name)
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

/// Names the calling thread for the system (perf, top and debuggers show it). Done from inside
/// the thread, and on Linux through /proc as well: on Linux a thread starts with its creator's name,
/// and Foundation's `Thread.name` only reaches the system once the thread's creator has recorded
/// its handle, which a thread that starts running first has not seen yet.
func nameCurrentThread(_ name: String) {
  Thread.current.name = name
  #if os(Linux)
    // The system keeps at most 15 bytes; /proc/thread-self/comm is the calling thread's.
    let bytes = Data(name.utf8.prefix(15))
    try? bytes.write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
  #endif
}
