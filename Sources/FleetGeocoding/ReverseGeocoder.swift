import FleetCore
import FleetGeometry
import FleetPlaces
import Foundation

/// Coordinate → address, from memory: the nearest address point (house number and street),
/// else the nearest named street; the administrative areas around the point (quarter, city,
/// region, country) from the extract's boundaries; GeoNames' nearest city where the extract
/// has no boundary (or no data at all: the rest of the world).
struct ReverseGeocoder: Sendable {
  struct Limits: Sendable {
    /// An address point farther than this is not "the address here"…
    var address = 40.0
    /// …and a street farther than this is not "the street here".
    var street = 200.0
    /// A suburb or quarter named by a point (not a boundary) counts within this distance.
    var placeName = 1_500.0
    /// GeoNames' nearest city counts within this distance.
    var city = 50_000.0
  }

  let data: OSMGeoData
  let cities: GeoNamesCities?
  let limits: Limits
  let addressGrid: SpatialGrid
  let streetGrid: SpatialGrid
  /// (street index, first point index) per filed segment.
  let segments: [(street: Int32, point: Int32)]
  let placeGrid: SpatialGrid
  /// For each municipality boundary (by index in `data.adminAreas`), its GeoNames entry: the
  /// one named like it near its centre, else the nearest. Found once here, since folding names
  /// for every lookup would cost more than the lookup.
  let municipalityCities: [Int: GeoNamesCities.City]

  /// About 550 m of latitude per cell.
  static let cellDegrees = 0.005

  init(data: OSMGeoData, cities: GeoNamesCities?, limits: Limits = Limits()) {
    self.data = data
    self.cities = cities
    self.limits = limits
    var addressGrid = SpatialGrid(cellDegrees: Self.cellDegrees)
    for (index, address) in data.addresses.enumerated() { addressGrid.insert(Int32(index), at: address.coordinate) }
    var streetGrid = SpatialGrid(cellDegrees: Self.cellDegrees)
    var segments: [(Int32, Int32)] = []
    for (streetIndex, street) in data.streets.enumerated() {
      for i in 0..<(street.points.count - 1) {
        streetGrid.insert(Int32(segments.count), from: street.points[i], to: street.points[i + 1])
        segments.append((Int32(streetIndex), Int32(i)))
      }
    }
    var placeGrid = SpatialGrid(cellDegrees: Self.cellDegrees * 4)
    for (index, place) in data.placeNames.enumerated() { placeGrid.insert(Int32(index), at: place.coordinate) }
    self.addressGrid = addressGrid
    self.streetGrid = streetGrid
    self.segments = segments
    self.placeGrid = placeGrid
    var municipalityCities: [Int: GeoNamesCities.City] = [:]
    if let cities {
      for (index, area) in data.adminAreas.enumerated() where (7...8).contains(area.level) {
        let centre = LatLng(
          latitude: (area.low.latitude + area.high.latitude) / 2,
          longitude: (area.low.longitude + area.high.longitude) / 2)
        let match =
          cities.nearest(to: centre, named: area.name, maximumDistance: limits.city)
          ?? cities.nearest(to: centre, maximumDistance: limits.city)
        municipalityCities[index] = match?.city
      }
    }
    self.municipalityCities = municipalityCities
  }

  func reverse(_ point: LatLng) throws(FleetError) -> Address {
    var address = Address(coordinate: point, distance: 0)
    var located = false

    if let (index, distance) = nearestAddress(to: point) {
      let found = data.addresses[index]
      address.houseNumber = found.houseNumber
      address.street = found.street
      address.postcode = found.postcode
      address.city = found.city
      address.coordinate = found.coordinate
      address.distance = distance
      located = true
    } else if let (street, nearest, distance) = nearestStreet(to: point) {
      address.street = data.streets[street].name
      address.coordinate = nearest
      address.distance = distance
      located = true
    }

    // The boundaries around the point, most precise level last.
    var country: String?
    var municipality: GeoNamesCities.City?
    var municipalityArea: AdminArea?
    for (index, area) in data.adminAreas.enumerated() where area.contains(point) {
      switch area.level {
      case 2: country = area.countryCode ?? country
      case 3...4: address.region = address.region ?? area.name
      case 7...8:
        address.city = area.name
        municipality = municipalityCities[index]
        municipalityArea = area
      case 9...10: address.place = area.name
      default: break
      }
    }
    if address.place == nil, let place = nearestPlaceName(to: point, within: municipalityArea) {
      address.place = place
    }

    // GeoNames fills what the extract lacks: the municipality's own entry when the point is in
    // one (so that a border town gets its own country), else the nearest.
    if let cities, address.city == nil || address.region == nil || country == nil {
      let found = municipality.map { ($0, $0.coordinate.distance(to: point)) }
      if let (city, distance) = found ?? cities.nearest(to: point, maximumDistance: limits.city) {
        address.city = address.city ?? city.name
        address.region = address.region ?? (city.region.isEmpty ? nil : city.region)
        country = country ?? city.countryCode
        if !located {
          address.coordinate = city.coordinate
          address.distance = distance
          located = true
        }
      }
    }
    address.countryCode = country
    guard located else {
      throw .notFound(
        "no address, street or city within \(Int(limits.city / 1000)) km of \(point.latitude),\(point.longitude)")
    }
    return address
  }

