import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// An answer made from a request's path and query alone: status, content type and body.
struct PlainResponse: Sendable {
  var status: HTTPResponse.Status
  var contentType: String
  var body: ByteBuffer

  /// The same answer as Hummingbird's router writes it.
  var response: Response {
    var headers = HTTPFields()
    headers[.contentType] = contentType
    return Response(status: status, headers: headers, body: .init(byteBuffer: body))
  }
}

/// A GET route answered from its path and query, on the connection's event loop, by
/// `LoopAnsweringHandler` — without the async channel and task Hummingbird gives a connection,
/// which cost more than a route or a nearest on a small city. Work that grows with the request
/// (`offLoop`) goes to NIO's thread pool, as `OffLoop` sends it.
struct LoopRoute: Sendable {
  let pattern: PathPattern
  let offLoop: Bool
  let answer: @Sendable (_ path: String, _ query: String) -> PlainResponse

  /// Answered where the router would answer it: on the task, or on the thread pool.
  func respond(path: String, query: String) async -> PlainResponse {
    guard offLoop else { return answer(path, query) }
    return await OffLoop.run { answer(path, query) }
  }
}

/// The routes answered on the loop, by path. Filled by `Routes` while the server is built.
final class LoopRoutes: Sendable {
  private let routes = Mutex<[LoopRoute]>([])

  func append(_ route: LoopRoute) { routes.withLock { $0.append(route) } }

  /// The route for a path (without its query), if one is answered on the loop.
  func route(for path: String) -> LoopRoute? {
    let parts = path.fields(separatedBy: UInt8(ascii: "/"), omittingEmpty: true)
    return routes.withLock { routes in
      routes.first { $0.pattern.firstSegment == parts.first && $0.pattern.matches(parts) }
    }
  }
}
