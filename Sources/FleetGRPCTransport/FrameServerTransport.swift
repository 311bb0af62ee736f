import GRPCCore
import NIOCore
import NIOHTTP2
import NIOPosix
import Synchronization

/// A grpc-swift server transport that reads and writes each connection's HTTP/2 frames itself,
/// on the connection's event loop: no child channel, handler pipeline or NIO async channel per
/// call, and the writes of many calls flushed together. grpc-swift's `GRPCServer` still routes
/// each call to its service, so services, interceptors and status codes are grpc-swift's own;
/// only the per-call transport work is cut (about a fifth of the stack's CPU under a metro's
/// mix of streamed reports, pushes and searches: docs/benchmarks.md).
///
/// Plaintext HTTP/2 (prior knowledge); request messages compressed with gzip or deflate are read
/// (another `grpc-encoding` is answered UNIMPLEMENTED), responses go uncompressed; request
/// messages up to `maximumRequestBytes`, inflated, (RESOURCE_EXHAUSTED past it),
/// keepalive PINGs to a silent client, gRPC's limit on how often a client may PING (gRFC A8).
/// Flow control: a stream's window is given back as its service reads, so a client cannot
/// queue more than a window of unread messages; a service's writer waits while more than a
/// window of its writes is not yet on the socket.
public final class FrameServerTransport: ServerTransport, Sendable {
  public typealias Bytes = [UInt8]

  public struct Configuration: Sendable {
    /// The largest request message accepted, in bytes.
    public var maximumRequestBytes = 4 * 1024 * 1024
    /// Each stream's HTTP/2 window and the most a writer has in flight, in bytes.
    public var window = 65_535
    /// A connection that has sent nothing for this long is sent a PING, and closed if it does
    /// not answer within `keepaliveTimeout`: a client that vanished (a phone out of coverage)
    /// does not hold its streams open for good. gRPC's server defaults: 2 hours and 20 s.
    public var keepaliveTime = Duration.seconds(2 * 60 * 60)
    public var keepaliveTimeout = Duration.seconds(20)
    /// How often a client may PING (gRFC A8, gRPC's server default: every 5 minutes while it has
    /// calls, every 2 hours without unless `pingsWithoutCalls`). A sooner PING is a strike; the
    /// third closes the connection with GOAWAY ENHANCE_YOUR_CALM ("too_many_pings"), which
    /// gRPC's clients take as the sign to PING less often. Each PING costs the server an
    /// acknowledgement: an unlimited stream of them would keep a loop busy for nothing.
    public var minimumPingInterval = Duration.seconds(5 * 60)
    public var pingsWithoutCalls = false

    public init() {}
  }

  let host: String
  let port: Int
  let configuration: Configuration
  let address = ListeningAddress()
  let state = Mutex<State>(State())

  struct State {
    var listener: (any Channel)?
    var intake: CallIntake?
    var shuttingDown = false
  }

  /// `host` is an IPv4 or IPv6 address (or `localhost`); port 0 picks a free one.
  public init(host: String, port: Int, configuration: Configuration = .init()) {
    self.host = host
    self.port = port
    self.configuration = configuration
  }

  /// The address listened on, once bound; throws if listening failed or the transport was shut
  /// down first.
  public var listeningAddress: SocketAddress {
    get async throws { try await address.get() }
  }

  public func listen(
    streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
  ) async throws {
    let (connections, accept) = AsyncStream.makeStream(of: AsyncStream<CallIntake.Call>.self)
    let intake = CallIntake(accept)
    let settings: HTTP2Settings = [
      HTTP2Setting(parameter: .maxConcurrentStreams, value: Int(Int32.max)),
      HTTP2Setting(parameter: .initialWindowSize, value: configuration.window),
      HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
    ]
    let configuration = self.configuration
    let listener: any Channel
    do {
      guard !state.withLock({ $0.shuttingDown }) else {
        throw RPCError(code: .unavailable, message: "the server was shut down before it listened")
      }
      listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
              NIOHTTP2Handler(mode: .server, initialSettings: settings),
              FrameConnection(loop: channel.eventLoop, settings: configuration, calls: intake),
            ])
          }
        }
        .bind(host: host == "localhost" ? "127.0.0.1" : host, port: port).get()
    } catch {
      address.fail(error)
      accept.finish()
      throw error
    }
    let shutDownMeanwhile = state.withLock { s in
      s.listener = listener
      s.intake = intake
      return s.shuttingDown
    }
    address.set(listener.localAddress!)
    listener.closeFuture.whenComplete { _ in intake.stopListening() }
    if shutDownMeanwhile { beginGracefulShutdown() }

    // Each call's task is a descendant of this one, as on grpc-swift's own transport: the
    // services see this task's task-locals (swift-service-lifecycle's graceful shutdown, which
    // ends fleetd's report streams, among them), and cancelling `listen` cancels them. Each
    // connection's calls are children of a task of their own: a task group walks its list of
    // children to remove one that ended, and one group for every connection's streams (thousands
    // of reports and watchers) made each short call's end walk them all (a quarter of the
    // transport's CPU under the metro's mix). A call starts on its connection's loop and then runs
    // under `globalConcurrentExecutor`: held to its connection's loop, one busy connection would
    // fill that loop. That executor is Swift's own pool (Dispatch's threads on Linux), not the
    // global executor fleetd gives NIO's loops (swift-nio's hook takes over the runtime's global
    // enqueue, which that executor does not go through): in fleetd a unary call (a search, a
    // booking) runs on Dispatch's threads beside the loops, and the report streams, which
    // `LoopBalancer` places, on the loops. With no preference every call ran on the loops; that
    // was measured and not kept (docs/benchmarks.md).
    await withTaskCancellationHandler {
      await withDiscardingTaskGroup { group in
        for await calls in connections {
          group.addTask { await Self.serve(calls, streamHandler) }
        }
      }
    } onCancel: {
      listener.close(promise: nil)
      intake.closeAll()
    }
  }

  /// One connection's calls, each in a task of this task's group, until the connection closes
  /// and its calls have ended.
  static func serve(
    _ calls: AsyncStream<CallIntake.Call>,
    _ streamHandler: @escaping @Sendable (RPCStream<Inbound, Outbound>, ServerContext) async -> Void
  ) async {
    await withDiscardingTaskGroup { group in
      for await call in calls {
        group.addTask(executorPreference: call.executor) {
          await withTaskExecutorPreference(globalConcurrentExecutor) {
            await withServerContextRPCCancellationHandle { handle in
              call.cancellation.attach(handle)
              let context = ServerContext(
                descriptor: call.stream.descriptor, remotePeer: call.peer, localPeer: call.local, cancellation: handle)
              await streamHandler(call.stream, context)
            }
          }
        }
      }
    }
  }

  /// Stops accepting connections and tells each open one (GOAWAY) to start no new call;
  /// `listen` returns once their calls have ended.
  public func beginGracefulShutdown() {
    let (listener, intake) = state.withLock { s in
      s.shuttingDown = true
      return (s.listener, s.intake)
    }
    if listener == nil {
      address.fail(RPCError(code: .unavailable, message: "the server was shut down before it listened"))
    }
    listener?.close(promise: nil)
    intake?.drainAll()
  }
}

