import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix

/// A lean gRPC client for open-loop load: unary calls written as HTTP/2 frames straight on a
/// few connections (no channel or task per call), each sent when it is due whatever the calls
/// before it are doing, its latency counted from then to its trailers. It costs the machine
/// far less per call than grpc-swift's client, so the cores go to the server measured.
final class OpenLoopClient: Sendable {
  /// One call: when it is due, its method path, its message (5-byte gRPC prefix included),
  /// and the label its outcome is counted under.
  struct Call: Sendable {
    var due: NIODeadline
    var path: String
    var body: ByteBuffer
    var label: String
  }

  struct Outcome: Sendable {
    var latencies: [Duration] = []
    var errors = 0
    /// Bytes of response messages, for a rough check of what came back.
    var responseBytes = 0
    /// When each call slower than `OpenLoopClient.slow` answered, to set stalls beside the
    /// server's and the machine's own events.
    var slowAnswers: [Date] = []
    /// For each of those, where its time went: waiting in this client to be sent, from being
    /// sent to the answer's first frame (the server and the kernel), and from there to its end.
    var slowParts: [(queued: Duration, answered: Duration, rest: Duration)] = []
  }

  static let slowMilliseconds = 50
  static let slow = Duration.milliseconds(slowMilliseconds)

  let connections: [(Channel, CallHandler)]

  init(host: String, port: Int, authorization: String, connections count: Int) async throws {
    var connections: [(Channel, CallHandler)] = []
    for _ in 0..<count {
      let handler = CallHandler(host: host, port: port, authorization: authorization)
      let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([NIOHTTP2Handler(mode: .client), handler])
          }
        }
        .connect(host: host, port: port).get()
      connections.append((channel, handler))
    }
    self.connections = connections
  }

  /// Sends every call when it is due, spread over the connections; returns each label's
  /// outcome once all have answered (or failed).
  func run(_ calls: [Call]) async throws -> [String: Outcome] {
    var perConnection = Array(repeating: [Call](), count: connections.count)
    for (i, call) in calls.enumerated() { perConnection[i % connections.count].append(call) }
    var futures: [EventLoopFuture<[String: Outcome]>] = []
    for ((channel, handler), calls) in zip(connections, perConnection) {
      futures.append(channel.eventLoop.flatSubmit { handler.start(calls.sorted { $0.due < $1.due }, on: channel) })
    }
    var total: [String: Outcome] = [:]
    for future in futures {
      for (label, outcome) in try await future.get() {
        total[label, default: Outcome()].latencies += outcome.latencies
        total[label, default: Outcome()].errors += outcome.errors
        total[label, default: Outcome()].responseBytes += outcome.responseBytes
        total[label, default: Outcome()].slowAnswers += outcome.slowAnswers
        total[label, default: Outcome()].slowParts += outcome.slowParts
      }
    }
    return total
  }

  func close() async {
    for (channel, _) in connections { try? await channel.close() }
  }
}

/// The calls of one connection. Confined to the connection's event loop: every property is
/// touched only from handler callbacks or tasks on that loop, hence `@unchecked Sendable`.
final class CallHandler: ChannelInboundHandler, @unchecked Sendable {
  typealias InboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame

  struct InFlight {
    var due: NIODeadline
    var sent: NIODeadline
    var firstFrame: NIODeadline?
    var label: String
    var status: String?
    var bytes = 0
  }

  let host: String
  let port: Int
  let authorization: String
  var context: ChannelHandlerContext?
  var pending: [OpenLoopClient.Call] = []
  var next = 0
  var inFlight: [HTTP2StreamID: InFlight] = [:]
  var nextStreamID = 1
  var outcomes: [String: OpenLoopClient.Outcome] = [:]
  var done: EventLoopPromise<[String: OpenLoopClient.Outcome]>?
  var timer: Scheduled<Void>?
  /// Response bytes not yet returned to the server's connection-level flow-control window.
  var consumed = 0

