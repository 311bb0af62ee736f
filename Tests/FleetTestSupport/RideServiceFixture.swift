import FleetCore
import Foundation

/// The ride service as the repository ships it for the demo (data/tariffs.json and
/// data/monaco-zones.geojson), for `provider` instead of the demo's: products, surge, zones with
/// fees and surge, the service area around Monaco.
public func shippedRideService(for provider: String) throws -> FleetConfiguration {
  func read(_ name: String) throws -> Data {
    let text = try String(contentsOf: projectData.appendingPathComponent(name), encoding: .utf8)
    return Data(text.replacingOccurrences(of: "\"demo\"", with: "\"\(provider)\"").utf8)
  }
  var configuration = FleetConfiguration()
  try configuration.setRideService(
    tariffs: try Tariffs(json: try read("tariffs.json"), source: "data/tariffs.json"),
    serviceAreas: try ServiceAreas(geoJSON: try read("monaco-zones.geojson"), source: "data/monaco-zones.geojson"),
    source: "data/monaco-zones.geojson")
  return configuration
}
