import Foundation

/// Which side of the road traffic keeps to, anywhere on earth: the driving side a way has when
/// its tags do not say (OSRM resolves it the same way, from an index of where traffic keeps left).
///
/// The countries' outlines are Natural Earth's 1:110m ones (`DrivingSideCountries.swift`).
/// A point inside an outline takes its country's side; a point just outside every outline (a
/// coast drawn coarsely, an island) takes the side of the nearest country within
/// `coastReach`. Territories too small for that scale are listed below; they come first.
struct DrivingSideMap: Sendable {
  struct Area: Sendable {
    var name: String
    var side: DrivingSide
    /// Outline rings in degrees (latitude, longitude); a point inside an odd number is inside.
    var rings: [[(latitude: Double, longitude: Double)]]
    var south: Double
    var north: Double
    var west: Double
    var east: Double

    init(name: String, side: DrivingSide, rings: [[(latitude: Double, longitude: Double)]]) {
      self.name = name
      self.side = side
      self.rings = rings
      let points = rings.joined()
      south = points.map(\.latitude).min() ?? 0
      north = points.map(\.latitude).max() ?? 0
      west = points.map(\.longitude).min() ?? 0
      east = points.map(\.longitude).max() ?? 0
    }
  }

  /// Small territories whose side differs from their surroundings or that the country outlines
  /// miss: centre, radius in km, side.
  static let territories: [(name: String, latitude: Double, longitude: Double, radius: Double, side: DrivingSide)] = [
    ("Malta", 35.92, 14.41, 30, .left), ("Singapore", 1.35, 103.82, 25, .left),
    ("Maldives", 3.2, 73.22, 450, .left), ("Mauritius", -20.25, 57.55, 70, .left),
    ("Rodrigues", -19.72, 63.42, 30, .left), ("Seychelles", -4.62, 55.45, 60, .left),
    ("Barbados", 13.17, -59.55, 25, .left), ("Isle of Man", 54.23, -4.55, 35, .left),
    ("Jersey", 49.21, -2.13, 15, .left), ("Guernsey", 49.46, -2.58, 20, .left), ("Alderney", 49.71, -2.2, 8, .left),
    ("Bermuda", 32.31, -64.75, 25, .left), ("Cayman Islands", 19.31, -81.0, 80, .left),
    ("Saint Helena", -15.96, -5.71, 20, .left), ("Ascension", -7.95, -14.36, 15, .left),
    ("Tristan da Cunha", -37.11, -12.28, 20, .left), ("Montserrat", 16.74, -62.19, 12, .left),
    ("Anguilla", 18.22, -63.05, 20, .left), ("Antigua and Barbuda", 17.35, -61.8, 45, .left),
    ("Saint Kitts and Nevis", 17.25, -62.7, 20, .left), ("Dominica", 15.42, -61.35, 30, .left),
    ("Saint Lucia", 13.9, -60.97, 25, .left), ("Saint Vincent and the Grenadines", 13.0, -61.25, 55, .left),
    ("Grenada", 12.12, -61.68, 30, .left), ("British Virgin Islands", 18.45, -64.55, 25, .left),
    ("Saint Thomas and Saint John", 18.34, -64.85, 18, .left), ("Saint Croix", 17.73, -64.75, 25, .left),
    ("Turks and Caicos Islands", 21.7, -71.8, 90, .left), ("Tonga", -20.5, -174.9, 350, .left),
    ("Samoa", -13.75, -172.1, 90, .left), ("Tarawa", 1.4, 173.0, 120, .left), ("Kiritimati", 1.87, -157.4, 60, .left),
    ("Tuvalu", -8.5, 179.2, 300, .left), ("Nauru", -0.53, 166.93, 20, .left),
    ("Cook Islands", -21.23, -159.78, 60, .left), ("Niue", -19.05, -169.87, 30, .left),
    ("Norfolk Island", -29.03, 167.95, 15, .left), ("Lord Howe Island", -31.55, 159.08, 15, .left),
    ("Christmas Island", -10.49, 105.62, 20, .left), ("Cocos Islands", -12.15, 96.85, 30, .left),
    ("Chatham Islands", -43.9, -176.5, 100, .left), ("Andaman Islands", 11.9, 92.75, 220, .left),
    ("Nicobar Islands", 8.0, 93.5, 170, .left), ("Lakshadweep", 10.5, 72.6, 250, .left),
    ("Okinawa", 26.4, 127.9, 170, .left), ("Sakishima Islands", 24.5, 124.2, 150, .left),
    ("Amami Islands", 28.3, 129.5, 120, .left), ("Ogasawara Islands", 27.0, 142.2, 110, .left),
    ("Izu Islands", 33.5, 139.6, 150, .left), ("Zanzibar and Pemba", -5.7, 39.5, 110, .left),
    ("Falkland Islands", -51.75, -59.5, 250, .left), ("Gibraltar", 36.14, -5.35, 6, .right),
  ]

