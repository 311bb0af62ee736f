import FleetCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What every HTTP request passes before its route: OPTIONS and CORS preflights are answered
/// from the route table, a known path asked with another method gets 405 with `Allow`, and the
/// answers to browsers on the configured origins (`--cors-origin`) carry CORS headers, on the
/// routes meant for them (REST, its event streams, the OSRM API, the pages' library, tiles).
struct RouteGuard: RouterMiddleware {
  typealias Context = FleetRequestContext

  let routes: RouteTable
  /// Origins allowed to call fleetd from a browser (`https://app.example.com`); none by default.
  let corsOrigins: Set<String>

  /// Request headers a browser may send across origins.
  static let allowedHeaders = ["authorization", "content-type", "x-goog-api-key", "x-request-id", "x-server-timeout"]
  /// Response headers a page on another origin may read.
  static let exposedHeaders = "retry-after, x-request-id"

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    let path = request.uri.path
    guard let route = routes.lookup(path) else { return try await next(request, context) }
    let origin = request.headers[.origin].flatMap { corsOrigins.contains($0) && route.crossOrigin ? $0 : nil }
    let allow = (route.methods + (route.methods.contains(.get) ? [.head] : []) + [.options])
      .map(\.rawValue).joined(separator: ", ")
    if request.method == .options {
      // A preflight asks whether a method and headers may follow; any other OPTIONS, what is allowed.
      var headers = HTTPFields()
      headers[.allow] = allow
      if let origin, request.headers[.accessControlRequestMethod] != nil {
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlAllowMethods] = allow
        let asked = (request.headers[.accessControlRequestHeaders] ?? "").split(separator: ",")
          .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        headers[.accessControlAllowHeaders] = asked.filter(Self.allowedHeaders.contains).joined(separator: ", ")
        headers[.accessControlMaxAge] = "600"
        headers[.vary] = "Origin"
      }
      return Response(status: .noContent, headers: headers)
    }
    var response: Response
    if route.methods.contains(request.method) || (request.method == .head && route.methods.contains(.get)) {
      response = try await next(request, context)
    } else {
      let error = FleetError(
        .unimplemented, "\(request.method.rawValue) is not allowed on \(path); allowed: \(allow)")
      var headers = HTTPFields()
      headers[.contentType] = "application/json; charset=utf-8"
      headers[.allow] = allow
      response = Response(
        status: .methodNotAllowed, headers: headers,
        body: .init(byteBuffer: ByteBuffer(data: RESTFront.errorBody(error, status: .methodNotAllowed))))
    }
    if let origin {
      for (name, value) in Self.crossOriginHeaders(origin: origin) { response.headers[name] = value }
    }
    return response
  }

  /// The headers that let a page on an allowed origin read an answer.
  static func crossOriginHeaders(origin: String) -> [(HTTPField.Name, String)] {
    [(.accessControlAllowOrigin, origin), (.accessControlExposeHeaders, exposedHeaders), (.vary, "Origin")]
  }
}
