import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import Synchronization

/// The first handler after HTTP/1's codec on every connection of fleetd's HTTP port. Requests
/// for the routes answered on the loop (`LoopRoutes`: the OSRM-style API) are answered here, on
/// the connection's event loop, as they arrive. The first request for any other route hands
/// the connection to Hummingbird (its async channel, read by the connection's task) and every
/// later one goes there too, so that answers leave in the order the requests came.
final class LoopAnsweringHandler: ChannelDuplexHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias InboundOut = HTTPServerRequestPart
  typealias OutboundIn = HTTPServerResponsePart
  typealias OutboundOut = HTTPServerResponsePart

  /// What became of the connection: closed while answered here, or handed to Hummingbird.
  enum Outcome: Sendable {
    case closed
    case handedOver(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
  }

  private let routes: LoopRoutes
  private let corsOrigins: Set<String>
  private let logger: Logger
  private let outcome: EventLoopPromise<Outcome>
  private var decided = false
  private var handedOver = false
  /// The request being read (its head seen, its end not yet) for a route answered here.
  private var reading: (head: HTTPRequestHead, route: LoopRoute, path: String, query: String)?
  /// An answer being made on the thread pool: requests read meanwhile wait in `waiting`, and
  /// reading the socket waits too.
  private var answering = false
  private var waiting: [HTTPServerRequestPart] = []
  private var readHeld = false
  /// The connection closes after the answer in progress (fleetd stopping, the client done).
  private var closing = false

  init(routes: LoopRoutes, corsOrigins: Set<String>, outcome: EventLoopPromise<Outcome>, logger: Logger) {
    self.routes = routes
    self.corsOrigins = corsOrigins
    self.outcome = outcome
    self.logger = logger
  }

  // MARK: Reading

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if handedOver { return context.fireChannelRead(data) }
    let part = unwrapInboundIn(data)
    if answering { return waiting.append(part) }
    take(part, context: context)
  }

  private func take(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
    switch part {
    case .head(let head):
      guard !closing else { return }  // no new request on a connection that is closing
      let (path, query) = Self.pathAndQuery(head.uri)
      if head.method == .GET || head.method == .HEAD, let route = routes.route(for: path) {
        reading = (head, route, path, query)
      } else {
        handOver(startingWith: part, context: context)
      }
    case .body:
      break  // a GET's body means nothing to these routes
    case .end:
      guard let (head, route, path, query) = reading else { return }
      reading = nil
      answer(head, route, path: path, query: query, context: context)
    }
  }

  private func answer(
    _ head: HTTPRequestHead, _ route: LoopRoute, path: String, query: String, context: ChannelHandlerContext
  ) {
    guard route.offLoop else { return write(route.answer(path, query), to: head, context: context) }
    answering = true
    let answer = route.answer
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { answer(path, query) }
      .recover { _ in answer(path, query) }  // the pool has shut down (fleetd is stopping): done here
      .whenSuccess { response in
        let (handler, context) = bound.value
        handler.answering = false
        handler.write(response, to: head, context: context)
        handler.takeWaiting(context: context)
      }
  }

  /// The requests that came while an answer was made on the pool, in order.
  private func takeWaiting(context: ChannelHandlerContext) {
    while !waiting.isEmpty, !answering, !handedOver {
      take(waiting.removeFirst(), context: context)
    }
    if readHeld, !answering {
      readHeld = false
      context.read()
    }
  }

  /// A path and its query as Hummingbird's `URI` reads them: raw, the fragment left out.
  static func pathAndQuery(_ uri: String) -> (path: String, query: String) {
    let target = uri.fields(separatedBy: UInt8(ascii: "#"), maxSplits: 1)[0]
    let parts = target.fields(separatedBy: UInt8(ascii: "?"), maxSplits: 1)
    return (String(parts.first ?? ""), parts.count > 1 ? String(parts[1]) : "")
  }

  // MARK: Writing

  private func write(_ response: PlainResponse, to request: HTTPRequestHead, context: ChannelHandlerContext) {
    var headers = HTTPHeaders()
    headers.reserveCapacity(8)
    headers.add(name: "Content-Type", value: response.contentType)
    headers.add(name: "Content-Length", value: String(response.body.readableBytes))
    headers.add(name: "Date", value: HTTPDate.now())
    headers.add(name: "Server", value: "fleetd")
    if let origin = request.headers.first(name: "origin"), corsOrigins.contains(origin) {
      for (name, value) in RouteGuard.crossOriginHeaders(origin: origin) {
        headers.add(name: name.rawName, value: value)
      }
    }
    let keepAlive = request.isKeepAlive && !closing
    if !keepAlive {
      headers.add(name: "Connection", value: "close")
    } else if request.version.minor == 0 {
      headers.add(name: "Connection", value: "keep-alive")
    }
    let status = HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase)
    context.write(
      wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
    if request.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil) }
    guard !keepAlive else { return context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil) }
    endAndClose(context: context)
  }

  /// The answer's end, and the connection closed once it is written.
  private func endAndClose(context: ChannelHandlerContext) {
    closing = true
    let written = context.eventLoop.makePromise(of: Void.self)
    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
    written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
  }

  /// A request that is not HTTP: 400, and the connection closes (as Hummingbird answers it).
  private func refuse(context: ChannelHandlerContext) {
    var headers = HTTPHeaders()
    headers.add(name: "Connection", value: "close")
    headers.add(name: "Content-Length", value: "0")
    context.write(
      wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
    endAndClose(context: context)
  }

  // MARK: Handing over

  /// Hummingbird's handlers behind this one, its async channel for the connection's task, and
  /// the request read so far (and any waiting) passed on to them.
  private func handOver(startingWith part: HTTPServerRequestPart, context: ChannelHandlerContext) {
    handedOver = true
    do {
      let pipeline = context.pipeline.syncOperations
      try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
      try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
      let channel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
        wrappingChannelSynchronously: context.channel, configuration: .init(isOutboundHalfClosureEnabled: true))
      decide(.handedOver(channel))
    } catch {
      logger.debug("Handing a connection to the router failed: \(error)")
      decide(.closed)
      context.close(promise: nil)
      return
    }
    context.fireChannelRead(wrapInboundOut(part))
    let rest = waiting
    waiting = []
    for part in rest { context.fireChannelRead(wrapInboundOut(part)) }
    // The async channel passes on what it read at a read's end, and a handover after an answer
    // made on the pool comes outside of any read.
    context.fireChannelReadComplete()
  }

  private func decide(_ result: Outcome) {
    guard !decided else { return }
    decided = true
    outcome.succeed(result)
  }

  // MARK: The connection's events

  func read(context: ChannelHandlerContext) {
    if answering, !handedOver {
      readHeld = true
      return
    }
    context.read()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if handedOver { return context.fireUserInboundEventTriggered(event) }
    switch event {
    case is ChannelShouldQuiesceEvent, ChannelEvent.inputClosed:
      // fleetd stopping, or the client done sending: close once the answer in progress is out.
      closing = true
      if reading == nil, !answering { context.close(promise: nil) }
    default:
      context.fireUserInboundEventTriggered(event)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if handedOver { return context.fireErrorCaught(error) }
    if error is HTTPParserError, !answering, !closing {
      refuse(context: context)
    } else {
      context.close(promise: nil)
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    decide(.closed)
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    decide(.closed)
  }
}

/// fleetd's HTTP/1 connections (`HTTPServer`): `LoopAnsweringHandler` first, Hummingbird's
/// router for what it hands over. In place of Hummingbird's `HTTP1Channel`, which gives every
/// connection an async channel and a task reading it.
struct FleetHTTP1Channel: HTTPChannelHandler {
  struct Value: ServerChildChannelValue {
    let channel: any Channel
    let outcome: EventLoopFuture<LoopAnsweringHandler.Outcome>
  }

  let responder: HTTPChannelHandler.Responder
  let routes: LoopRoutes
  let corsOrigins: Set<String>

  func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
    channel.eventLoop.makeCompletedFuture {
      // As `HTTP1Channel` sets it up: its limits, no pipelining help, errors handled by us.
      var limits = NIOHTTPDecoderLimitConfiguration()
      limits.maxHeaderFieldSize = 80 * 1024
      limits.maxHeaderListSize = 80 * 1024
      limits.maxHeaderFieldCount = 1000
      let pipeline = channel.pipeline.syncOperations
      try pipeline.configureHTTPServerPipeline(
        withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
        withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
      let outcome = channel.eventLoop.makePromise(of: LoopAnsweringHandler.Outcome.self)
      do {
        try pipeline.addHandler(
          LoopAnsweringHandler(routes: routes, corsOrigins: corsOrigins, outcome: outcome, logger: logger))
      } catch {
        outcome.succeed(.closed)
        throw error
      }
      return Value(channel: channel, outcome: outcome.futureResult)
    }
  }

  /// Serves a connection handed over (and returns at once for one that closed first).
  func handle(value: Value, logger: Logger) async {
    let outcome = try? await withTaskCancellationHandler {
      try await value.outcome.get()
    } onCancel: {
      value.channel.close(promise: nil)
    }
    guard case .handedOver(let channel) = outcome else { return }
    await handleHTTP(asyncChannel: channel, logger: logger)
  }
}

/// The `Date` header's value (RFC 9110's IMF-fixdate), made once a second.
enum HTTPDate {
  private static let cache = Mutex<(second: Int, text: String)>((-1, ""))

  static func now() -> String {
    var seconds = time_t()
    time(&seconds)
    let second = Int(seconds)
    return cache.withLock { cached in
      if cached.second == second { return cached.text }
      var parts = tm()
      gmtime_r(&seconds, &parts)
      let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
      let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
      func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
      let text =
        "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
      cached = (second, text)
      return text
    }
  }
}
