import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// fleetd's HTTP port. Every event loop listens on the port itself (`SO_REUSEPORT`, the kernel
/// spreading connections among them) and serves the connections it accepts, so that a
/// connection is accepted, answered and closed on one thread; a connection gets a task only
/// when `LoopAnsweringHandler` hands it to the router. In place of Hummingbird's `Server`, whose
/// one listening loop hands each connection to another loop and to a task of its own: for an
/// OSRM query on a new connection that cost more than the query.
final class HTTPServer: Service, Sendable {
  let host: String
  let port: Int
  let routes: LoopRoutes
  let corsOrigins: Set<String>
  let router: RouterResponder<FleetRequestContext>
  let group: MultiThreadedEventLoopGroup
  let onListening: @Sendable (_ port: Int) -> Void
  /// Paths fleetd asks itself for once it listens (`warmUp`).
  let warmUpPaths: [String]
  let logger: Logger

  init(
    host: String, port: Int, router: Router<FleetRequestContext>, routes: LoopRoutes, corsOrigins: Set<String>,
    warmUpPaths: [String] = [], onListening: @escaping @Sendable (_ port: Int) -> Void, logger: Logger
  ) {
    self.host = host
    self.port = port
    self.routes = routes
    self.corsOrigins = corsOrigins
    self.router = router.buildResponder()
    self.group = .singleton
    self.onListening = onListening
    self.warmUpPaths = warmUpPaths
    self.logger = logger
  }

  func run() async throws {
    let connections = FleetHTTP1Channel(
      responder: { request, writer, channel in try await self.respond(request, writer, channel) }, routes: routes,
      corsOrigins: corsOrigins)
    let (handedOver, handOver) = AsyncStream.makeStream(of: FleetHTTP1Channel.Value.self)
    var listeners: [(channel: any Channel, quiescing: ServerQuiescingHelper)] = []
    do {
      var port = port
      for loop in group.makeIterator() {
        let quiescing = ServerQuiescingHelper(group: loop)
        let logger = logger
        let channel = try await ServerBootstrap(group: loop)
          .serverChannelOption(.backlog, value: 256)
          .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
          .serverChannelOption(.socketOption(.init(rawValue: SO_REUSEPORT)), value: 1)
          .serverChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
              try channel.pipeline.syncOperations.addHandler(quiescing.makeServerChannelHandler(channel: channel))
            }
          }
          .childChannelOption(.allowRemoteHalfClosure, value: true)
          .childChannelInitializer { channel in
            connections.setup(channel: channel, logger: logger).map { value in
              value.outcome.whenSuccess { outcome in
                if case .handedOver = outcome { handOver.yield(value) }
              }
            }
          }
          .bind(host: host, port: port).get()
        // Port 0: the first listener's port, which the others then share.
        port = channel.localAddress?.port ?? port
        listeners.append((channel, quiescing))
      }
    } catch {
      for listener in listeners { try? await listener.channel.close() }
      throw error
    }
    let bound = listeners.first?.channel.localAddress?.port ?? 0
    let loops = listeners.count
    logger.info("HTTP listening", metadata: ["address": "\(host):\(bound)", "loops": "\(loops)"])
    onListening(bound)

    // Stopping: no new connections; each open one closes once its answer in progress is out.
    let stop: @Sendable () -> Void = { [listeners] in
      let closed = listeners.map { listener in
        let promise = listener.channel.eventLoop.makePromise(of: Void.self)
        listener.quiescing.initiateShutdown(promise: promise)
        return promise.futureResult
      }
      EventLoopFuture.andAllComplete(closed, on: listeners[0].channel.eventLoop).whenComplete { _ in handOver.finish() }
    }
    await withTaskCancellationHandler {
      await withGracefulShutdownHandler {
        await withDiscardingTaskGroup { tasks in
          tasks.addTask { await self.warmUp(port: bound, loops: loops) }
          for await connection in handedOver {
            tasks.addTask { await connections.handle(value: connection, logger: self.logger) }
          }
        }
      } onGracefulShutdown: {
        stop()
      }
    } onCancel: {
      stop()
    }
  }

  /// Asks fleetd itself for each of `warmUpPaths`, each on a new connection, twice per loop, the
  /// answers read and dropped: the first client's connection would otherwise pay for what the
  /// process does once (the channel pipeline's and the decoder's first use, the runtime's type
  /// lookups): about 2 ms on the first OSRM query, where osrm-routed's first costs no more than
  /// its others. Failures are only logged: serving does not depend on it.
  func warmUp(port: Int, loops: Int) async {
    let address = ListenHost.loopback(host)
    for path in warmUpPaths {
      for _ in 0..<(2 * max(loops, 1)) {
        do {
          let channel = try await ClientBootstrap(group: group).connectTimeout(.seconds(1))
            .connect(host: address, port: port).get()
          let request = "GET \(path) HTTP/1.1\r\nHost: \(address)\r\nConnection: close\r\n\r\n"
          try await channel.writeAndFlush(ByteBuffer(string: request)).get()
          // The server closes it once the answer is out; a stuck one is closed here.
          let deadline = channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
          try await channel.closeFuture.get()
          deadline.cancel()
        } catch {
          logger.debug("HTTP warm-up request failed", metadata: ["path": "\(path)", "error": "\(error)"])
          return
        }
      }
    }
  }

  /// The router's answer to a request handed over, as Hummingbird's `Application` writes it.
  private func respond(_ request: Request, _ writer: consuming ResponseWriter, _ channel: any Channel)
    async throws
  {
    let context = FleetRequestContext(source: .init(channel: channel, logger: logger))
    var response: Response
    do {
      response = try await router.respond(to: request, context: context)
    } catch let error as HTTPParserError {
      throw error
    } catch {
      logger.debug("Unanswered error", metadata: ["error": "\(error)"])
      response = Response(status: .internalServerError)
    }
    response.headers[.date] = HTTPDate.now()
    response.headers[.server] = "fleetd"
    try await writer.write(response: response.head, body: response.body)
  }
}