  /// Outlines of territories with land borders, drawn roughly along them.
  static let borderedTerritories: [(name: String, side: DrivingSide, ring: [(Double, Double)])] = [
    (
      "Hong Kong", .left,
      [
        (22.13, 113.82), (22.40, 113.82), (22.47, 113.95), (22.51, 114.03), (22.535, 114.08), (22.545, 114.15),
        (22.56, 114.23), (22.56, 114.45), (22.13, 114.45),
      ]
    ),
    (
      "Macau", .left,
      [
        (22.217, 113.528), (22.217, 113.556), (22.196, 113.561), (22.16, 113.556), (22.14, 113.547),
        (22.108, 113.552), (22.1, 113.6), (22.22, 113.6),
      ]
    ),
  ]

  /// How far off a coarse outline a point may be and still take that country's side (km).
  static let coastReach = 100.0

  let countries: [Area]
  let bordered: [Area]

  static let world = DrivingSideMap()

  init() {
    countries = Self.countryOutlines.map { country in
      Area(name: country.name, side: country.side, rings: country.rings.map(Self.decode))
    }
    bordered = Self.borderedTerritories.map { territory in
      Area(
        name: territory.name, side: territory.side, rings: [territory.ring.map { (latitude: $0.0, longitude: $0.1) }])
    }
  }

  /// The side traffic keeps to at a point.
  func side(latitude: Double, longitude: Double) -> DrivingSide {
    if let area = bordered.first(where: { Self.contains($0, latitude, longitude) }) { return area.side }
    for territory in Self.territories
    where Self.kilometres(latitude, longitude, territory.latitude, territory.longitude) <= territory.radius {
      return territory.side
    }
    if let area = countries.first(where: { Self.contains($0, latitude, longitude) }) { return area.side }
    var nearest: (side: DrivingSide, distance: Double)?
    let reachDegrees = Self.coastReach / 111 / max(cos(latitude * .pi / 180), 0.05)
    for area in countries
    where latitude >= area.south - Self.coastReach / 111 && latitude <= area.north + Self.coastReach / 111
      && longitude >= area.west - reachDegrees && longitude <= area.east + reachDegrees
    {
      let distance = Self.distanceToOutline(area, latitude, longitude)
      if distance <= Self.coastReach, distance < (nearest?.distance ?? .infinity) { nearest = (area.side, distance) }
    }
    return nearest?.side ?? .right
  }

  static func contains(_ area: Area, _ latitude: Double, _ longitude: Double) -> Bool {
    guard latitude >= area.south, latitude <= area.north, longitude >= area.west, longitude <= area.east else {
      return false
    }
    var inside = false
    for ring in area.rings {
      var j = ring.count - 1
      for i in ring.indices {
        let a = ring[i]
        let b = ring[j]
        if (a.latitude > latitude) != (b.latitude > latitude),
          longitude < (b.longitude - a.longitude) * (latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
        {
          inside.toggle()
        }
        j = i
      }
    }
    return inside
  }

  /// Kilometres from a point to the nearest edge of an area's outline (flat near the point).
  static func distanceToOutline(_ area: Area, _ latitude: Double, _ longitude: Double) -> Double {
    let scale = cos(latitude * .pi / 180)
    var best = Double.infinity
    for ring in area.rings {
      for i in ring.indices {
        let a = ring[i]
        let b = ring[(i + 1) % ring.count]
        let ax = (a.longitude - longitude) * scale
        let ay = a.latitude - latitude
        let dx = (b.longitude - a.longitude) * scale
        let dy = b.latitude - a.latitude
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? min(max(-(ax * dx + ay * dy) / length2, 0), 1) : 0
        let ex = ax + t * dx
        let ey = ay + t * dy
        best = min(best, (ex * ex + ey * ey).squareRoot() * 111.2)
      }
    }
    return best
  }

  static func kilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let scale = cos((lat1 + lat2) / 2 * .pi / 180)
    var dLon = abs(lon1 - lon2)
    if dLon > 180 { dLon = 360 - dLon }
    let dx = dLon * scale
    let dy = lat1 - lat2
    return (dx * dx + dy * dy).squareRoot() * 111.2
  }

  /// A ring from Google's encoded polyline at 1e-4 degrees.
  static func decode(_ encoded: String) -> [(latitude: Double, longitude: Double)] {
    var result: [(latitude: Double, longitude: Double)] = []
    var values = (0, 0)
    var index = encoded.utf8.startIndex
    let bytes = encoded.utf8
    func next() -> Int {
      var shift = 0
      var value = 0
      while index < bytes.endIndex {
        let byte = Int(bytes[index]) - 63
        index = bytes.index(after: index)
        value |= (byte & 0x1F) << shift
        shift += 5
        if byte < 0x20 { break }
      }
      return value & 1 != 0 ? ~(value >> 1) : value >> 1
    }
    while index < bytes.endIndex {
      values.0 += next()
      values.1 += next()
      result.append((Double(values.0) / 1e4, Double(values.1) / 1e4))
    }
    return result
  }
}
