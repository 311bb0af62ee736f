import FleetCore
import FleetGeometry

/// An administrative boundary (OSM `boundary=administrative`) assembled into closed rings.
struct AdminArea: Sendable, Codable {
  var name: String
  /// OSM `admin_level`: 2 country, 4 region, 6 département/county, 8 municipality, 9–10
  /// districts and quarters.
  var level: Int
  /// ISO 3166-1 alpha-2 on country boundaries.
  var countryCode: String?
  /// Outer and inner rings alike: a point is inside when it is inside an odd number of them.
  var rings: [[LatLng]]
  var low: LatLng
  var high: LatLng

  init?(name: String, level: Int, countryCode: String?, rings: [[LatLng]]) {
    guard !rings.isEmpty else { return nil }
    self.name = name
    self.level = level
    self.countryCode = countryCode
    self.rings = rings
    let points = rings.joined()
    low = LatLng(
      latitude: points.map(\.latitude).min() ?? 0, longitude: points.map(\.longitude).min() ?? 0)
    high = LatLng(
      latitude: points.map(\.latitude).max() ?? 0, longitude: points.map(\.longitude).max() ?? 0)
  }

  func contains(_ point: LatLng) -> Bool {
    guard point.latitude >= low.latitude, point.latitude <= high.latitude, point.longitude >= low.longitude,
      point.longitude <= high.longitude
    else { return false }
    var inside = false
    for ring in rings {
      var j = ring.count - 1
      for i in 0..<ring.count {
        let a = ring[i]
        let b = ring[j]
        if (a.latitude > point.latitude) != (b.latitude > point.latitude) {
          let crossing =
            (b.longitude - a.longitude) * (point.latitude - a.latitude) / (b.latitude - a.latitude)
            + a.longitude
          if point.longitude < crossing { inside.toggle() }
        }
        j = i
      }
    }
    return inside
  }

  /// Joins way node lists end to end into closed rings; nil when some way cannot be joined into
  /// a closed ring (the extract cut the boundary off), since an open ring has no inside.
  static func rings(from ways: [[Int64]]) -> [[Int64]]? {
    var unused = ways.filter { $0.count >= 2 }
    var rings: [[Int64]] = []
    while var ring = unused.popLast() {
      while ring.first != ring.last {
        guard let end = ring.last,
          let next = unused.firstIndex(where: { $0.first == end || $0.last == end })
        else { return nil }
        let way = unused.remove(at: next)
        ring += (way.first == end ? way : way.reversed()).dropFirst()
      }
      if ring.count >= 4 { rings.append(ring) }
    }
    return rings
  }
}
