import ArgumentParser
import FleetCore
import FleetServer
import Foundation

/// What fleetd sells and where: the same flags and environment for `serve` and `demo`.
struct RideServiceOptions: ParsableArguments {
  @Option(
    help:
      "Products and prices per provider (JSON; docs/ride-service.md): rides are quoted and priced (env FLEETD_TARIFFS)."
  )
  var tariffs: String?
  @Option(
    help:
      "Service areas and zones (GeoJSON FeatureCollection; docs/ride-service.md): pickups and drop-offs outside are refused (env FLEETD_SERVICE_AREAS)."
  )
  var serviceAreas: String?

  /// Reads and checks both files; an error names the file, the JSON path and the rule.
  func apply(
    to configuration: inout ServerConfiguration, defaults: (tariffs: String?, serviceAreas: String?) = (nil, nil)
  )
    throws
  {
    let tariffsPath = tariffs ?? environment("FLEETD_TARIFFS") ?? defaults.tariffs
    let areasPath = serviceAreas ?? environment("FLEETD_SERVICE_AREAS") ?? defaults.serviceAreas
    do {
      let tariffs = try tariffsPath.map { path in
        try Tariffs(json: try Self.read(path, flag: "--tariffs"), source: path)
      }
      let areas = try areasPath.map { path in
        try ServiceAreas(geoJSON: try Self.read(path, flag: "--service-areas"), source: path)
      }
      try configuration.fleet.setRideService(
        tariffs: tariffs ?? .none, serviceAreas: areas ?? .none, source: areasPath ?? "")
    } catch let error as FleetError {
      throw ValidationError(error.message)
    }
  }

  static func read(_ path: String, flag: String) throws -> Data {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ValidationError("\(flag) \(path): no such readable file")
    }
    return data
  }
}
