import NIOCore

/// One event loop as a task executor: the jobs of a task that prefers it run on that loop.
/// A call's task runs on its connection's loop, as NIO runs the connection's I/O there.
public final class LoopExecutor: TaskExecutor {
  public let loop: any EventLoop

  public init(_ loop: any EventLoop) { self.loop = loop }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
