import GRPCCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 connection's gRPC calls, read and written as frames on the connection's loop.
/// Confined to that loop (every property is touched from handler callbacks or from work
/// submitted to the loop), hence `@unchecked Sendable`.
final class FrameConnection: ChannelInboundHandler, FrameSink, @unchecked Sendable {
  typealias InboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame
  typealias Part = RPCResponsePart<[UInt8]>
  typealias Handle = HTTP2StreamID

  struct Stream {
    let request: InboundParts<RPCRequestPart<[UInt8]>>
    let room: WriteRoom
    let cancellation: CallCancellation
    /// What its compressed messages are compressed with (`grpc-encoding`).
    let encoding: MessageEncoding
    /// Bytes of a message not yet whole.
    var partial = ByteBuffer()
    /// Bytes read and not yet returned to the stream's window.
    var owed = 0
    /// The response's headers went out.
    var answering = false
    /// The client sent its last frame: no credit is owed to it.
    var requestEnded = false
  }

  let loop: any EventLoop
  let settings: FrameServerTransport.Configuration
  let calls: CallIntake
  /// This connection's calls, on their way to its task in `listen`'s group.
  let started: AsyncStream<CallIntake.Call>
  let start: AsyncStream<CallIntake.Call>.Continuation
  let executor: LoopExecutor
  var context: ChannelHandlerContext?
  var peer = ""
  var local = ""
  var streams: [HTTP2StreamID: Stream] = [:]
  /// Streams owed a quarter of a window or more since their credit last went back: only they
  /// are looked at when a read ends (a connection may carry thousands of streams, most of them
  /// owed a little).
  var due: Set<HTTP2StreamID> = []
  /// Bytes read and not yet returned to the connection's window.
  var owed = 0
  var flushScheduled = false
  /// GOAWAY was sent: no new calls; the connection closes when its last call ends.
  var draining = false
  var lastStream = HTTP2StreamID(0)
  /// When the client last sent anything, and the keepalive's next look and its unanswered PING.
  var lastRead = NIODeadline.now()
  var keepalive: Scheduled<Void>?
  var keepaliveTimeout: Scheduled<Void>?
  var pings: PingPolicy

  init(loop: any EventLoop, settings: FrameServerTransport.Configuration, calls: CallIntake) {
    self.loop = loop
    self.settings = settings
    self.calls = calls
    (started, start) = AsyncStream.makeStream(of: CallIntake.Call.self)
    executor = LoopExecutor(loop)
    pings = PingPolicy(minimumInterval: .init(settings.minimumPingInterval), withoutCalls: settings.pingsWithoutCalls)
  }

  func handlerAdded(context: ChannelHandlerContext) {
    self.context = context
    peer = Self.describe(context.channel.remoteAddress)
    local = Self.describe(context.channel.localAddress)
  }

  /// Only an active connection is one of the server's, and only then may frames go out: the
  /// HTTP/2 handler before this one sends the server's preface as the connection becomes active,
  /// and an accepted connection can wait a while for that on a busy loop. A keepalive PING written
  /// earlier failed the connection (no preface sent yet), which then closed without ever being
  /// active or inactive, and `listen` waited for it for good.
  func channelActive(context: ChannelHandlerContext) {
    context.fireChannelActive()
    lastRead = .now()
    scheduleKeepalive(at: lastRead + .init(settings.keepaliveTime))
    if !calls.add(self, calls: started) { drain() }
  }

