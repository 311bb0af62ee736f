import FleetGeometry
import Foundation

extension ServiceAreas {
  /// Reads a GeoJSON FeatureCollection of Polygon and MultiPolygon features (RFC 7946: rings
  /// closed, positions longitude first), each with `provider`, `kind` (`service_area` or
  /// `zone`), `name`, and for zones `fee` (a decimal string) and `surge` (true or false). An
  /// error names `source`, the JSON path and the rule.
  public init(geoJSON data: Data, source: String) throws(FleetError) {
    let root = JSONInput(try JSONValue.parse(data, source: source), source: source)
    _ = try root.object(known: ["type", "features", "name", "crs", "bbox"])
    guard try root["type"].string() == "FeatureCollection" else {
      throw root["type"].error("must be \"FeatureCollection\"")
    }
    var regions: [(Region, Area)] = []
    for feature in try root["features"].array() {
      _ = try feature.object(known: ["type", "geometry", "properties", "id", "bbox"])
      guard try feature["type"].string() == "Feature" else { throw feature["type"].error("must be \"Feature\"") }
      let properties = feature["properties"]
      _ = try properties.object(known: ["provider", "kind", "name", "fee", "surge"])
      let provider = try properties["provider"].string()
      do {
        try ResourceID.validateProvider(provider, field: "provider")
      } catch {
        throw properties["provider"].error(error.message)
      }
      let kindText = try properties["kind"].string()
      guard let kind = Region.Kind(rawValue: kindText) else {
        throw properties["kind"].error("must be \"service_area\" or \"zone\", got \"\(kindText)\"")
      }
      let name = try properties["name"].string()
      guard !name.isEmpty else { throw properties["name"].error("must not be empty") }
      var region = Region(provider: provider, kind: kind, name: name)
      if properties["fee"].isPresent {
        guard kind == .zone else { throw properties["fee"].error("only a zone has a fee") }
        let fee = try properties["fee"].decimal()
        guard fee.micros >= 0 else { throw properties["fee"].error("must not be negative, got \"\(fee)\"") }
        region.fee = fee
      }
      if properties["surge"].isPresent {
        guard kind == .zone else { throw properties["surge"].error("only a zone computes surge") }
        region.surge = try properties["surge"].bool()
      }
      guard !regions.contains(where: { $0.0.provider == provider && $0.0.kind == kind && $0.0.name == name }) else {
        throw properties["name"].error("\(kind.rawValue) '\(name)' of provider '\(provider)' is named twice")
      }
      regions.append((region, try Self.area(feature["geometry"])))
    }
    self.init(regions)
  }

  static func area(_ geometry: JSONInput) throws(FleetError) -> Area {
    _ = try geometry.object(known: ["type", "coordinates", "bbox"])
    let type = try geometry["type"].string()
    let coordinates = geometry["coordinates"]
    switch type {
    case "Polygon": return Area(polygons: [try polygon(coordinates)])
    case "MultiPolygon":
      let polygons = try coordinates.array()
      guard !polygons.isEmpty else { throw coordinates.error("must hold at least one polygon") }
      var rings: [[[LatLng]]] = []
      for polygon in polygons { rings.append(try Self.polygon(polygon)) }
      return Area(polygons: rings)
    default: throw geometry["type"].error("must be \"Polygon\" or \"MultiPolygon\", got \"\(type)\"")
    }
  }

  static func polygon(_ input: JSONInput) throws(FleetError) -> [[LatLng]] {
    let rings = try input.array()
    guard !rings.isEmpty else { throw input.error("must hold an outer ring") }
    var result: [[LatLng]] = []
    for ring in rings {
      var points: [LatLng] = []
      for position in try ring.array() {
        let values = try position.array()
        guard values.count >= 2 else { throw position.error("must be [longitude, latitude]") }
        let point = LatLng(latitude: try values[1].number(), longitude: try values[0].number())
        guard point.isOnGlobe else {
          throw position.error("must be [longitude, latitude] within [-180, 180] and [-90, 90]")
        }
        points.append(point)
      }
      guard points.count >= 4 else { throw ring.error("a ring needs at least four positions, got \(points.count)") }
      guard points.first == points.last else {
        throw ring.error("a ring must be closed: its last position equal to its first (RFC 7946)")
      }
      result.append(Array(points.dropLast()))
    }
    return result
  }
}
