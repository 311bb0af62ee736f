import FleetCore
import FleetGeometry
import FleetPlaces
import FleetRouting
import Foundation
import Logging

/// Offline geocoding: the one facade that fleetd's geo endpoints, the location service and
/// `fleet geo` call. Built once from an OpenStreetMap extract (street-level: addresses, streets,
/// boundaries, places of interest) and GeoNames' cities (city, region and country worldwide);
/// immutable afterwards, so any number of callers may use it at once.
public final class GeocodingEngine: ReverseGeocoding, Sendable {
  /// What the engine holds, for logs and health checks.
  public struct Summary: Sendable, Hashable, Codable {
    public var addresses: Int
    public var streets: Int
    public var places: Int
    public var boundaries: Int
    public var cities: Int
  }

  let reverseGeocoder: ReverseGeocoder
  let placeIndex: PlaceIndex
  public let summary: Summary

  /// Reads the sources. Either may be missing: without an extract there are no streets or
  /// places; without GeoNames no city outside the extract's boundaries. `indexPath` keeps the
  /// place index in that SQLite file (rebuilt) instead of memory.
  public convenience init(osmPath: String?, geoNamesPath: String?, indexPath: String? = nil, logger: Logger? = nil)
    throws
  {
    let started = ContinuousClock.now
    let data = try osmPath.map { try OSMGeoData(reading: PBFReader(path: $0)) } ?? OSMGeoData()
    let cities = try geoNamesPath.map { path throws(FleetError) in try GeoNamesCities(contentsOf: path) }
    try self.init(data: data, cities: cities, indexPath: indexPath)
    logger?.info(
      "geocoding ready",
      metadata: [
        "geo.addresses": "\(summary.addresses)", "geo.streets": "\(summary.streets)",
        "geo.places": "\(summary.places)", "geo.boundaries": "\(summary.boundaries)",
        "geo.cities": "\(summary.cities)",
        "geo.build_ms": "\(Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded()))",
      ])
  }

  /// From elements in memory (hand-drawn maps in tests).
  public convenience init(reading source: some OSMElementSource, cities: GeoNamesCities? = nil) throws {
    try self.init(data: try OSMGeoData(reading: source), cities: cities, indexPath: nil)
  }

  init(data: OSMGeoData, cities: GeoNamesCities?, indexPath: String?) throws {
    let reverseGeocoder = ReverseGeocoder(data: data, cities: cities)
    let placeIndex = try PlaceIndex(path: indexPath)
    // Each place is filed under the city and district its position falls in.
    let places = data.pointsOfInterest.map { poi in
      let around = try? reverseGeocoder.reverse(poi.coordinate)
      return Place(
        id: poi.id, name: poi.name, otherNames: poi.otherNames, category: poi.category, coordinate: poi.coordinate,
        street: poi.street ?? around?.street, houseNumber: poi.street == nil ? around?.houseNumber : poi.houseNumber,
        place: around?.place, city: around?.city ?? poi.city, countryCode: around?.countryCode)
    }
    try placeIndex.insert(places)
    self.reverseGeocoder = reverseGeocoder
    self.placeIndex = placeIndex
    summary = Summary(
      addresses: data.addresses.count, streets: data.streets.count, places: places.count,
      boundaries: data.adminAreas.count, cities: cities?.cities.count ?? 0)
  }

  /// The address at `coordinate`; NOT_FOUND when nothing is known within reach (the open sea).
  public func reverse(_ coordinate: LatLng) throws(FleetError) -> Address {
    guard (-90...90).contains(coordinate.latitude), (-180...180).contains(coordinate.longitude) else {
      throw .invalid(
        "location must have latitude in -90…90 and longitude in -180…180, got \(coordinate.latitude),\(coordinate.longitude)"
      )
    }
    return try reverseGeocoder.reverse(coordinate)
  }

  public func reverseGeocode(_ coordinate: LatLng) async throws -> Address { try reverse(coordinate) }