  /// Looks at `deadline` whether the client has been silent for the keepalive time; if so,
  /// PINGs it and closes the connection unless something arrives within the timeout.
  func scheduleKeepalive(at deadline: NIODeadline) {
    keepalive = loop.scheduleTask(deadline: deadline) {
      let due = self.lastRead + .init(self.settings.keepaliveTime)
      guard NIODeadline.now() >= due else { return self.scheduleKeepalive(at: due) }
      self.write(.rootStream, .ping(HTTP2PingData(withInteger: 0x6B65_6570_616C_6976), ack: false))
      self.context?.flush()
      self.keepaliveTimeout = self.loop.scheduleTask(in: .init(self.settings.keepaliveTimeout)) {
        self.context?.close(promise: nil)
      }
    }
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    let id = frame.streamID
    lastRead = .now()
    if let waiting = keepaliveTimeout {
      // The client answered (or spoke): the next look is a keepalive time from now.
      waiting.cancel()
      keepaliveTimeout = nil
      scheduleKeepalive(at: lastRead + .init(settings.keepaliveTime))
    }
    switch frame.payload {
    case .headers(let headers):
      if streams[id] == nil {
        guard id > lastStream else { return }  // trailers of a call already answered
        lastStream = id
        open(id, headers.headers, endStream: headers.endStream)
      } else if headers.endStream {
        endRequest(id)
      }
    case .data(let payload):
      guard case .byteBuffer(var bytes) = payload.data else { return }
      owed += bytes.readableBytes
      guard streams[id] != nil else { return }
      streams[id]!.owed += bytes.readableBytes
      if streams[id]!.owed >= settings.window / 4 { due.insert(id) }
      streams[id]!.partial.writeBuffer(&bytes)
      readMessages(id)
      if payload.endStream { endRequest(id) }
    case .rstStream:
      close(id, RPCError(code: .cancelled, message: "the client cancelled the call"))
    case .ping(_, ack: false):
      // The HTTP/2 handler has acknowledged it already; too many end the connection.
      if pings.tooMany(at: lastRead, hasCalls: !streams.isEmpty) {
        draining = true
        closeWhenWritten(.enhanceYourCalm, because: "too_many_pings")
      }
    default:
      break
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    // Credit goes back once a quarter of a window is used, as gRPC's own transports do.
    if owed >= settings.window / 4 {
      write(.rootStream, .windowUpdate(windowSizeIncrement: owed))
      owed = 0
    }
    // A stream whose reader is behind gets its credit back when the reader catches up
    // (`returnCredit`).
    for id in due {
      guard let stream = streams[id], !stream.requestEnded, stream.request.mayReturnCredit() else { continue }
      streams[id]?.owed = 0
      write(id, .windowUpdate(windowSizeIncrement: stream.owed))
    }
    due.removeAll(keepingCapacity: true)
    context.flush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    keepalive?.cancel()
    keepaliveTimeout?.cancel()
    for id in Array(streams.keys) { close(id, RPCError(code: .unavailable, message: "the connection closed")) }
    self.context = nil
    start.finish()
    calls.remove(self)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if let streamError = error as? NIOHTTP2Errors.StreamError {
      close(streamError.streamID, RPCError(code: .internalError, message: "HTTP/2 stream error: \(streamError)"))
    } else {
      context.close(promise: nil)
    }
  }

  /// A new call: checked, then its metadata handed to a service's task.
  func open(_ id: HTTP2StreamID, _ headers: HPACKHeaders, endStream: Bool) {
    guard !draining else {
      write(id, .rstStream(.refusedStream))
      return
    }
    guard headers.first(name: ":method") == "POST" else {
      return reject(id, httpStatus: "405", grpc: .unimplemented, "gRPC calls are POST requests")
    }
    guard let contentType = headers.first(name: "content-type"), contentType.hasPrefix("application/grpc") else {
      return reject(id, httpStatus: "415", grpc: .internalError, "the content-type must be application/grpc")
    }
    guard let method = GRPCHeaders.method(headers.first(name: ":path") ?? "") else {
      return reject(id, httpStatus: "200", grpc: .unimplemented, "the :path is not /package.Service/Method")
    }
    var encoding = MessageEncoding.identity
    if let name = headers.first(name: "grpc-encoding") {
      guard let known = MessageEncoding(name: name) else {
        return reject(
          id, httpStatus: "200", grpc: .unimplemented,
          "grpc-encoding '\(name)' is not supported: messages may come as \(MessageEncoding.accepted)")
      }
      encoding = known
    }
    let loop = self.loop
    let request = InboundParts<RPCRequestPart<[UInt8]>>(window: settings.window) { [weak self] in
      guard let connection = self else { return }
      loop.execute { connection.returnCredit(id) }
    }
    request.yield(.metadata(GRPCHeaders.metadata(headers)))
    let room = WriteRoom(limit: settings.window)
    let cancellation = CallCancellation()
    streams[id] = Stream(request: request, room: room, cancellation: cancellation, encoding: encoding)
    if endStream { endRequest(id) }
    let stream = RPCStream(
      descriptor: method, inbound: RPCAsyncSequence(wrapping: request),
      outbound: RPCWriter<RPCResponsePart<[UInt8]>>.Closable(
        wrapping: OutboundParts(sink: self, call: id, room: room, size: Self.messageBytes)))
    start.yield(
      CallIntake.Call(stream: stream, peer: peer, local: local, cancellation: cancellation, executor: executor))
  }

  /// Answers a request that is not a gRPC call with trailers only.
  func reject(_ id: HTTP2StreamID, httpStatus: String, grpc code: Status.Code, _ message: String) {
    var headers: HPACKHeaders = [
      ":status": httpStatus, "content-type": "application/grpc", "grpc-accept-encoding": MessageEncoding.accepted,
    ]
    headers.add(name: "grpc-status", value: String(code.rawValue))
    headers.add(name: "grpc-message", value: GRPCHeaders.percentEncoded(message))
    write(id, .headers(.init(headers: headers, endStream: true)))
  }

  /// Hands the stream's whole messages to its call; fails the call on one it may not read.
  func readMessages(_ id: HTTP2StreamID) {
    defer { streams[id]?.partial.discardReadBytes() }
    while streams[id] != nil {
      switch MessageFraming.next(from: &streams[id]!.partial, limit: settings.maximumRequestBytes) {
      case .incomplete:
        return
      case .tooLong(let length):
        return fail(
          id,
          Status(
            code: .resourceExhausted,
            message: "a request message of \(length) bytes is over the limit of \(settings.maximumRequestBytes)"))
      case .message(let message, compressed: false):
        streams[id]!.request.yield(.message(message))
      case .message(let message, compressed: true):
        let encoding = streams[id]!.encoding
        // gRPC's compression document: a compressed flag without an encoding is INTERNAL.
        guard encoding != .identity else {
          return fail(
            id,
            Status(
              code: .internalError, message: "a message is flagged compressed but the call's grpc-encoding is identity")
          )
        }
        switch encoding.inflate(message, limit: settings.maximumRequestBytes) {
        case .success(let inflated):
          streams[id]!.request.yield(.message(inflated))
        case .failure(.tooLong):
          return fail(
            id,
            Status(
              code: .resourceExhausted,
              message: "a \(encoding) request message inflates past the limit of \(settings.maximumRequestBytes) bytes")
          )
        case .failure(.corrupt(let status)):
          return fail(
            id,
            Status(
              code: .internalError, message: "a request message is not valid \(encoding) data (zlib status \(status))"))
        }
      }
    }
  }

  /// Ends a call from this side: its trailers, and its service's task told it is over.
  func fail(_ id: HTTP2StreamID, _ status: Status) {
    guard let stream = streams[id] else { return }
    write(id, .headers(.init(headers: GRPCHeaders.trailers(status, [:], alone: !stream.answering), endStream: true)))
    close(id, RPCError(code: RPCError.Code(status.code) ?? .internalError, message: status.message))
    scheduleFlush()
  }

  /// The client's last frame: its call's request ends.
  func endRequest(_ id: HTTP2StreamID) {
    streams[id]?.requestEnded = true
    streams[id]?.request.finish()
  }

  /// A paused stream's reader caught up: its held-back credit goes back.
  func returnCredit(_ id: HTTP2StreamID) {
    guard let stream = streams[id], !stream.requestEnded, stream.owed > 0 else { return }
    streams[id]?.owed = 0
    write(id, .windowUpdate(windowSizeIncrement: stream.owed))
    scheduleFlush()
  }

  /// A response part of stream `id`, on the loop.
  func send(_ id: HTTP2StreamID, _ part: RPCResponsePart<[UInt8]>, size: Int, room: WriteRoom) {
    guard let context, streams[id] != nil else {
      room.written(size)
      return
    }
    switch part {
    case .metadata(let metadata):
      streams[id]!.answering = true
      write(id, .headers(.init(headers: GRPCHeaders.responseStart(metadata))))
    case .message(let bytes):
      if !streams[id]!.answering {
        streams[id]!.answering = true
        write(id, .headers(.init(headers: GRPCHeaders.responseStart([:]))))
      }
      pings.forgive()
      let buffer = MessageFraming.frame(bytes, context.channel.allocator)
      let written = loop.makePromise(of: Void.self)
      written.futureResult.whenComplete { _ in room.written(size) }
      context.write(
        wrapOutboundOut(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(buffer))))), promise: written)
    case .status(let status, let metadata):
      let alone = !streams[id]!.answering
      write(id, .headers(.init(headers: GRPCHeaders.trailers(status, metadata, alone: alone), endStream: true)))
      close(id, nil)
    }
    scheduleFlush()
  }

  /// A response part's message bytes.
  static let messageBytes: @Sendable (RPCResponsePart<[UInt8]>) -> Int = {
    if case .message(let bytes) = $0 { bytes.count } else { 0 }
  }

  /// The service's writer finished: the status part already ended the stream; a writer that
  /// failed ends it with the error's status (a service's task that ends without a status is
  /// answered by grpc-swift's server before this is called).
  func finish(_ id: HTTP2StreamID, _ error: (any Error)?) {
    guard let error, let room = streams[id]?.room else { return }
    let status =
      (error as? RPCError).map { Status(code: Status.Code($0.code), message: $0.message) }
      ?? Status(code: .unknown, message: "the service failed: \(error)")
    send(id, .status(status, [:]), size: 0, room: room)
  }

  /// Forgets a call: its request ends (with `error` when the call did not end normally), its
  /// writer fails from now on, and its service's task sees the cancellation.
  func close(_ id: HTTP2StreamID, _ error: (any Error)?) {
    guard let stream = streams.removeValue(forKey: id) else { return }
    stream.request.finish(throwing: error)
    stream.room.close()
    if error != nil { stream.cancellation.cancel() }
    if draining && streams.isEmpty { closeWhenWritten() }
  }

  /// Closes the connection once what was written before is on the socket: a last GOAWAY (a
  /// peer may repeat it) goes after the calls' last frames, and its write ends the connection.
  func closeWhenWritten(_ code: HTTP2ErrorCode = .noError, because reason: String? = nil) {
    guard let context else { return }
    let written = loop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in self.context?.close(promise: nil) }
    let debug = reason.map { context.channel.allocator.buffer(string: $0) }
    context.writeAndFlush(
      wrapOutboundOut(
        HTTP2Frame(
          streamID: .rootStream, payload: .goAway(lastStreamID: lastStream, errorCode: code, opaqueData: debug))),
      promise: written)
  }

  /// Graceful shutdown: GOAWAY with the last call begun; the connection closes when its calls
  /// have ended (or at once when there are none).
  func drain() {
    guard !draining, let context else { return }
    draining = true
    if streams.isEmpty { return closeWhenWritten() }
    write(.rootStream, .goAway(lastStreamID: lastStream, errorCode: .noError, opaqueData: nil))
    context.flush()
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
    if case .headers = payload { pings.forgive() }
    context?.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: payload)), promise: nil)
  }

  /// gRPC's peer form: `ipv4:127.0.0.1:50051`, `ipv6:[::1]:50051`, `unix:path`.
  static func describe(_ address: SocketAddress?) -> String {
    guard let address else { return "unknown" }
    switch address {
    case .v4: return "ipv4:\(address.ipAddress ?? ""):\(address.port ?? 0)"
    case .v6: return "ipv6:[\(address.ipAddress ?? "")]:\(address.port ?? 0)"
    case .unixDomainSocket: return "unix:\(address.pathname ?? "")"
    }
  }
}

