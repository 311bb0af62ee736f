import FleetCore
import FleetGeometry
import FleetMap
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// fleetd's web pages on the HTTP port: the trip sharing page (`/share/trips/{trip}`), the
/// shipment tracking page (`/track/{tracking_id}`), the fleet
/// page (`/fleet`), the journey-sharing library they are built on
/// (`/web/fleetkit/journey-sharing.js`), Leaflet from the system's libjs-leaflet
/// (`/web/leaflet/…`), and map tiles drawn from the road graph (`/tiles/{z}/{x}/{y}.svg`).
/// Tokens travel in the page's fragment, so they never reach a server log.
struct WebFront: Sendable {
  /// nil when fleetd runs without a road graph: pages then show no basemap.
  let tiles: TileCache?
  let leafletDirectory: String

  static let leafletMissing = """
    Leaflet is not installed on this server, so fleetd's pages cannot draw their map.
    On Debian or Ubuntu: sudo apt-get install libjs-leaflet libjs-leaflet.markercluster
    (fleetd serves it from /usr/share/javascript/leaflet).

    """

  /// The pages are fleetd's own; the library, Leaflet, the map's description and its tiles may
  /// be used by apps on the configured origins.
  func addRoutes(to routes: Routes) {
    routes.add("/fleet", crossOrigin: false) { _, _ in Self.asset("fleet.html") }
    routes.add("/share/trips/:trip", crossOrigin: false) { _, _ in Self.asset("share.html") }
    routes.add("/track/:tracking", crossOrigin: false) { _, _ in Self.asset("track.html") }
    routes.add("/web/fleetkit/:file") { _, context in
      Self.asset(context.parameters.get("file") ?? "")
    }
    routes.add("/web/leaflet/**") { _, context in
      self.leaflet(context.parameters.getCatchAll().joined(separator: "/"))
    }
    routes.add("/web/map.json") { _, _ in self.mapInfo() }
    routes.add("/tiles/:z/:x/:y") { _, context in
      await self.tile(
        z: context.parameters.get("z"), x: context.parameters.get("x"), y: context.parameters.get("y"))
    }
  }

  /// A page's first view and where its tiles come from.
  func mapInfo() -> Response {
    var info: [String: Any] = ["attribution": "© OpenStreetMap contributors"]
    if let tiles {
      let b = tiles.bounds
      info["tiles"] = "/tiles/{z}/{x}/{y}.svg"
      info["maxZoom"] = TileRenderer.maximumZoom
      info["bounds"] = [
        "south": b.low.latitude, "west": b.low.longitude, "north": b.high.latitude, "east": b.high.longitude,
      ]
    }
    let data = (try? JSONSerialization.data(withJSONObject: info, options: [.sortedKeys])) ?? Data("{}".utf8)
    return Self.response(data, type: "application/json; charset=utf-8", cache: "no-cache")
  }

  func tile(z: String?, x: String?, y: String?) async -> Response {
    guard let tiles else {
      return Self.text(.notFound, "fleetd has no road graph to draw tiles from: start it with --osm FILE.osm.pbf\n")
    }
    guard let z = z.flatMap(Int.init), let x = x.flatMap(Int.init), let yText = y, yText.hasSuffix(".svg"),
      let y = Int(yText.dropLast(4))
    else {
      return Self.text(.notFound, "tiles are /tiles/{z}/{x}/{y}.svg with whole numbers\n")
    }
    guard let data = await onDedicatedThread(named: "tile", { tiles.tile(z: z, x: x, y: y) }) else {
      return Self.text(.notFound, "no tile \(z)/\(x)/\(y): zoom is 0-\(TileRenderer.maximumZoom), x and y 0-2^zoom-1\n")
    }
    return Self.response(data, type: "image/svg+xml", cache: "public, max-age=86400")
  }

  /// A file of the system's Leaflet (and its marker clusters), or a message saying how to
  /// install it.
  func leaflet(_ path: String) -> Response {
    guard !path.split(separator: "/").contains(where: { $0 == ".." || $0.hasPrefix(".") }),
      let type = Self.contentType(of: path)
    else {
      return Self.text(.notFound, "no such file\n")
    }
    guard let data = FileManager.default.contents(atPath: leafletDirectory + "/" + path) else {
      if !FileManager.default.fileExists(atPath: leafletDirectory + "/leaflet.js") {
        return Self.text(.notFound, Self.leafletMissing)
      }
      return Self.text(.notFound, "no such file in \(leafletDirectory): \(path)\n")
    }
    return Self.response(data, type: type, cache: "public, max-age=3600")
  }

  static func asset(_ name: String) -> Response {
    guard let type = contentType(of: name), !name.contains("/"), !name.hasPrefix(".") else {
      return text(.notFound, "no such file\n")
    }
    guard let directory = WebAssets.directory else {
      return text(
        .internalServerError,
        "fleetd's web assets were not found beside its binary (FleetKit_FleetServer.resources): install them with it\n")
    }
    guard let data = FileManager.default.contents(atPath: directory + "/" + name) else {
      return text(.notFound, "no such file\n")
    }
    // Pages are small and change with fleetd: always revalidated.
    return response(data, type: type, cache: "no-cache")
  }

  static func contentType(of path: String) -> String? {
    switch (path as NSString).pathExtension {
    case "html": "text/html; charset=utf-8"
    case "js": "text/javascript; charset=utf-8"
    case "css": "text/css; charset=utf-8"
    case "png": "image/png"
    case "svg": "image/svg+xml"
    case "map", "json": "application/json"
    default: nil
    }
  }

  static func response(_ data: Data, type: String, cache: String) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = type
    headers[.cacheControl] = cache
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
  }

  static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "text/plain; charset=utf-8"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message)))
  }
}

/// Where the pages and the journey-sharing library are: SwiftPM's resource bundle beside the
/// binary, or the source tree it was built from.
enum WebAssets {
  static let directory: String? = {
    let bundle = "FleetKit_FleetServer.resources"
    var candidates = [Bundle.main.bundleURL.appendingPathComponent(bundle)]
    if let executable = Bundle.main.executableURL {
      candidates.append(executable.deletingLastPathComponent().appendingPathComponent(bundle))
    }
    candidates = candidates.map { $0.appendingPathComponent("Assets") }
    candidates.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Assets"))
    return candidates.map(\.path).first { FileManager.default.fileExists(atPath: $0 + "/journey-sharing.js") }
  }()
}
