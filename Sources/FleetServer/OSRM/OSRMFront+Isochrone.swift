import FleetGeometry
import FleetRouting
import Foundation

/// `GET /isochrone/v1/driving/{lng},{lat}?contours_minutes=5,10,15`: where a car gets from a point
/// within each limit, as GeoJSON (the request is Mapbox's Isochrone API, the response Valhalla's
/// shape: a feature per contour, largest first, with its `contour`, `metric` and colours).
extension OSRMFront {
  /// Mapbox's bounds: 60 minutes, 100 km.
  static let isochroneMaximumMinutes = 60.0
  static let isochroneMaximumMeters = 100_000.0

  func isochrone(_ engine: RoutingEngine, _ query: OSRMQuery) throws -> IsochroneCollection {
    try query.allow([
      "contours_minutes", "contours_meters", "contours_colors", "polygons", "denoise", "generalize", "exclude",
      "traffic", "depart_at",
    ])
    guard query.coordinates.count == 1 else {
      throw OSRMError("InvalidOptions", "An isochrone takes exactly one coordinate: /isochrone/v1/driving/{lng},{lat}")
    }
    let minutes = try query.numbers("contours_minutes")
    let meters = try query.numbers("contours_meters")
    guard (minutes == nil) != (meters == nil) else {
      throw OSRMError(
        "InvalidOptions", "Give contours_minutes or contours_meters (one of them), e.g. contours_minutes=5,10")
    }
    let (key, asked, maximum) =
      minutes.map { ("contours_minutes", $0, Self.isochroneMaximumMinutes) }
      ?? ("contours_meters", meters!, Self.isochroneMaximumMeters)
    guard (1...RoutingEngine.isochroneMaximumContours).contains(asked.count) else {
      throw OSRMError("InvalidOptions", "\(key) takes 1 to \(RoutingEngine.isochroneMaximumContours) values")
    }
    guard asked.allSatisfy({ $0 > 0 && $0 <= maximum }), zip(asked, asked.dropFirst()).allSatisfy({ $0 < $1 }) else {
      throw OSRMError("InvalidValue", "\(key) must be increasing values above 0 and at most \(Int(maximum))")
    }
    let colours = try query.colours(count: asked.count)
    let denoise = try query.number("denoise") ?? 0
    guard (0...1).contains(denoise) else { throw OSRMError("InvalidValue", "denoise must be between 0 and 1") }
    let generalize = try query.number("generalize")
    guard (generalize ?? 0) >= 0 else { throw OSRMError("InvalidValue", "generalize must be metres, 0 or more") }
    let polygons = query.values["polygons"] == nil ? true : try query.flag("polygons")
    let metric: ReachMetric = minutes != nil ? .duration : .distance
    let isochrone = try engine.isochrone(
      from: query.coordinates[0],
      IsochroneOptions(
        limits: asked.map { metric == .duration ? $0 * 60 : $0 }, metric: metric, excluding: try query.excluded(),
        minimumShare: denoise, toleranceMeters: generalize, traffic: try query.traffic()))
    let features = zip(isochrone.contours, zip(asked, colours)).reversed().map { contour, label in
      IsochroneFeature(
        geometry: IsochroneGeometry(contour.area, polygons: polygons),
        properties: IsochroneProperties(
          contour: label.0, metric: metric == .duration ? "time" : "distance", colour: label.1))
    }
    return IsochroneCollection(features: features)
  }
}

extension OSRMQuery {
  /// A comma-separated list of numbers, or nil when the option is absent.
  func numbers(_ key: String) throws -> [Double]? {
    guard let value = values[key] else { return nil }
    return try value.split(separator: ",", omittingEmptySubsequences: false).map { item in
      guard let number = Double(item), number.isFinite else {
        throw OSRMError("InvalidValue", "\(key): '\(item)' is not a number")
      }
      return number
    }
  }

  func number(_ key: String) throws -> Double? {
    guard let value = values[key] else { return nil }
    guard let number = Double(value), number.isFinite else {
      throw OSRMError("InvalidValue", "\(key) must be a number")
    }
    return number
  }

