import FleetGeometry

/// What is at a coordinate: the nearest address, and the place, city, region and country
/// around it. Fields the data does not have are nil.
public struct Address: Sendable, Hashable, Codable {
  public var houseNumber: String?
  public var street: String?
  public var postcode: String?
  /// The district, quarter or suburb.
  public var place: String?
  public var city: String?
  /// The first-level division (state, province, French région).
  public var region: String?
  /// ISO 3166-1 alpha-2, upper case.
  public var countryCode: String?
  /// Where the matched address or street is.
  public var coordinate: LatLng
  /// Metres from the asked coordinate to `coordinate`.
  public var distance: Double

  public init(
    houseNumber: String? = nil, street: String? = nil, postcode: String? = nil, place: String? = nil,
    city: String? = nil, region: String? = nil, countryCode: String? = nil, coordinate: LatLng, distance: Double
  ) {
    self.houseNumber = houseNumber
    self.street = street
    self.postcode = postcode
    self.place = place
    self.city = city
    self.region = region
    self.countryCode = countryCode
    self.coordinate = coordinate
    self.distance = distance
  }

  /// One line, most precise part first: "12 Avenue de la Costa, Monte-Carlo, Monaco, MC".
  public var formatted: String {
    var parts: [String] = []
    switch (houseNumber, street) {
    case (let number?, let street?): parts.append("\(number) \(street)")
    case (nil, let street?): parts.append(street)
    default: break
    }
    for part in [place, city, region, countryCode] {
      if let part, !part.isEmpty, !parts.contains(part) { parts.append(part) }
    }
    return parts.joined(separator: ", ")
  }
}

/// Anything that turns a coordinate into an address: the offline index, or fleetd's
/// `/fleetkit/v1/geo:reverse` through the location service's client.
public protocol ReverseGeocoding: Sendable {
  func reverseGeocode(_ coordinate: LatLng) async throws -> Address
}