  /// Places matching the keyword, best first, one page.
  public func search(_ search: PlaceSearch) throws(FleetError) -> PlacePage {
    let words = TextFolding.key(search.keyword).split(separator: " ").map(String.init)
    guard !words.isEmpty else { throw .invalid("q (the keyword) must contain a letter or digit") }
    guard (1...PlaceSearch.maximumPageSize).contains(search.pageSize) else {
      throw .invalid("page_size must be 1…\(PlaceSearch.maximumPageSize), got \(search.pageSize)")
    }
    var offset = 0
    if let token = search.pageToken, !token.isEmpty {
      guard let value = Int(token), value >= 0 else {
        throw .invalid("page_token '\(token)' is not one this server handed out")
      }
      offset = value
    }
    if let near = search.near {
      guard (-90...90).contains(near.latitude), (-180...180).contains(near.longitude) else {
        throw .invalid("near must have latitude in -90…90 and longitude in -180…180")
      }
    }
    var city = search.city.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
    if city == nil, let near = search.near { city = try? reverseGeocoder.reverse(near).city }
    let matches: [Place]
    do {
      if let city, try !placeIndex.knows(city: city) {
        throw FleetError.notFound("city '\(city)' has no places in the index")
      }
      matches = try placeIndex.search(words: words, city: city, near: search.near)
    } catch let error as FleetError {
      throw error
    } catch {
      throw FleetError(.internal, "place search failed: \(error)")
    }
    let page = Array(matches.dropFirst(offset).prefix(search.pageSize))
    let next = offset + page.count < matches.count ? String(offset + page.count) : nil
    return PlacePage(places: page, city: city, nextPageToken: next)
  }
}

/// What geocoding reads from an extract, kept between starts: fleetd caches it by the
/// extract's content hash (`GeoDataCache`), so that a restart does not read the extract again.
public struct GeocodingExtract: Sendable {
  let data: OSMGeoData

  /// Reads the extract.
  public init(osmPath: String) throws { data = try OSMGeoData(reading: PBFReader(path: osmPath)) }

  /// A copy saved by `encoded()`; nil when it is from another format.
  public init?(decoding bytes: Data) {
    guard bytes.starts(with: Self.magic),
      let data = try? PropertyListDecoder().decode(OSMGeoData.self, from: bytes.dropFirst(Self.magic.count))
    else { return nil }
    self.data = data
  }

  public func encoded() throws -> Data {
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    return Self.magic + (try encoder.encode(data))
  }

  /// The format's name and version: a change to what is read makes old copies unreadable.
  static let magic = Data("FleetKit geocoding extract 1\n".utf8)
}

extension GeocodingEngine {
  /// From an extract read earlier (or from the cache), and GeoNames' cities.
  public static func load(extract: GeocodingExtract, geoNamesPath: String?, logger: Logger? = nil) async throws
    -> GeocodingEngine
  {
    try await onDedicatedThread(named: "geocoding-build") {
      let started = ContinuousClock.now
      let cities = try geoNamesPath.map { path throws(FleetError) in try GeoNamesCities(contentsOf: path) }
      let engine = try GeocodingEngine(data: extract.data, cities: cities, indexPath: nil)
      logger?.info(
        "geocoding ready",
        metadata: [
          "geo.addresses": "\(engine.summary.addresses)", "geo.places": "\(engine.summary.places)",
          "geo.build_ms": "\(Int(((ContinuousClock.now - started) / .milliseconds(1)).rounded()))",
        ])
      return engine
    }
  }

  /// Builds the engine on a thread of its own. The build is seconds of CPU on a large extract,
  /// and Swift's concurrency runs on a few shared threads: holding one that long starves every
  /// other task in the process (servers answering, timers firing).
  public static func load(
    osmPath: String?, geoNamesPath: String?, indexPath: String? = nil, logger: Logger? = nil
  ) async throws -> GeocodingEngine {
    try await onDedicatedThread(named: "geocoding-build") {
      try GeocodingEngine(osmPath: osmPath, geoNamesPath: geoNamesPath, indexPath: indexPath, logger: logger)
    }
  }
}
