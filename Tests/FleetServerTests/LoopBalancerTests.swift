import FleetGRPCTransport
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import FleetServer

/// Report streams opened on one connection (one loop) still spread their work over every loop.
@Suite("Loop balancer")
struct LoopBalancerTests {
  /// Streams opened one after another on the second loop, each open until all have started: the
  /// first stays on its own loop, and the rest alternate, so each loop runs half of them.
  @Test(.timeLimit(.minutes(1)))
  func streamsFromOneLoopSpreadOverEveryLoop() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let loops = Array(group.makeIterator())
    let balancer = LoopBalancer(group: group)
    let opening = LoopExecutor(loops[1])
    let streams = 6
    let record = Record()
    await withTaskGroup(of: Void.self) { tasks in
      for opened in 1...streams {
        tasks.addTask {
          await withTaskExecutorPreference(opening) {
            await balancer.run {
              let here = MultiThreadedEventLoopGroup.currentEventLoop
              record.ranOn.withLock { $0.append(loops.firstIndex { $0 === here } ?? -1) }
              record.started.add(1, ordering: .relaxed)
              while record.started.load(ordering: .relaxed) < streams { try? await Task.sleep(for: .milliseconds(5)) }
            }
          }
        }
        // The next stream opens once this one runs, so that it sees this one counted.
        while record.started.load(ordering: .relaxed) < opened { try? await Task.sleep(for: .milliseconds(1)) }
      }
    }
    #expect(record.ranOn.withLock { $0 } == [1, 0, 1, 0, 1, 0])
    // Every stream has ended: none is counted any more.
    #expect(balancer.streams.withLock { $0 } == [0, 0])
    try await group.shutdownGracefully()
  }

  /// What the streams saw: how many started, and on which loop each ran.
  final class Record: Sendable {
    let started = Atomic(0)
    let ranOn = Mutex<[Int]>([])
  }
}