  func nearestAddress(to point: LatLng) -> (Int, Double)? {
    var best: (Int, Double)?
    addressGrid.candidates(near: point, radius: limits.address) { index in
      let distance = data.addresses[Int(index)].coordinate.distance(to: point)
      if distance <= limits.address, distance < best?.1 ?? .infinity { best = (Int(index), distance) }
    }
    return best
  }

  func nearestStreet(to point: LatLng) -> (street: Int, nearest: LatLng, distance: Double)? {
    var best: (Int32, Double, Double)?
    let cosine = point.localCosine
    streetGrid.candidates(near: point, radius: limits.street) { segment in
      let (street, first) = segments[Int(segment)]
      let points = data.streets[Int(street)].points
      let (fraction, distance) = point.projection(onto: points[Int(first)], points[Int(first) + 1], cosine: cosine)
      if distance <= limits.street, distance < best?.2 ?? .infinity { best = (segment, fraction, distance) }
    }
    guard let (segment, fraction, distance) = best else { return nil }
    let (street, first) = segments[Int(segment)]
    let a = data.streets[Int(street)].points[Int(first)]
    let b = data.streets[Int(street)].points[Int(first) + 1]
    let nearest = LatLng(
      latitude: a.latitude + (b.latitude - a.latitude) * fraction,
      longitude: a.longitude + (b.longitude - a.longitude) * fraction)
    return (Int(street), nearest, distance)
  }

  /// The nearest suburb, quarter or neighbourhood named by a point — in the same municipality,
  /// when the point is in one, so that a quarter across a border is not taken.
  func nearestPlaceName(to point: LatLng, within municipality: AdminArea?) -> String? {
    let local: Set<String> = ["suburb", "quarter", "neighbourhood", "borough"]
    var best: (String, Double)?
    placeGrid.candidates(near: point, radius: limits.placeName) { index in
      let place = data.placeNames[Int(index)]
      guard local.contains(place.kind), municipality?.contains(place.coordinate) ?? true else { return }
      let distance = place.coordinate.distance(to: point)
      if distance <= limits.placeName, distance < best?.1 ?? .infinity { best = (place.name, distance) }
    }
    return best?.0
  }
}

extension GeoNamesCities {
  /// The nearest entry whose name folds to the same text as `name`.
  func nearest(to point: LatLng, named name: String, maximumDistance: Double) -> (city: City, distance: Double)? {
    let key = TextFolding.key(name)
    var best: (Int32, Double)?
    grid.candidates(near: point, radius: maximumDistance) { index in
      let city = cities[Int(index)]
      guard TextFolding.key(city.name) == key else { return }
      let distance = city.coordinate.distance(to: point)
      if distance <= maximumDistance, distance < best?.1 ?? .infinity { best = (index, distance) }
    }
    return best.map { (cities[Int($0.0)], $0.1) }
  }
}

/// Text compared without case, accents or punctuation: "Monte-Carlo" = "monte carlo",
/// "Èze" = "eze".
enum TextFolding {
  static func key(_ text: String) -> String {
    let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    var key = ""
    var pendingSpace = false
    for scalar in folded.unicodeScalars {
      if CharacterSet.alphanumerics.contains(scalar) {
        if pendingSpace, !key.isEmpty { key.append(" ") }
        pendingSpace = false
        key.unicodeScalars.append(scalar)
      } else {
        pendingSpace = true
      }
    }
    return key
  }
}