  init(host: String, port: Int, authorization: String) {
    self.host = host
    self.port = port
    self.authorization = authorization
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func start(_ calls: [OpenLoopClient.Call], on channel: Channel) -> EventLoopFuture<[String: OpenLoopClient.Outcome]> {
    let promise = channel.eventLoop.makePromise(of: [String: OpenLoopClient.Outcome].self)
    pending = calls
    next = 0
    outcomes = [:]
    done = promise
    if calls.isEmpty { promise.succeed([:]) }
    sendDue()
    return promise.futureResult
  }

  func sendDue() {
    guard let context else { return }
    let now = NIODeadline.now()
    var wrote = false
    while next < pending.count, pending[next].due <= now {
      let call = pending[next]
      next += 1
      let stream = HTTP2StreamID(nextStreamID)
      nextStreamID += 2
      inFlight[stream] = InFlight(due: call.due, sent: now, label: call.label)
      let headers: HPACKHeaders = [
        ":method": "POST", ":scheme": "http", ":path": call.path, ":authority": "\(host):\(port)",
        "content-type": "application/grpc", "te": "trailers", "authorization": authorization,
      ]
      context.write(
        wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers)))), promise: nil)
      context.write(
        wrapOutboundOut(
          HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(call.body), endStream: true)))),
        promise: nil)
      wrote = true
    }
    if wrote { context.flush() }
    if next == pending.count {
      finishIfDone()
    } else {
      // Woken when the next call is due, not on a fixed tick: a 2-ms tick cost this client a
      // sixth of a core in wake-ups at 300 calls a second, taken from the server measured.
      timer = context.eventLoop.scheduleTask(deadline: pending[next].due) { [self] in sendDue() }
    }
  }

  func finishIfDone() {
    guard next == pending.count, inFlight.isEmpty, let done else { return }
    self.done = nil
    done.succeed(outcomes)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    if inFlight[frame.streamID]?.firstFrame == nil { inFlight[frame.streamID]?.firstFrame = NIODeadline.now() }
    switch frame.payload {
    case .headers(let headers):
      if let status = headers.headers.first(name: "grpc-status") { inFlight[frame.streamID]?.status = status }
      if headers.endStream { finish(frame.streamID) }
    case .data(let data):
      consumed += data.data.readableBytes
      inFlight[frame.streamID]?.bytes += data.data.readableBytes
      if data.endStream { finish(frame.streamID) }
    case .rstStream:
      finish(frame.streamID)
    default:
      break
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    if consumed > 16_384 {
      context.write(
        wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: consumed))),
        promise: nil)
      consumed = 0
    }
    context.flush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    timer?.cancel()
    for stream in Array(inFlight.keys) { finish(stream) }
    next = pending.count
    finishIfDone()
  }

  func finish(_ stream: HTTP2StreamID) {
    guard let call = inFlight.removeValue(forKey: stream) else { return }
    if call.status == "0" {
      let end = NIODeadline.now()
      let latency = Duration.nanoseconds((end - call.due).nanoseconds)
      outcomes[call.label, default: .init()].latencies.append(latency)
      if latency >= OpenLoopClient.slow {
        outcomes[call.label, default: .init()].slowAnswers.append(Date())
        let first = call.firstFrame ?? end
        outcomes[call.label, default: .init()].slowParts.append(
          (
            .nanoseconds((call.sent - call.due).nanoseconds), .nanoseconds((first - call.sent).nanoseconds),
            .nanoseconds((end - first).nanoseconds)
          ))
      }
      outcomes[call.label, default: .init()].responseBytes += call.bytes
    } else {
      outcomes[call.label, default: .init()].errors += 1
    }
    finishIfDone()
  }
}

/// A gRPC message: the 5-byte prefix (uncompressed, length) and the protobuf bytes.
func grpcMessage(_ bytes: [UInt8]) -> ByteBuffer {
  var buffer = ByteBuffer()
  buffer.writeInteger(UInt8(0))
  buffer.writeInteger(UInt32(bytes.count))
  buffer.writeBytes(bytes)
  return buffer
}
