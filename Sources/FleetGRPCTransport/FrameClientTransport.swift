import GRPCCore
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A grpc-swift client transport that reads and writes one HTTP/2 connection's frames itself, on
/// the connection's event loop: the client side of `FrameServerTransport`, with no child channel,
/// handler pipeline or NIO async channel per call. For load generators that hold thousands of
/// streams: under the metro's mix grpc-swift's own client took more of the machine than the
/// server it loaded (docs/benchmarks.md).
///
/// HTTP/2 in plaintext (prior knowledge) or over TLS (ALPN h2, the system's trust roots),
/// identity encoding, response messages up to
/// `maximumResponseBytes`. `connect()` keeps one connection open, reconnecting with backoff when
/// it closes or the server sends GOAWAY; a call begun while there is none waits for the next, as
/// grpc-swift's transport does for a new connection, and fails UNAVAILABLE once the transport is
/// shut down. No retry throttle and no service config: grpc-swift's client defaults apply.
public final class FrameClientTransport: ClientTransport, Sendable {
  public typealias Bytes = [UInt8]

  public struct Configuration: Sendable {
    /// The largest response message accepted, in bytes.
    public var maximumResponseBytes = 4 * 1024 * 1024
    /// Each stream's HTTP/2 window and the most a writer has in flight, in bytes.
    public var window = 65_535
    /// The wait before connecting again: the first, its growth after each failure, and its bound.
    public var initialBackoff = Duration.milliseconds(250)
    public var backoffMultiplier = 1.6
    public var maximumBackoff = Duration.seconds(5)
    /// TLS, verifying the server's certificate against the system's trust roots and `host`.
    public var usesTLS = false

    public init() {}
  }

  struct State {
    /// The connection new calls go on, while it is open and not going away.
    var connection: FrameClientConnection?
    /// Calls waiting for a connection.
    var waiters: [UInt64: CheckedContinuation<FrameClientConnection, any Error>] = [:]
    var nextWaiter: UInt64 = 0
    var shutDown = false
  }

  let host: String
  let port: Int
  let configuration: Configuration
  let state = Mutex(State())

  /// `host` is a name or an address.
  public init(host: String, port: Int, configuration: Configuration = .init()) {
    self.host = host
    self.port = port
    self.configuration = configuration
  }

  public var retryThrottle: RetryThrottle? { nil }

  public func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? { nil }

  /// Keeps a connection open until the transport is shut down (or this task cancelled), then
  /// returns once the last call on it has ended.
  public func connect() async throws {
    var backoff = configuration.initialBackoff
    await withTaskCancellationHandler {
      while !state.withLock({ $0.shutDown }) {
        if let (channel, connection) = try? await open() {
          backoff = configuration.initialBackoff
          try? await channel.closeFuture.get()
          lost(connection)
        } else {
          guard (try? await Task.sleep(for: backoff)) != nil else { break }
          backoff = min(backoff * configuration.backoffMultiplier, configuration.maximumBackoff)
        }
      }
    } onCancel: {
      let connection = state.withLock { s in
        s.shutDown = true
        return s.connection
      }
      connection?.loop.execute { connection?.context?.close(promise: nil) }
    }
    let waiters = state.withLock { s in
      s.shutDown = true
      defer { s.waiters = [:] }
      return Array(s.waiters.values)
    }
    for waiter in waiters {
      waiter.resume(throwing: RPCError(code: .unavailable, message: "the client transport was shut down"))
    }
  }