/// Each connection's calls on their way to `listen`'s task group, and the connections, so that
/// shutdown reaches them; the connections' streams end once the listener is closed and the last
/// connection with it.
final class CallIntake: Sendable {
  struct Call: Sendable {
    let stream: RPCStream<FrameServerTransport.Inbound, FrameServerTransport.Outbound>
    let peer: String
    let local: String
    let cancellation: CallCancellation
    /// The connection's loop, where the call's task starts.
    let executor: LoopExecutor
  }

  struct State {
    var connections: [ObjectIdentifier: FrameConnection] = [:]
    var listening = true
    var draining = false
  }

  let accept: AsyncStream<AsyncStream<Call>>.Continuation
  let state = Mutex(State())

  init(_ accept: AsyncStream<AsyncStream<Call>>.Continuation) { self.accept = accept }

  /// A new connection, whose calls come on `calls`; false when the server is shutting down or
  /// `listen` takes no more connections (it should drain at once: its calls would not be served).
  func add(_ connection: FrameConnection, calls: AsyncStream<Call>) -> Bool {
    let draining = state.withLock { s in
      s.connections[ObjectIdentifier(connection)] = connection
      return s.draining
    }
    if case .terminated = accept.yield(calls) { return false }
    return !draining
  }

  func remove(_ connection: FrameConnection) {
    let done = state.withLock { s in
      s.connections[ObjectIdentifier(connection)] = nil
      return !s.listening && s.connections.isEmpty
    }
    if done { accept.finish() }
  }

  func stopListening() {
    let done = state.withLock { s in
      s.listening = false
      return s.connections.isEmpty
    }
    if done { accept.finish() }
  }

  func drainAll() {
    let connections = state.withLock { s in
      s.draining = true
      return Array(s.connections.values)
    }
    for connection in connections { connection.loop.execute { connection.drain() } }
  }

  /// `listen` was cancelled: every connection is closed (the group cancels the calls' tasks).
  func closeAll() {
    let connections = state.withLock { Array($0.connections.values) }
    for connection in connections { connection.loop.execute { connection.context?.close(promise: nil) } }
  }
}

/// One event loop as a task executor: the jobs of a task that prefers it run on that loop.
public final class LoopExecutor: TaskExecutor {
  public let loop: any EventLoop

  public init(_ loop: any EventLoop) { self.loop = loop }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}

/// The bound address, for those who wait for it.
final class ListeningAddress: Sendable {
  struct State {
    var result: Result<SocketAddress, any Error>?
    var waiters: [CheckedContinuation<SocketAddress, any Error>] = []
  }

  let state = Mutex(State())

  func get() async throws -> SocketAddress {
    try await withCheckedThrowingContinuation { continuation in
      let result: Result<SocketAddress, any Error>? = state.withLock { s in
        if s.result == nil { s.waiters.append(continuation) }
        return s.result
      }
      if let result { continuation.resume(with: result) }
    }
  }

  func set(_ address: SocketAddress) { settle(.success(address)) }
  func fail(_ error: any Error) { settle(.failure(error)) }

  func settle(_ result: Result<SocketAddress, any Error>) {
    let waiters = state.withLock { s -> [CheckedContinuation<SocketAddress, any Error>] in
      guard s.result == nil else { return [] }
      s.result = result
      defer { s.waiters = [] }
      return s.waiters
    }
    for waiter in waiters { waiter.resume(with: result) }
  }
}
