import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

/// `GET /isochrone/v1/driving/{lng},{lat}` on a real fleetd with Monaco's roads: Mapbox's
/// request, Valhalla's GeoJSON, OSRM's error codes.
@Suite("Isochrone HTTP API")
struct IsochroneAPITests {
  static let casino = "7.4280,43.7395"

  /// Every ring of a Polygon or MultiPolygon feature.
  func polygons(_ feature: [String: Any]) throws -> [[[[Double]]]] {
    let geometry = try #require(feature["geometry"] as? [String: Any])
    switch geometry["type"] as? String {
    case "Polygon": return [try #require(geometry["coordinates"] as? [[[Double]]])]
    case "MultiPolygon": return try #require(geometry["coordinates"] as? [[[[Double]]]])
    default: throw FleetError(.invalidArgument, "not a polygon: \(geometry["type"] ?? "none")")
    }
  }

  func signedArea(_ ring: [[Double]]) -> Double {
    zip(ring, ring.dropFirst()).reduce(0) { $0 + ($1.0[0] * $1.1[1] - $1.1[0] * $1.0[1]) } / 2
  }

  @Test func contoursAnswerValhallasGeoJSON() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (status, json, _) = try await server.http(
        "GET", "/isochrone/v1/driving/\(Self.casino)?contours_minutes=2,4", token: nil)
      #expect(status == 200)
      #expect(json["type"] as? String == "FeatureCollection")
      let features = try #require(json["features"] as? [[String: Any]])
      #expect(features.count == 2)
      let properties = features.map { $0["properties"] as? [String: Any] ?? [:] }
      // The largest contour first, so that the nearer one draws on top.
      #expect(properties.map { $0["contour"] as? Double } == [4, 2])
      #expect(properties.allSatisfy { $0["metric"] as? String == "time" })
      for p in properties {
        let colour = try #require(p["color"] as? String)
        #expect(colour.count == 7 && colour.hasPrefix("#"))
        #expect(p["fill"] as? String == colour && p["fillColor"] as? String == colour)
        #expect(p["opacity"] as? Double == 0.33 && p["fill-opacity"] as? Double == 0.33 && p["fillOpacity"] as? Double == 0.33)
      }
      var areas: [Area] = []
      for feature in features {
        let parts = try polygons(feature)
        #expect(!parts.isEmpty)
        for rings in parts {
          // Closed rings; the outline counter-clockwise and holes clockwise (RFC 7946).
          #expect(rings.allSatisfy { $0.count >= 4 && $0.first == $0.last })
          #expect(signedArea(rings[0]) > 0)
          #expect(rings.dropFirst().allSatisfy { signedArea($0) < 0 })
        }
        areas.append(
          Area(polygons: parts.map { $0.map { $0.map { LatLng(latitude: $0[1], longitude: $0[0]) } } }))
      }
      let start = LatLng(latitude: 43.7395, longitude: 7.4280)
      #expect(areas[1].contains(start) && areas[0].contains(start))
      // Nearly all of the 2-minute area lies inside the 4-minute one.
      #expect(areas[0].bounds.low.latitude <= areas[1].bounds.low.latitude + 0.001)

      let (_, metres, _) = try await server.http(
        "GET",
        "/isochrone/v1/driving/\(Self.casino)?contours_meters=1500&contours_colors=FF0000&polygons=false&generalize=20",
        token: nil)
      let line = try #require((metres["features"] as? [[String: Any]])?.first)
      let lineProperties = try #require(line["properties"] as? [String: Any])
      #expect(lineProperties["metric"] as? String == "distance" && lineProperties["contour"] as? Double == 1500)
      #expect(lineProperties["color"] as? String == "#ff0000")
      let type = (line["geometry"] as? [String: Any])?["type"] as? String
      #expect(type == "LineString" || type == "MultiLineString")
    }
  }

  @Test func badRequestsNameTheOptionAndTheRule() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let cases: [(String, String)] = [
        ("?contours_minutes=5&contours_meters=500", "InvalidOptions"),
        ("", "InvalidOptions"),
        ("?contours_minutes=61", "InvalidValue"),
        ("?contours_minutes=10,5", "InvalidValue"),
        ("?contours_minutes=0", "InvalidValue"),
        ("?contours_minutes=1,2,3,4,5", "InvalidOptions"),
        ("?contours_minutes=five", "InvalidValue"),
        ("?contours_meters=100001", "InvalidValue"),
        ("?contours_minutes=5&contours_colors=red", "InvalidValue"),
        ("?contours_minutes=5&denoise=2", "InvalidValue"),
        ("?contours_minutes=5&generalize=-1", "InvalidValue"),
        ("?contours_minutes=5&polygons=maybe", "InvalidQuery"),
        ("?contours_minutes=5&exclude=boats", "InvalidValue"),
        ("?contours_minutes=5&radius=3", "InvalidQuery"),
      ]
      for (query, code) in cases {
        let (status, json, _) = try await server.http("GET", "/isochrone/v1/driving/\(Self.casino)\(query)", token: nil)
        #expect(status == 400, "\(query)")
        #expect(json["code"] as? String == code, "\(query): \(json)")
        #expect(!((json["message"] as? String) ?? "").isEmpty)
      }
      let (status, json, _) = try await server.http(
        "GET", "/isochrone/v1/driving/\(Self.casino);7.42,43.73?contours_minutes=5", token: nil)
      #expect(status == 400 && json["code"] as? String == "InvalidOptions")
      let message = try #require(json["message"] as? String)
      #expect(message.contains("exactly one coordinate"))
    }
  }
}