  /// One connection, made the one new calls go on.
  func open() async throws -> (any Channel, FrameClientConnection) {
    let settings: HTTP2Settings = [
      HTTP2Setting(parameter: .enablePush, value: 0),
      HTTP2Setting(parameter: .initialWindowSize, value: configuration.window),
      HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
    ]
    let configuration = self.configuration
    let host = host
    let authority = "\(host):\(port)"
    let tls = try configuration.usesTLS ? Self.tlsContext() : nil
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .channelOption(.socketOption(.tcp_nodelay), value: 1)
      .connectTimeout(.seconds(20))
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          if let tls {
            // SNI takes a name, not an address.
            let name = (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
          }
          try channel.pipeline.syncOperations.addHandlers([
            NIOHTTP2Handler(mode: .client, initialSettings: settings),
            FrameClientConnection(
              loop: channel.eventLoop, configuration: configuration, authority: authority, transport: self),
          ])
        }
      }
      .connect(host: host, port: port).get()
    let connection = try await channel.pipeline.handler(type: FrameClientConnection.self).get()
    let (waiters, shutDown) = state.withLock { s in
      if !s.shutDown { s.connection = connection }
      defer { if !s.shutDown { s.waiters = [:] } }
      return (s.shutDown ? [] : Array(s.waiters.values), s.shutDown)
    }
    if shutDown { channel.close(promise: nil) }
    for waiter in waiters { waiter.resume(returning: connection) }
    return (channel, connection)
  }

  static func tlsContext() throws -> NIOSSLContext {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.applicationProtocols = ["h2"]
    return try NIOSSLContext(configuration: tls)
  }

  /// From the connection's loop: it closed or is going away; new calls wait for the next one.
  func lost(_ connection: FrameClientConnection) {
    state.withLock { s in
      if s.connection === connection { s.connection = nil }
    }
  }

  /// New calls fail from now on; the connection closes once its calls have ended, and `connect`
  /// returns then.
  public func beginGracefulShutdown() {
    let (connection, waiters) = state.withLock { s in
      s.shutDown = true
      defer { s.waiters = [:] }
      return (s.connection, Array(s.waiters.values))
    }
    for waiter in waiters {
      waiter.resume(throwing: RPCError(code: .unavailable, message: "the client transport was shut down"))
    }
    connection?.loop.execute { connection?.drain() }
  }

  public func withStream<T: Sendable>(
    descriptor: MethodDescriptor, options: CallOptions,
    _ closure: (_ stream: RPCStream<Inbound, Outbound>, _ context: ClientContext) async throws -> T
  ) async throws -> T {
    let connection = try await readyConnection()
    let call = FrameClientConnection.Call(
      descriptor: descriptor, timeout: options.timeout, window: configuration.window, connection: connection)
    let stream = RPCStream(
      descriptor: descriptor, inbound: RPCAsyncSequence(wrapping: call.response),
      outbound: RPCWriter<RPCRequestPart<[UInt8]>>.Closable(
        wrapping: OutboundParts(sink: connection, call: call, room: call.room, size: FrameClientConnection.messageBytes)
      ))
    let context = ClientContext(descriptor: descriptor, remotePeer: connection.peer, localPeer: connection.local)
    // However the caller leaves the call, its stream is over: one still open is reset.
    defer { connection.loop.execute { connection.reset(call) } }
    return try await closure(stream, context)
  }

  func readyConnection() async throws -> FrameClientConnection {
    let id = state.withLock { s -> UInt64 in
      s.nextWaiter += 1
      return s.nextWaiter
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let ready: Result<FrameClientConnection, any Error>? = state.withLock { s in
          if s.shutDown {
            return .failure(RPCError(code: .unavailable, message: "the client transport was shut down"))
          }
          if let connection = s.connection { return .success(connection) }
          s.waiters[id] = continuation
          return nil
        }
        if let ready { continuation.resume(with: ready) }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume(throwing: RPCError(code: .cancelled, message: "the call was cancelled waiting for a connection"))
    }
  }
}

/// One client HTTP/2 connection's calls, read and written as frames on the connection's loop.
/// Confined to that loop (every mutable property is touched from handler callbacks or from work
/// submitted to the loop), hence `@unchecked Sendable`.
final class FrameClientConnection: ChannelInboundHandler, FrameSink, @unchecked Sendable {
  typealias InboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame
  typealias Part = RPCRequestPart<[UInt8]>
  typealias Handle = Call

  /// One call: its response parts, its writer's room, and on the loop its HTTP/2 stream.
  final class Call: @unchecked Sendable {
    let descriptor: MethodDescriptor
    let timeout: Duration?
    let response: InboundParts<RPCResponsePart<[UInt8]>>
    let room: WriteRoom
    // On the connection's loop only:
    /// The stream, once the request's headers went out.
    var id: HTTP2StreamID?
    /// Bytes of a message not yet whole.
    var partial = ByteBuffer()
    /// Bytes read and not yet returned to the stream's window.
    var owed = 0
    /// The response's headers came.
    var answered = false
    /// The request's last frame went out.
    var requestEnded = false
    /// The call is over (status, reset, or the connection gone).
    var over = false

    init(descriptor: MethodDescriptor, timeout: Duration?, window: Int, connection: FrameClientConnection) {
      self.descriptor = descriptor
      self.timeout = timeout
      room = WriteRoom(limit: window)
      let loop = connection.loop
      let owner = Owner()
      response = InboundParts(window: window) { [weak connection] in
        guard let connection else { return }
        loop.execute { if let call = owner.call { connection.returnCredit(call) } }
      }
      owner.call = self
    }

    /// The call, weakly, for its reader's drained signal (set in `init`, before it is shared).
    final class Owner: @unchecked Sendable {
      weak var call: Call?
    }
  }

