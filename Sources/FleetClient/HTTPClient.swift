import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// How the client libraries reach fleetd's HTTP endpoints and an app's token server: one
/// HTTP/1.1 client over SwiftNIO, for whole answers and for bodies that stream for as long as a
/// ride lasts (server-sent events). URLSession on Linux neither streams a body to async code nor
/// keeps an idle connection open, so one client on NIO serves both. Each request opens its own
/// connection (TLS for `https`, with the system's trust roots).
///
/// Failures are `FleetClientError`s: no connection is UNAVAILABLE, a request over its time
/// DEADLINE_EXCEEDED. Any HTTP answer, errors included, is returned as it came.
public struct HTTPClient: Sendable {
  public struct Request: Sendable {
    public var method: String
    public var url: URL
    public var headers: [(String, String)]
    public var body: Data?
    /// For the whole exchange; for a streamed body, until its answer's head.
    public var timeout: Duration

    public init(
      method: String = "GET", url: URL, headers: [(String, String)] = [], body: Data? = nil,
      timeout: Duration = .seconds(10)
    ) {
      self.method = method
      self.url = url
      self.headers = headers
      self.body = body
      self.timeout = timeout
    }
  }

  public struct Response: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    /// The whole body; for a streamed 200 answer, empty (its body went to the handler).
    public var body: Data

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
      self.status = status
      self.headers = headers
      self.body = body
    }

    /// The first value of a header, its name in any case.
    public func header(_ name: String) -> String? {
      headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
  }

  /// The largest whole body read; a longer one is an error, not an allocation.
  public var maximumBodyBytes = 16 << 20
  /// Called with the address connected to, after DNS and before a byte is sent: throwing
  /// refuses it (fleetd's webhooks refuse private networks this way).
  public var addressCheck: (@Sendable (SocketAddress) throws -> Void)?

  public init() {}

  /// Sends `request` and returns the whole answer.
  public func send(_ request: Request) async throws -> Response {
    try await within(request) { try await exchange(request, onBody: nil) }
  }

  /// Sends `request`; the body of a 200 answer is handed to `onBody` as it arrives, until the
  /// server ends it or the task is cancelled (which closes the connection). Any other answer is
  /// returned whole.
  public func stream(_ request: Request, onBody: @escaping @Sendable (ByteBuffer) async throws -> Void) async throws
    -> Response
  {
    try await exchange(request, onBody: onBody)
  }

  /// Fails with DEADLINE_EXCEEDED when `request.timeout` passes first.
  func within<T: Sendable>(_ request: Request, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
      group.addTask { try await body() }
      group.addTask {
        try await Task.sleep(for: request.timeout)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let result = first else {
        throw FleetClientError(
          .deadlineExceeded, "\(request.method) \(request.url.absoluteString) got no answer within \(request.timeout)")
      }
      return result
    }
  }

  func exchange(_ request: Request, onBody: (@Sendable (ByteBuffer) async throws -> Void)?) async throws -> Response {
    let url = request.url
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host else {
      throw FleetClientError(.invalidArgument, "'\(url.absoluteString)' is not an http or https URL")
    }
    let tls = scheme == "https"
    let port = url.port ?? (tls ? 443 : 80)
    let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
    do {
      let sslContext = tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
      channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connectTimeout(.milliseconds(Int64(min(request.timeout.seconds, 86_400) * 1000)))
        .connect(host: host, port: port) { channel in
          channel.eventLoop.makeCompletedFuture {
            if let sslContext {
              try channel.pipeline.syncOperations.addHandler(
                try NIOSSLClientHandler(context: sslContext, serverHostname: host))
            }
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
              wrappingChannelSynchronously: channel)
          }
        }
    } catch {
      throw FleetClientError(.unavailable, "\(host):\(port) cannot be reached: \(error)")
    }
    if let addressCheck {
      do {
        guard let address = channel.channel.remoteAddress else {
          throw FleetClientError(.unavailable, "\(host):\(port): the connection has no peer address")
        }
        try addressCheck(address)
      } catch {
        try? await channel.channel.close()
        throw error
      }
    }
    let maximum = maximumBodyBytes
    // A cancelled caller closes the connection: a server that stopped answering holds nobody.
    return try await withTaskCancellationHandler {
      try await exchange(request, on: channel, host: host, port: port, maximum: maximum, onBody: onBody)
    } onCancel: {
      channel.channel.close(promise: nil)
    }
  }

  func exchange(
    _ request: Request, on channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>, host: String,
    port: Int, maximum: Int, onBody: (@Sendable (ByteBuffer) async throws -> Void)?
  ) async throws -> Response {
    let url = request.url
    return try await channel.executeThenClose { inbound, outbound in
      var path = url.path.isEmpty ? "/" : url.path
      if let query = url.query { path += "?\(query)" }
      var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: path)
      head.headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
      for (name, value) in request.headers { head.headers.add(name: name, value: value) }
      if let body = request.body { head.headers.add(name: "Content-Length", value: "\(body.count)") }
      head.headers.add(name: "Connection", value: "close")
      // The whole request in one write: a server may answer once it has read the head and close,
      // and a part written after that would fail although the answer is already here.
      var parts: [HTTPClientRequestPart] = [.head(head)]
      if let body = request.body { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
      parts.append(.end(nil))
      var unsent: (any Error)?
      do {
        try await outbound.write(contentsOf: parts)
      } catch {
        unsent = error
      }
      var response = Response(status: 0)
      do {
        for try await part in inbound {
          switch part {
          case .head(let answer):
            response.status = Int(answer.status.code)
            response.headers = answer.headers.map { ($0.name, $0.value) }
          case .body(let buffer):
            if response.status == 200, let onBody {
              try await onBody(buffer)
            } else {
              guard response.body.count + buffer.readableBytes <= maximum else {
                throw FleetClientError(.resourceExhausted, "the answer's body exceeds \(maximum) bytes")
              }
              response.body.append(contentsOf: buffer.readableBytesView)
            }
          case .end:
            return response
          }
        }
      } catch let error as FleetClientError {
        throw error
      } catch  where onBody != nil && response.status == 200 {
        // The handler's own failure, or the stream cut off: the caller decides.
        throw error
      } catch {
        if response.status == 0, let unsent {
          throw FleetClientError(.unavailable, "the request to \(host):\(port) could not be sent: \(unsent)")
        }
        throw FleetClientError(.unavailable, "the answer from \(host):\(port) broke off: \(error)")
      }
      guard response.status != 0 else {
        if let unsent {
          throw FleetClientError(.unavailable, "the request to \(host):\(port) could not be sent: \(unsent)")
        }
        throw FleetClientError(.unavailable, "\(host):\(port) closed the connection without an answer")
      }
      return response
    }
  }
}

extension Duration {
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
