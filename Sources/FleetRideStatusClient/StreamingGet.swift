import FleetCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 GET whose body is handed over as it arrives: an event stream stays open for as
/// long as the ride lasts, with no idle timeout (URLSession on Linux has one, and streams no body
/// to async code).
enum StreamingGet {
  /// The answer's status, and its body when the status is not 200 (an error to read).
  struct Answer: Sendable {
    var status: Int
    var errorBody: Data
  }

  /// Reads `url` until the server ends the body, handing each chunk of a 200 answer to `onBody`.
  /// Cancelling the task closes the connection.
  static func get(
    _ url: URL, headers: [(String, String)], connectTimeout: Duration,
    onBody: (ByteBuffer) async throws -> Void
  ) async throws -> Answer {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host else {
      throw URLError(.unsupportedURL)
    }
    let tls = scheme == "https"
    let port = url.port ?? (tls ? 443 : 80)
    let sslContext = tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .connectTimeout(.milliseconds(Int64(min(connectTimeout.seconds, 86_400) * 1000)))
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
    return try await channel.executeThenClose { inbound, outbound in
      var path = url.path.isEmpty ? "/" : url.path
      if let query = url.query { path += "?\(query)" }
      var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
      head.headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
      for (name, value) in headers { head.headers.add(name: name, value: value) }
      try await outbound.write(.head(head))
      try await outbound.write(.end(nil))
      var answer = Answer(status: 0, errorBody: Data())
      for try await part in inbound {
        switch part {
        case .head(let response):
          answer.status = Int(response.status.code)
        case .body(let buffer):
          if answer.status == 200 {
            try await onBody(buffer)
          } else {
            answer.errorBody.append(contentsOf: buffer.readableBytesView)
          }
        case .end:
          return answer
        }
      }
      return answer
    }
  }
}
