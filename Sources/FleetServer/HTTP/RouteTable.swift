import HTTPTypes
import Hummingbird
import Synchronization

/// Every route of fleetd's HTTP port, by path and method, so that a known path asked with a
/// wrong method gets 405 with `Allow` (not 404) and a CORS preflight learns which methods it
/// may use. Filled by `Routes` while the server is built, read after.
final class RouteTable: Sendable {
  struct Entry: Sendable {
    /// The path's first segment, when the entry's paths all have that one: only paths starting
    /// with it are offered to `methods` (every request looks its path up).
    let firstSegment: Substring?
    /// The methods a path (whole, and split at `/`) allows, or nil when it is not this entry's.
    let methods: @Sendable (String, [Substring]) -> [HTTPRequest.Method]?
    /// Whether browsers on the configured origins may call it (`--cors-origin`).
    let crossOrigin: Bool
  }

  let entries = Mutex<[Entry]>([])

  func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

  /// The methods a path allows, and whether other origins may call it; nil for an unknown path.
  func lookup(_ path: String) -> (methods: [HTTPRequest.Method], crossOrigin: Bool)? {
    let parts = path.split(separator: "/")
    return entries.withLock { entries in
      var methods: [HTTPRequest.Method] = []
      var crossOrigin = false
      for entry in entries where entry.firstSegment == nil || entry.firstSegment == parts.first {
        guard let allowed = entry.methods(path, parts) else { continue }
        for method in allowed where !methods.contains(method) { methods.append(method) }
        crossOrigin = crossOrigin || entry.crossOrigin
      }
      return methods.isEmpty ? nil : (methods, crossOrigin)
    }
  }
}

/// How the fronts register their routes: on Hummingbird's router, and in the route table.
struct Routes {
  let router: Router<FleetRequestContext>
  let table: RouteTable
  let onLoop: LoopRoutes

  /// A route at `pattern`: constant segments, `:name` for one segment, `**` for the rest.
  func add(
    _ pattern: String, method: HTTPRequest.Method = .get, crossOrigin: Bool = true,
    _ handler: @escaping @Sendable (Request, FleetRequestContext) async throws -> Response
  ) {
    router.on(RouterPath(pattern), method: method, use: handler)
    let matcher = PathPattern(pattern)
    table.append(
      RouteTable.Entry(
        firstSegment: matcher.firstSegment, methods: { matcher.matches($1) ? [method] : nil }, crossOrigin: crossOrigin)
    )
  }

  /// A GET route answered from its path and query alone, on the connection's event loop
  /// (`LoopRoute`); on the router too, for connections it already serves and for HEAD.
  func addAnsweredOnLoop(
    _ pattern: String, offLoop: Bool, _ answer: @escaping @Sendable (_ path: String, _ query: String) -> PlainResponse
  ) {
    let route = LoopRoute(pattern: PathPattern(pattern), offLoop: offLoop, answer: answer)
    onLoop.append(route)
    add(pattern) { request, _ in
      await route.respond(path: request.uri.path, query: request.uri.query ?? "").response
    }
  }

  /// Routes under `prefix` for every method, dispatched by the handler itself: `methods` says
  /// which a path allows (nil: none of its paths).
  func addDispatcher(
    prefix: String, methods: @escaping @Sendable (String) -> [HTTPRequest.Method]?,
    _ handler: @escaping @Sendable (Request, FleetRequestContext) async throws -> Response
  ) {
    for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
      router.on(RouterPath(prefix + "**"), method: method, use: handler)
    }
    table.append(
      RouteTable.Entry(
        firstSegment: PathPattern(prefix).firstSegment,
        methods: { path, _ in path.hasPrefix(prefix) ? methods(path) : nil }, crossOrigin: true))
  }
}

/// A route's path as Hummingbird reads it: constant segments, `:name` matching one segment,
/// `**` matching the rest of the path.
struct PathPattern: Sendable {
  let segments: [Substring]

  init(_ pattern: String) { segments = pattern.split(separator: "/") }

  /// The first segment when it is a constant one.
  var firstSegment: Substring? {
    guard let first = segments.first, !first.hasPrefix(":"), first != "**" else { return nil }
    return first
  }

  /// Whether the path, split at `/`, matches.
  func matches(_ parts: [Substring]) -> Bool {
    for (i, segment) in segments.enumerated() {
      if segment == "**" { return parts.count > i }
      guard i < parts.count else { return false }
      if segment.hasPrefix(":") { continue }
      guard segment == parts[i] else { return false }
    }
    return parts.count == segments.count
  }
}
