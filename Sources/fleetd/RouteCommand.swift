import ArgumentParser
import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

struct RouteCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "route", abstract: "Print the fastest driving route between two points.")

  @Option(help: "Graph file written by 'fleetd graph build'.")
  var graph: String
  // `.unconditional`: a negative latitude is a value, not an option.
  @Option(parsing: .unconditional, help: "Start, as LAT,LNG.")
  var from: String
  @Option(parsing: .unconditional, help: "Destination, as LAT,LNG.")
  var to: String
  @Option(parsing: .unconditionalSingleValue, help: "Points to pass through on the way, as LAT,LNG (repeatable).")
  var via: [String] = []

  func run() throws {
    let points = try ([from] + via + [to]).map(Self.parse)
    let engine = try RoutingEngine(graph: graph)
    let route = try engine.route(points)
    print(
      String(
        format: "distance: %.0f m, duration: %.0f s (%.1f min)", route.distance, route.duration, route.duration / 60))
    for (i, leg) in route.legs.enumerated() where route.legs.count > 1 {
      print(String(format: "  leg %d: %.0f m, %.0f s", i + 1, leg.distance, leg.duration))
    }
    let name = { (point: SnappedPoint) in point.name.isEmpty ? "(unnamed road)" : point.name }
    print("from \(name(route.waypoints.first!)) to \(name(route.waypoints.last!))")
    print("polyline: \(Polyline.encode(route.geometry, precision: 5))")
  }

  static func parse(_ text: String) throws -> LatLng {
    let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 2, let lat = parts[0], let lng = parts[1], (-90...90).contains(lat), (-180...180).contains(lng)
    else {
      throw ValidationError("'\(text)' is not LAT,LNG (e.g. 43.7384,7.4246)")
    }
    return LatLng(latitude: lat, longitude: lng)
  }
}
