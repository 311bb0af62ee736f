import NIOPosix

/// Work that grows with the request — a 100×100 table, a long trace to match, a search that
/// routes hundreds of a city's cars — takes from a millisecond to tens of them. fleetd's tasks
/// run on the event loops, and work held there delays every connection that loop serves
/// (reports, pushes). Such work runs on NIO's thread pool instead, and the loops go on
/// meanwhile; work done sooner than the hop to another thread and back stays where it is.
enum OffLoop {
  static func run<T: Sendable, Failure: Error>(_ work: @escaping @Sendable () throws(Failure) -> T)
    async throws(Failure) -> T
  {
    let result: Result<T, Failure>
    do {
      result = try await NIOThreadPool.singleton.runIfActive { () -> Result<T, Failure> in
        do throws(Failure) { return .success(try work()) } catch { return .failure(error) }
      }
    } catch {
      // The pool has shut down (the process is stopping): done here instead.
      result = Result { () throws(Failure) -> T in try work() }
    }
    return try result.get()
  }
}