  /// `contours_colors=ff0000,00ff00`: one hex colour (no `#`) per contour; by default a ramp
  /// from green (the nearest contour) to red.
  func colours(count: Int) throws -> [String] {
    guard let value = values["contours_colors"] else {
      return (0..<count).map { i in Self.hue(count == 1 ? 120 : 120 - 120 * Double(i) / Double(count - 1)) }
    }
    let items = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    guard items.count == count,
      items.allSatisfy({ $0.count == 6 && $0.allSatisfy(\.isHexDigit) })
    else {
      throw OSRMError("InvalidValue", "contours_colors must be one hex colour (rrggbb, no #) per contour")
    }
    return items.map { "#" + $0.lowercased() }
  }

  /// A saturated, mid-light colour of `degrees` hue, as `#rrggbb`.
  static func hue(_ degrees: Double) -> String {
    let (saturation, lightness) = (0.7, 0.45)
    let chroma = (1 - abs(2 * lightness - 1)) * saturation
    let h = degrees / 60
    let x = chroma * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
    let (r, g, b): (Double, Double, Double) =
      h < 1
      ? (chroma, x, 0)
      : h < 2
        ? (x, chroma, 0) : h < 3 ? (0, chroma, x) : h < 4 ? (0, x, chroma) : h < 5 ? (x, 0, chroma) : (chroma, 0, x)
    let m = lightness - chroma / 2
    return "#" + [r, g, b].map { String(format: "%02x", Int(((($0 + m) * 255)).rounded())) }.joined()
  }
}

// MARK: - Response shapes (GeoJSON)

struct IsochroneCollection: Encodable {
  var type = "FeatureCollection"
  var features: [IsochroneFeature]
}

struct IsochroneFeature: Encodable {
  var type = "Feature"
  var geometry: IsochroneGeometry
  var properties: IsochroneProperties
}

/// Valhalla's properties: the contour as asked (minutes or metres), the metric, and the colour
/// under each name a map library reads (lines, geojson.io, Leaflet).
struct IsochroneProperties: Encodable {
  var contour: Double
  var metric: String
  var colour: String
  var opacity = 0.33

  enum CodingKeys: String, CodingKey {
    case contour, metric, color, fill, fillColor, opacity, fillOpacity
    case fillOpacityDashed = "fill-opacity"
  }

  func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(contour, forKey: .contour)
    try c.encode(metric, forKey: .metric)
    for key in [CodingKeys.color, .fill, .fillColor] { try c.encode(colour, forKey: key) }
    for key in [CodingKeys.opacity, .fillOpacityDashed, .fillOpacity] { try c.encode(opacity, forKey: key) }
  }
}

/// A contour's area: a Polygon (one outline and its holes) or a MultiPolygon, each ring closed
/// (its first position repeated last); as lines, a LineString or MultiLineString of the rings.
struct IsochroneGeometry: Encodable {
  var type: String
  var polygons: [[[[Double]]]]

  init(_ area: Area, polygons asPolygons: Bool) {
    polygons = area.polygons.map { rings in
      rings.map { ring in (ring + ring.prefix(1)).map { [Self.round($0.longitude), Self.round($0.latitude)] } }
    }
    let rings = polygons.reduce(0) { $0 + $1.count }
    type =
      asPolygons ? (polygons.count == 1 ? "Polygon" : "MultiPolygon") : (rings == 1 ? "LineString" : "MultiLineString")
  }

  enum CodingKeys: String, CodingKey { case type, coordinates }

  func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(type, forKey: .type)
    switch type {
    case "Polygon": try c.encode(polygons[0], forKey: .coordinates)
    case "MultiPolygon": try c.encode(polygons, forKey: .coordinates)
    case "LineString": try c.encode(polygons[0][0], forKey: .coordinates)
    default: try c.encode(polygons.flatMap { $0 }, forKey: .coordinates)
    }
  }

  /// Six decimals, as Valhalla writes them (about 10 cm).
  static func round(_ degrees: Double) -> Double { (degrees * 1e6).rounded() / 1e6 }
}
