import FleetGRPCTransport
import NIOCore
import NIOPosix
import Synchronization

/// Spreads long-lived streams' work over the event loops. NIO gives each connection a loop for
/// its I/O, and a task stays on the loop that resumed it, so a stream's handler runs where its
/// connection is. A client that carries thousands of vehicles' reports over one or two
/// connections would then load one loop while the other idled, whichever loop NIO happened to
/// pick for them. A stream run through `run` does its work on the loop running the fewest such
/// streams (its own loop among those when it runs on one, so that it hops only to even them out;
/// on fleetd's gRPC transport a call's handler runs on Dispatch's threads, `FrameServerTransport`,
/// and takes the first with the fewest); only its bytes stay with the connection.
final class LoopBalancer: Sendable {
  let executors: [LoopExecutor]
  /// Streams running on each loop.
  let streams: Mutex<[Int]>

  init(group: MultiThreadedEventLoopGroup = .singleton) {
    executors = group.makeIterator().map(LoopExecutor.init)
    streams = Mutex(Array(repeating: 0, count: executors.count))
  }

  func run<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
    let here = MultiThreadedEventLoopGroup.currentEventLoop
    let index = streams.withLock { counts in
      let fewest = counts.min()!
      let chosen =
        counts.indices.first { counts[$0] == fewest && executors[$0].loop === here } ?? counts.firstIndex(of: fewest)!
      counts[chosen] += 1
      return chosen
    }
    defer { streams.withLock { $0[index] -= 1 } }
    return try await withTaskExecutorPreference(executors[index], operation: body)
  }
}
