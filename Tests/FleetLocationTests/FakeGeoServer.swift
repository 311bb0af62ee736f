import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A loopback HTTP server that misbehaves on purpose: for each connection (numbered from 1) it
/// either drops it without answering — a network failure as the client sees it — or answers
/// with a canned status, headers and body.
final class FakeGeoServer: Sendable {
  enum Behaviour: Sendable {
    case drop
    case answer(status: Int, headers: [String: String], body: String)
  }

  let channel: any Channel
  let connections = Counter()

  var port: Int { channel.localAddress?.port ?? 0 }
  var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

  init(_ behaviour: @escaping @Sendable (Int) -> Behaviour) async throws {
    let connections = connections
    channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        let number = connections.increment()
        return channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(Responder(behaviour: behaviour(number)))
        }
      }
      .bind(host: "127.0.0.1", port: 0).get()
  }

  func close() async throws { try await channel.close() }

  /// Reads one request's head, then acts.
  final class Responder: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let behaviour: Behaviour
    let received = Mutex("")

    init(behaviour: Behaviour) { self.behaviour = behaviour }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      var buffer = unwrapInboundIn(data)
      let text = buffer.readString(length: buffer.readableBytes) ?? ""
      let complete = received.withLock { r in
        r += text
        return r.contains("\r\n\r\n")
      }
      guard complete else { return }
      switch behaviour {
      case .drop:
        context.close(promise: nil)
      case .answer(let status, let headers, let body):
        var head = "HTTP/1.1 \(status) Fake\r\nContent-Type: application/json\r\nConnection: close\r\n"
        head += "Content-Length: \(body.utf8.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let response = context.channel.allocator.buffer(string: head + "\r\n" + body)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        // Then a FIN, as a server does after `Connection: close`: a full close could reset the
        // connection before a slow client read the answer, which it would take for a drop.
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in
          bound.value.close(mode: .output, promise: nil)
        }
      }
    }
  }
}

final class Counter: Sendable {
  let value = Mutex(0)
  func increment() -> Int {
    value.withLock {
      $0 += 1
      return $0
    }
  }
  var count: Int { value.withLock { $0 } }
}
