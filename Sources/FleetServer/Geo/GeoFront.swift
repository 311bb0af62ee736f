import FleetCore
import FleetGeocoding
import FleetGeometry
import FleetPlaces
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// fleetd's geo endpoints, over the same `GeocodingEngine` as the SDK's offline use:
///
/// - `GET /fleetkit/v1/geo:reverse?lat=…&lng=…` → an Address as JSON;
/// - `GET /fleetkit/v1/places:search?q=…[&city=…][&near=LAT,LNG][&page_size=…][&page_token=…]`
///   → a PlacePage as JSON;
/// - `GET /fleetkit/v1/apiKey` → the key's ID, app and quotas: how a client checks its key at
///   start-up.
///
/// Each request needs an app's API key (`fleetd apikeys add`), as `key` in the query or the
/// `X-Goog-Api-Key` header, and takes one request from that key's quotas. Errors are Google's
/// error body with the status of their code.
struct GeoFront: Sendable {
  let engine: GeocodingEngine?
  let keys: APIKeyGate
  let metrics: RequestMetrics

  func addRoutes(to routes: Routes) {
    routes.add("/fleetkit/v1/geo:reverse") { request, _ in
      await respond(request, rpc: "geo.reverse") { query, _ throws(FleetError) in try reverse(query) }
    }
    routes.add("/fleetkit/v1/places:search") { request, _ in
      await respond(request, rpc: "places.search") { query, _ throws(FleetError) in try search(query) }
    }
    routes.add("/fleetkit/v1/apiKey") { request, _ in
      await respond(request, rpc: "apikey.get") { _, key throws(FleetError) in
        APIKeyInfo(id: key.id, app: key.app, perMinute: key.perMinute, perDay: key.perDay)
      }
    }
  }

  func reverse(_ query: [String: String]) throws(FleetError) -> any Encodable {
    let lat = try Self.coordinate(query, "lat")
    let lng = try Self.coordinate(query, "lng")
    return try ready().reverse(LatLng(latitude: lat, longitude: lng))
  }

  func search(_ query: [String: String]) throws(FleetError) -> any Encodable {
    guard let keyword = query["q"], !keyword.isEmpty else { throw .invalid("q (the keyword) is required") }
    var search = PlaceSearch(keyword: keyword, city: query["city"], pageToken: query["page_token"])
    if let size = query["page_size"] {
      guard let value = Int(size) else { throw .invalid("page_size must be an integer, got '\(size)'") }
      search.pageSize = value
    }
    if let near = query["near"] {
      let parts = near.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
      guard parts.count == 2, let lat = parts[0], let lng = parts[1] else {
        throw .invalid("near must be LAT,LNG in degrees, got '\(near)'")
      }
      search.near = LatLng(latitude: lat, longitude: lng)
    }
    return try ready().search(search)
  }

  func ready() throws(FleetError) -> GeocodingEngine {
    guard let engine else {
      throw .precondition("geocoding data is not loaded: start fleetd with --geo-osm FILE and/or --geonames FILE")
    }
    return engine
  }

  static func coordinate(_ query: [String: String], _ name: String) throws(FleetError) -> Double {
    guard let text = query[name] else { throw .invalid("\(name) is required") }
    guard let value = Double(text), value.isFinite else { throw .invalid("\(name) must be a number, got '\(text)'") }
    return value
  }

  func respond(
    _ request: Request, rpc: String,
    _ handler: ([String: String], APIKeyRecord) throws(FleetError) -> any Encodable
  ) async -> Response {
    let started = ContinuousClock.now
    var query: [String: String] = [:]
    for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
    let key = query.removeValue(forKey: "key") ?? request.headers[.init("x-goog-api-key")!]
    let outcome: Result<Data, FleetError>
    do {
      let record = try await keys.admit(key: key)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      let value = try handler(query, record)
      do {
        outcome = .success(try encoder.encode(value))
      } catch {
        outcome = .failure(FleetError(.internal, "the answer cannot be encoded: \(error)"))
      }
    } catch {
      outcome = .failure(error)
    }
    let requestID = request.headers[.init("x-request-id")!] ?? UUID().uuidString
    switch outcome {
    case .success(let body):
      metrics.record(rpc: rpc, transport: "rest", code: "OK", duration: ContinuousClock.now - started)
      var headers = HTTPFields()
      headers[.contentType] = "application/json; charset=utf-8"
      headers[.init("x-request-id")!] = requestID
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: body)))
    case .failure(let error):
      metrics.record(rpc: rpc, transport: "rest", code: error.code.rawValue, duration: ContinuousClock.now - started)
      return RESTFront.errorResponse(error, status: error.code.httpStatus, requestID: requestID)
    }
  }
}

/// What `GET /fleetkit/v1/apiKey` tells a client about its key (never the secret or its hash).
struct APIKeyInfo: Encodable {
  var id: String
  var app: String
  var perMinute: Int
  var perDay: Int
}
