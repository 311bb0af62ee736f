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
/// Plaintext HTTP/2 (prior knowledge), identity encoding only (a compressed message is answered
/// UNIMPLEMENTED), request messages up to `maximumRequestBytes` (RESOURCE_EXHAUSTED past it),
/// keepalive PINGs to a silent client. Not done: limits on how often a client may PING.
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
    let intake = CallIntake(streamHandler)
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

    await withTaskCancellationHandler {
      await intake.waitUntilIdle()
    } onCancel: {
      listener.close(promise: nil)
      intake.cancelAll()
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

/// Every connection and every call's task, so that shutdown reaches them and `listen` returns
/// once the listener is closed, the last connection with it, and the last call.
///
/// A call's task is started by its connection, on the connection's loop: NIO runs a task
/// started on a loop there (fleetd installs NIO's loops as Swift's executor), beside the
/// connection's I/O, and work it waits for elsewhere resumes on whichever loop NIO gives it, as
/// a call on grpc-swift's own transport does. Tasks from one task taking every connection's
/// calls would all start on its own loop, and a task held to its connection's loop would fill
/// that loop when one connection is busy.
final class CallIntake: Sendable {
  struct Call: Sendable {
    let stream: RPCStream<FrameServerTransport.Inbound, FrameServerTransport.Outbound>
    let peer: String
    let local: String
    let cancellation: CallCancellation
  }

  struct State {
    var connections: [ObjectIdentifier: FrameConnection] = [:]
    var listening = true
    var draining = false
    var running: [UInt64: Task<Void, Never>] = [:]
    /// Calls whose task ended before it was recorded in `running`.
    var endedEarly: Set<UInt64> = []
    var nextCall: UInt64 = 0
    var cancelled = false
    var idle: CheckedContinuation<Void, Never>?

    var isIdle: Bool { !listening && connections.isEmpty && running.isEmpty }

    /// The waiter to resume, when the intake just became idle.
    mutating func takeIdleWaiter() -> CheckedContinuation<Void, Never>? {
      guard isIdle, let waiter = idle else { return nil }
      idle = nil
      return waiter
    }
  }

  let handler:
    @Sendable (RPCStream<FrameServerTransport.Inbound, FrameServerTransport.Outbound>, ServerContext) async -> Void
  let state = Mutex(State())

  init(
    _ handler:
      @escaping @Sendable (
        RPCStream<FrameServerTransport.Inbound, FrameServerTransport.Outbound>, ServerContext
      ) async -> Void
  ) {
    self.handler = handler
  }

  /// From a connection's loop: the call's task.
  func start(_ call: Call) {
    let id = state.withLock { s in
      s.nextCall += 1
      return s.nextCall
    }
    let handler = handler
    let task = Task {
      await withServerContextRPCCancellationHandle { handle in
        call.cancellation.attach(handle)
        let context = ServerContext(
          descriptor: call.stream.descriptor, remotePeer: call.peer, localPeer: call.local, cancellation: handle)
        await handler(call.stream, context)
      }
      self.ended(id)
    }
    let cancel = state.withLock { s in
      if s.endedEarly.remove(id) != nil { return false }
      s.running[id] = task
      return s.cancelled
    }
    if cancel { task.cancel() }
  }

  func ended(_ id: UInt64) {
    let waiter = state.withLock { s in
      if s.running.removeValue(forKey: id) == nil { s.endedEarly.insert(id) }
      return s.takeIdleWaiter()
    }
    waiter?.resume()
  }

  /// Returns once the listener is closed and every connection and call has ended.
  func waitUntilIdle() async {
    await withCheckedContinuation { continuation in
      let idle = state.withLock { s in
        if !s.isIdle { s.idle = continuation }
        return s.isIdle
      }
      if idle { continuation.resume() }
    }
  }

  /// A new connection; false when the server is shutting down (it should drain at once).
  func add(_ connection: FrameConnection) -> Bool {
    state.withLock { s in
      s.connections[ObjectIdentifier(connection)] = connection
      return !s.draining
    }
  }

  func remove(_ connection: FrameConnection) {
    let waiter = state.withLock { s in
      s.connections[ObjectIdentifier(connection)] = nil
      return s.takeIdleWaiter()
    }
    waiter?.resume()
  }

  func stopListening() {
    let waiter = state.withLock { s in
      s.listening = false
      return s.takeIdleWaiter()
    }
    waiter?.resume()
  }

  func drainAll() {
    let connections = state.withLock { s in
      s.draining = true
      return Array(s.connections.values)
    }
    for connection in connections { connection.loop.execute { connection.drain() } }
  }

  /// `listen` was cancelled: every call's task is cancelled and every connection closed.
  func cancelAll() {
    let (connections, tasks) = state.withLock { s in
      s.cancelled = true
      return (Array(s.connections.values), Array(s.running.values))
    }
    for task in tasks { task.cancel() }
    for connection in connections { connection.loop.execute { connection.context?.close(promise: nil) } }
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