  let loop: any EventLoop
  let configuration: FrameClientTransport.Configuration
  let authority: String
  let scheme: String
  let transport: FrameClientTransport
  var context: ChannelHandlerContext?
  var peer = ""
  var local = ""
  var calls: [HTTP2StreamID: Call] = [:]
  var nextStream = HTTP2StreamID(1)
  /// Calls owed a quarter of a window or more since their credit last went back: only they are
  /// looked at when a read ends (a connection may carry hundreds of streams, most owed a little).
  var due: Set<HTTP2StreamID> = []
  /// Bytes read and not yet returned to the connection's window.
  var owed = 0
  var flushScheduled = false
  /// GOAWAY came, or the transport is shutting down: no new calls; closes when the last ends.
  var draining = false

  init(
    loop: any EventLoop, configuration: FrameClientTransport.Configuration, authority: String,
    transport: FrameClientTransport
  ) {
    self.loop = loop
    self.configuration = configuration
    self.authority = authority
    scheme = configuration.usesTLS ? "https" : "http"
    self.transport = transport
  }

  /// A request part's message bytes.
  static let messageBytes: @Sendable (RPCRequestPart<[UInt8]>) -> Int = {
    if case .message(let bytes) = $0 { bytes.count } else { 0 }
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  /// The addresses are known once connected, before `open` hands the connection to calls.
  func channelActive(context: ChannelHandlerContext) {
    peer = FrameConnection.describe(context.channel.remoteAddress)
    local = FrameConnection.describe(context.channel.localAddress)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    let id = frame.streamID
    switch frame.payload {
    case .headers(let headers):
      guard let call = calls[id] else { return }
      if !call.answered && !headers.endStream {
        call.answered = true
        let status = headers.headers.first(name: ":status")
        guard status == "200" else {
          let (status, metadata) = GRPCHeaders.status(headers.headers)
          return end(call, .status(status, metadata), reset: true)
        }
        call.response.yield(.metadata(GRPCHeaders.metadata(headers.headers)))
      } else {
        // Trailers, or trailers only.
        let (status, metadata) = GRPCHeaders.status(headers.headers)
        end(call, .status(status, metadata), reset: !headers.endStream)
      }
    case .data(let payload):
      guard case .byteBuffer(var bytes) = payload.data else { return }
      owed += bytes.readableBytes
      guard let call = calls[id] else { return }
      call.owed += bytes.readableBytes
      if call.owed >= configuration.window / 4 { due.insert(id) }
      call.partial.writeBuffer(&bytes)
      readMessages(call)
      if payload.endStream, !call.over {
        end(call, .status(Status(code: .internalError, message: "the response ended without trailers"), [:]))
      }
    case .rstStream(let code):
      guard let call = calls[id] else { return }
      let error: RPCError
      switch code {
      case .refusedStream: error = RPCError(code: .unavailable, message: "the server refused the stream")
      case .cancel: error = RPCError(code: .cancelled, message: "the server cancelled the call")
      default: error = RPCError(code: .internalError, message: "the server reset the stream (\(code))")
      }
      end(call, error)
    case .goAway(let last, _, _):
      draining = true
      transport.lost(self)
      for (id, call) in calls where id > last {
        end(call, RPCError(code: .unavailable, message: "the server is going away and did not start the call"))
      }
      closeIfDone()
    default:
      break
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    // Credit goes back once a quarter of a window is used, as gRPC's own transports do.
    if owed >= configuration.window / 4 {
      write(.rootStream, .windowUpdate(windowSizeIncrement: owed))
      owed = 0
    }
    // A call whose reader is behind gets its credit back when the reader catches up
    // (`returnCredit`).
    for id in due {
      guard let call = calls[id], call.response.mayReturnCredit() else { continue }
      write(id, .windowUpdate(windowSizeIncrement: call.owed))
      call.owed = 0
    }
    due.removeAll(keepingCapacity: true)
    context.flush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.context = nil
    transport.lost(self)
    for call in Array(calls.values) { end(call, RPCError(code: .unavailable, message: "the connection closed")) }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if let streamError = error as? NIOHTTP2Errors.StreamError, let call = calls[streamError.streamID] {
      end(call, RPCError(code: .internalError, message: "HTTP/2 stream error: \(streamError)"))
    } else {
      context.close(promise: nil)
    }
  }

  /// Hands the stream's whole messages to its call; ends the call on one it may not read.
  func readMessages(_ call: Call) {
    defer { call.partial.discardReadBytes() }
    while !call.over {
      switch MessageFraming.next(from: &call.partial, limit: configuration.maximumResponseBytes) {
      case .incomplete:
        return
      case .message(_, compressed: true):
        let status = Status(code: .internalError, message: "a compressed response message (identity was asked for)")
        return end(call, .status(status, [:]), reset: true)
      case .tooLong(let length):
        let status = Status(
          code: .resourceExhausted,
          message: "a response message of \(length) bytes is over the limit of \(configuration.maximumResponseBytes)")
        return end(call, .status(status, [:]), reset: true)
      case .message(let message, compressed: false):
        call.response.yield(.message(message))
      }
    }
  }

  /// A paused call's reader caught up: its held-back credit goes back.
  func returnCredit(_ call: Call) {
    guard let id = call.id, !call.over, call.owed > 0 else { return }
    write(id, .windowUpdate(windowSizeIncrement: call.owed))
    call.owed = 0
    scheduleFlush()
  }

  /// A request part, on the loop: the first (the metadata) opens the stream.
  func send(_ call: Call, _ part: RPCRequestPart<[UInt8]>, size: Int, room: WriteRoom) {
    guard !call.over, !call.requestEnded else { return room.written(size) }
    guard let context else {
      room.written(size)
      return end(call, RPCError(code: .unavailable, message: "the connection closed"))
    }
    switch part {
    case .metadata(let metadata):
      guard call.id == nil else { return room.written(size) }
      guard !draining else {
        return end(call, RPCError(code: .unavailable, message: "the connection is going away"))
      }
      let id = nextStream
      nextStream = HTTP2StreamID(Int32(id) + 2)
      call.id = id
      calls[id] = call
      let headers = GRPCHeaders.request(
        call.descriptor, scheme: scheme, authority: authority, timeout: call.timeout, metadata)
      write(id, .headers(.init(headers: headers)))
    case .message(let bytes):
      guard let id = call.id else { return room.written(size) }
      let buffer = MessageFraming.frame(bytes, context.channel.allocator)
      let written = loop.makePromise(of: Void.self)
      written.futureResult.whenComplete { _ in room.written(size) }
      context.write(
        wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer))))), promise: written)
    }
    scheduleFlush()
  }

  /// The caller's writer finished: the request's last frame; one that failed resets the call.
  func finish(_ call: Call, _ error: (any Error)?) {
    guard !call.over, !call.requestEnded, let id = call.id else { return }
    if let error {
      return end(call, RPCError(code: .cancelled, message: "the request failed: \(error)"))
    }
    call.requestEnded = true
    let empty = context?.channel.allocator.buffer(capacity: 0) ?? ByteBuffer()
    write(id, .data(.init(data: .byteBuffer(empty), endStream: true)))
    scheduleFlush()
  }

  /// The caller left the call: a call not over yet is reset.
  func reset(_ call: Call) {
    guard !call.over else { return }
    end(call, RPCError(code: .cancelled, message: "the caller left the call"))
  }

  /// Ends a call with its status part, or failed with `error`; a stream the server may still
  /// write on is reset, and so is one whose request has not ended (`close`).
  func end(_ call: Call, _ status: RPCResponsePart<[UInt8]>, reset: Bool = false) {
    guard !call.over else { return }
    call.response.yield(status)
    close(call, nil, reset: reset)
  }

  func end(_ call: Call, _ error: RPCError) {
    guard !call.over else { return }
    close(call, error, reset: true)
  }

  /// Forgets a call. Its stream is reset when asked, and when its request has not ended (the
  /// server answered first: a method it does not have, a service that failed early): the call's
  /// writer writes nothing more, so nothing else would close this side of the stream, and it
  /// would stay open in both HTTP/2 handlers, counted against the server's concurrent streams,
  /// until the connection closed.
  func close(_ call: Call, _ error: RPCError?, reset: Bool) {
    call.over = true
    call.response.finish(throwing: error)
    call.room.close()
    if let id = call.id {
      calls[id] = nil
      if reset || !call.requestEnded, context != nil {
        write(id, .rstStream(.cancel))
        scheduleFlush()
      }
    }
    closeIfDone()
  }

  /// The transport is shutting down: the connection closes when its calls have ended.
  func drain() {
    draining = true
    transport.lost(self)
    closeIfDone()
  }

  func closeIfDone() {
    guard draining, calls.isEmpty, let context else { return }
    let written = loop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in self.context?.close(promise: nil) }
    context.writeAndFlush(
      wrapOutboundOut(
        HTTP2Frame(
          streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil))
      ),
      promise: written)
  }

  /// The writes made on the loop since the last flush go out together, after the work already
  /// queued on it.
  func scheduleFlush() {
    guard !flushScheduled else { return }
    flushScheduled = true
    loop.execute {
      self.flushScheduled = false
      self.context?.flush()
    }
  }

  func write(_ id: HTTP2StreamID, _ payload: HTTP2Frame.FramePayload) {
    context?.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: payload)), promise: nil)
  }
}
