import FleetGeometry

/// A place of interest from OpenStreetMap: a pharmacy, a casino, a museum.
public struct Place: Sendable, Hashable, Codable {
  /// The OSM element: "node/123" or "way/456".
  public var id: String
  public var name: String
  /// Other names by `name:*` language code ("en", "it", …) and `alt_name`, `official_name`,
  /// `short_name`, `brand`.
  public var otherNames: [String: String]
  /// The OSM tag that makes it a place, as `key=value`: "amenity=pharmacy".
  public var category: String
  public var coordinate: LatLng
  public var street: String?
  public var houseNumber: String?
  /// District or quarter.
  public var place: String?
  public var city: String?
  public var countryCode: String?
  /// Metres from the search's `near` point; nil without one.
  public var distance: Double?

  public init(
    id: String, name: String, otherNames: [String: String] = [:], category: String, coordinate: LatLng,
    street: String? = nil, houseNumber: String? = nil, place: String? = nil, city: String? = nil,
    countryCode: String? = nil, distance: Double? = nil
  ) {
    self.id = id
    self.name = name
    self.otherNames = otherNames
    self.category = category
    self.coordinate = coordinate
    self.street = street
    self.houseNumber = houseNumber
    self.place = place
    self.city = city
    self.countryCode = countryCode
    self.distance = distance
  }
}

/// A keyword search for places.
public struct PlaceSearch: Sendable, Hashable, Codable {
  /// Words to find in names (any language) and categories: "pharmacy", "casino", "pharmacie".
  public var keyword: String
  /// The city (or district) to search in, compared without case or accents; nil: the city at
  /// `near`, or everywhere when `near` is nil too.
  public var city: String?
  /// Where the searcher is: results at the same text match come nearest first.
  public var near: LatLng?
  /// 1…100; 20 by default.
  public var pageSize: Int
  /// From the previous page's `nextPageToken`.
  public var pageToken: String?

  public static let maximumPageSize = 100

  public init(keyword: String, city: String? = nil, near: LatLng? = nil, pageSize: Int = 20, pageToken: String? = nil) {
    self.keyword = keyword
    self.city = city
    self.near = near
    self.pageSize = pageSize
    self.pageToken = pageToken
  }
}

/// One page of results.
public struct PlacePage: Sendable, Hashable, Codable {
  public var places: [Place]
  /// The city searched in (resolved from `near` when the search named none).
  public var city: String?
  /// Pass as `pageToken` for the next page; nil on the last.
  public var nextPageToken: String?

  public init(places: [Place], city: String?, nextPageToken: String?) {
    self.places = places
    self.city = city
    self.nextPageToken = nextPageToken
  }
}