/// gRPC's rule for a client's PINGs (gRFC A8, as grpc-swift's and gRPC core's servers keep it):
/// at most one per `minimumInterval` while the client has calls (two hours without, unless
/// allowed); a sooner one is a strike, and more than two strikes are too many. Strikes are
/// forgiven whenever the server sends headers or data, since a client may PING to measure a
/// connection it is using.
struct PingPolicy {
  static let maximumStrikes = 2
  static let withoutCallsInterval = TimeAmount.hours(2)

  let minimumInterval: TimeAmount
  let withoutCalls: Bool
  var lastValid: NIODeadline?
  var strikes = 0

  init(minimumInterval: TimeAmount, withoutCalls: Bool) {
    self.minimumInterval = minimumInterval
    self.withoutCalls = withoutCalls
  }

  /// Counts a PING received at `time`; true when the client has just sent one too many (once:
  /// the connection is closing then).
  mutating func tooMany(at time: NIODeadline, hasCalls: Bool) -> Bool {
    let interval = hasCalls || withoutCalls ? minimumInterval : Self.withoutCallsInterval
    if let lastValid, time < lastValid + interval {
      strikes += 1
      return strikes == Self.maximumStrikes + 1
    }
    lastValid = time
    return false
  }

  mutating func forgive() {
    lastValid = nil
    strikes = 0
  }
}
