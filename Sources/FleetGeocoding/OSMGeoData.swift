import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

/// What geocoding takes from an OpenStreetMap extract: addresses, named streets, places of
/// interest, administrative boundaries and place names (suburbs, quarters).
struct OSMGeoData: Sendable, Codable {
  struct AddressPoint: Sendable, Codable {
    var coordinate: LatLng
    var houseNumber: String?
    var street: String
    var postcode: String?
    var city: String?
  }

  struct Street: Sendable, Codable {
    var name: String
    var points: [LatLng]
  }

  struct PlaceName: Sendable, Codable {
    var name: String
    /// OSM `place=*`: city, town, village, suburb, quarter, neighbourhood, …
    var kind: String
    var coordinate: LatLng
  }

  struct PointOfInterest: Sendable, Codable {
    /// "node/123", "way/456".
    var id: String
    var name: String
    /// Every `name:*` translation, by language code, and `alt_name`/`official_name`.
    var otherNames: [String: String]
    /// The main tag, as `key=value` (`amenity=pharmacy`).
    var category: String
    var coordinate: LatLng
    var street: String?
    var houseNumber: String?
    var city: String?
  }

  var addresses: [AddressPoint] = []
  var streets: [Street] = []
  var placeNames: [PlaceName] = []
  var pointsOfInterest: [PointOfInterest] = []
  var adminAreas: [AdminArea] = []

  /// The tag keys whose features are places of interest, in order of preference when a
  /// feature has several.
  static let categoryKeys = [
    "amenity", "shop", "tourism", "leisure", "office", "healthcare", "craft", "historic", "sport", "emergency",
  ]
  static let placeKinds: Set<String> = [
    "city", "town", "village", "hamlet", "suburb", "quarter", "neighbourhood", "borough", "locality",
  ]

  /// Reads an extract in two passes: boundary relations first (to know which ways they need),
  /// then nodes and ways.
  init(reading source: some OSMElementSource) throws {
    var boundaries: [(name: String, level: Int, countryCode: String?, wayIDs: [Int64])] = []
    try source.read(
      .relations, node: { _ in }, way: { _ in },
      relation: { relation in
        let tags = relation.tags
        guard tags["boundary"] == "administrative", let name = tags["name"],
          let level = tags["admin_level"].flatMap({ Int($0) })
        else { return }
        let ways = relation.members.filter { $0.type == .way && $0.role != "subarea" }.map(\.id)
        let code = (tags["ISO3166-1:alpha2"] ?? tags["ISO3166-1"])?.uppercased()
        boundaries.append((name, level, level == 2 ? code : nil, ways))
      })
    let boundaryWays = Set(boundaries.flatMap(\.wayIDs))

    var coordinates: [Int64: LatLng] = [:]
    var boundaryWayNodes: [Int64: [Int64]] = [:]
    var data = OSMGeoData()
    try source.read(
      [.nodes, .ways],
      node: { node in
        let point = LatLng(latitude: node.latitude, longitude: node.longitude)
        coordinates[node.id] = point
        guard !node.tags.isEmpty else { return }
        data.take(tags: node.tags, id: "node/\(node.id)", at: point)
      },
      way: { way in
        if boundaryWays.contains(way.id) { boundaryWayNodes[way.id] = way.nodeIDs }
        guard !way.tags.isEmpty else { return }
        let points = way.nodeIDs.compactMap { coordinates[$0] }
        guard !points.isEmpty else { return }
        if let name = way.tags["name"], way.tags["highway"] != nil, points.count >= 2 {
          data.streets.append(Street(name: name, points: points))
        }
        data.take(tags: way.tags, id: "way/\(way.id)", at: Self.centroid(points))
      },
      relation: { _ in })

    for boundary in boundaries {
      let members = boundary.wayIDs.compactMap { boundaryWayNodes[$0] }
      guard members.count == boundary.wayIDs.count, let rings = AdminArea.rings(from: members) else { continue }
      let shapes = rings.map { $0.compactMap { coordinates[$0] } }
      guard shapes.allSatisfy({ $0.count >= 4 }),
        let area = AdminArea(
          name: boundary.name, level: boundary.level, countryCode: boundary.countryCode, rings: shapes)
      else { continue }
      data.adminAreas.append(area)
    }
    self = data
  }

  init() {}

  /// Files a tagged node or way (at its centre) as an address, a place name and/or a place of
  /// interest.
  mutating func take(tags: OSMTags, id: String, at point: LatLng) {
    if let street = tags["addr:street"] ?? tags["addr:place"] {
      addresses.append(
        AddressPoint(
          coordinate: point, houseNumber: tags["addr:housenumber"], street: street, postcode: tags["addr:postcode"],
          city: tags["addr:city"]))
    }
    if let kind = tags["place"], Self.placeKinds.contains(kind), let name = tags["name"] {
      placeNames.append(PlaceName(name: name, kind: kind, coordinate: point))
    }
    guard let key = Self.categoryKeys.first(where: { tags[$0] != nil }), let value = tags[key] else { return }
    var otherNames: [String: String] = [:]
    for (tagKey, tagValue) in tags.pairs {
      if tagKey.hasPrefix("name:") {
        otherNames[String(tagKey.dropFirst(5))] = tagValue
      } else if ["alt_name", "official_name", "short_name", "brand"].contains(tagKey) {
        otherNames[tagKey] = tagValue
      }
    }
    // A place nobody named cannot be found by name, and a list of unnamed benches helps no one.
    guard let name = tags["name"] ?? otherNames["en"] ?? otherNames.values.sorted().first else { return }
    pointsOfInterest.append(
      PointOfInterest(
        id: id, name: name, otherNames: otherNames, category: "\(key)=\(value)", coordinate: point,
        street: tags["addr:street"], houseNumber: tags["addr:housenumber"], city: tags["addr:city"]))
  }

  static func centroid(_ points: [LatLng]) -> LatLng {
    // A closed way repeats its first node; counting it twice would pull the centre towards it.
    let distinct = points.count > 1 && points.first == points.last ? Array(points.dropLast()) : points
    let count = Double(distinct.count)
    return LatLng(
      latitude: distinct.reduce(0) { $0 + $1.latitude } / count,
      longitude: distinct.reduce(0) { $0 + $1.longitude } / count)
  }
}
