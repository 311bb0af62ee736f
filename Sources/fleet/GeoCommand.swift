import ArgumentParser
import FleetCore
import FleetGeocoding
import FleetGeometry
import FleetLocation
import FleetPlaces
import Foundation

struct GeoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "geo",
    abstract: "Coordinates between WGS-84, GCJ-02 and BD-09; addresses and places, offline or from fleetd.",
    subcommands: [ConvertCommand.self, ReverseCommand.self, SearchCommand.self])

  struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "convert",
      abstract: "Convert LAT,LNG between coordinate systems.",
      discussion: """
        GCJ-02 differs from WGS-84 only inside the rectangle the reference implementations use for
        mainland China; BD-09 is Baidu's offset of GCJ-02. Inverses are exact (iterated), not the
        one-step approximation. Converting to WGS-84 in mainland China is regulated: check what
        your map licence allows.
        """)

    @Option(help: "wgs84, gcj02 or bd09.") var from: CoordinateSystem
    @Option(help: "wgs84, gcj02 or bd09.") var to: CoordinateSystem
    @Argument(parsing: .allUnrecognized, help: "LAT,LNG") var point: [String]
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
      let source = try parsePoint(try onePoint(point), "point")
      let result = source.converted(from: from, to: to)
      let latitude = String(format: "%.8f", result.latitude)
      let longitude = String(format: "%.8f", result.longitude)
      if json {
        print("{\"system\":\"\(to.rawValue)\",\"latitude\":\(latitude),\"longitude\":\(longitude)}")
      } else {
        print("\(latitude),\(longitude)")
      }
    }
  }

  struct ReverseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "reverse",
      abstract: "The address at LAT,LNG: offline from an OSM extract and GeoNames, or from fleetd.")

    @OptionGroup var source: GeoSource
    @Argument(parsing: .allUnrecognized, help: "LAT,LNG (WGS-84)") var point: [String]
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
      let coordinate = try parsePoint(try onePoint(point), "point")
      let address = try await source.reverse(coordinate)
      if json {
        print(try jsonText(address))
      } else {
        print("\(address.formatted) (\(Int(address.distance.rounded())) m)")
      }
    }
  }

  struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "search", abstract: "Places by keyword in a city: offline from an OSM extract, or from fleetd.")

    @OptionGroup var source: GeoSource
    @Option(help: "The city or district to search in (default: the city at --near).") var city: String?
    @Option(
      parsing: .unconditional,
      help: "LAT,LNG of the searcher: nearer places first, and its city when --city is not given.")
    var near: String?
    @Option(help: "Results per page, 1…100.") var pageSize = 20
    @Option(help: "The page token printed with the previous page.") var pageToken: String?
    @Argument(help: "Words to find in names (any language) and categories.") var keyword: String
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
      let search = PlaceSearch(
        keyword: keyword, city: city, near: try near.map { try parsePoint($0, "--near") }, pageSize: pageSize,
        pageToken: pageToken)
      let page = try await source.search(search)
      if json {
        print(try jsonText(page))
        return
      }
      for place in page.places {
        let address = [
          place.houseNumber.flatMap { n in place.street.map { "\(n) \($0)" } } ?? place.street, place.place,
        ]
        .compactMap { $0 }.joined(separator: ", ")
        let distance = place.distance.map { " — \(Int($0.rounded())) m" } ?? ""
        print("\(place.name) [\(place.category)] \(address)\(distance)")
      }
      if let next = page.nextPageToken { print("more: --page-token \(next)") }
    }
  }
}

/// Where `fleet geo reverse` and `search` get their answers: local files, or fleetd.
struct GeoSource: ParsableArguments {
  @Option(help: "OpenStreetMap extract (.osm.pbf): answer offline.") var osm: String?
  @Option(help: "GeoNames cities CSV (lat,lon,name,admin1,admin2,cc): cities worldwide, offline.") var geonames: String?
  @OptionGroup var server: ServerAddress
  @Option(help: "The app's API key for fleetd (env FLEET_API_KEY).") var apiKey: String?

  func reverse(_ coordinate: LatLng) async throws -> Address {
    do {
      if let engine = try engine() { return try engine.reverse(coordinate) }
      return try await client().reverseGeocode(coordinate)
    } catch let error as FleetError {
      throw ValidationError(error.message)
    }
  }

  func search(_ search: PlaceSearch) async throws -> PlacePage {
    do {
      if let engine = try engine() { return try engine.search(search) }
      return try await client().searchPlaces(search)
    } catch let error as FleetError {
      throw ValidationError(error.message)
    }
  }

  func engine() throws -> GeocodingEngine? {
    guard osm != nil || geonames != nil else { return nil }
    return try GeocodingEngine(osmPath: osm, geoNamesPath: geonames)
  }

  func client() throws -> GeoServiceClient {
    try server.checkPort(for: .http)
    let url = server.httpURL
    guard let key = apiKey ?? ProcessInfo.processInfo.environment["FLEET_API_KEY"] else {
      throw ValidationError("--api-key (or FLEET_API_KEY) is required to ask fleetd (or give --osm or --geonames)")
    }
    return GeoServiceClient(baseURL: url, apiKey: key)
  }
}

func parsePoint(_ text: String, _ name: String) throws -> LatLng {
  let parts = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
  guard parts.count == 2 else { throw ValidationError("\(name) must be LAT,LNG, got '\(text)'") }
  let point = LatLng(latitude: parts[0], longitude: parts[1])
  do {
    try point.validate(name)
  } catch {
    throw ValidationError(error.message)
  }
  return point
}

func jsonText(_ value: some Encodable) throws -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
  return String(decoding: try encoder.encode(value), as: UTF8.self)
}

extension CoordinateSystem: ExpressibleByArgument {}

/// The one LAT,LNG a command takes as its argument. It is read as "all unrecognized" input so
/// that a negative latitude is a coordinate, not an unknown option.
func onePoint(_ arguments: [String]) throws -> String {
  guard arguments.count == 1 else {
    throw ValidationError(
      "give one point, LAT,LNG, got \(arguments.isEmpty ? "none" : arguments.joined(separator: " "))")
  }
  return arguments[0]
}
