import ArgumentParser
import BenchSupport
import FleetCore
import FleetGeometry
import FleetRouting
import Foundation

@main
struct DispatchBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "dispatch-bench",
    abstract:
      "SearchVehicles and QuoteRide under load against a running fleetd, and dispatch quality in a simulated hour.",
    subcommands: [SearchLoad.self, QuoteLoad.self, SearchInProcess.self, AreaLookup.self, SolverLoad.self, DispatchQuality.self])
}

/// Monaco itself, within the extract (which reaches up the hills into France): where the
/// benchmarks place vehicles, pickups and drop-offs.
let monaco = (south: 43.7245, west: 7.4095, north: 43.7515, east: 7.4425)

/// Points on the network's roads within the area: random points snapped to their nearest road,
/// kept when a road is near and a car can leave it and come back (not a dead end of a tiny
/// component such as a car park).
func roadPoints(
  _ routing: RoutingEngine, count: Int, random: inout Seeded,
  area: (south: Double, west: Double, north: Double, east: Double) = monaco
) -> [LatLng] {
  let hub = LatLng(latitude: (area.south + area.north) / 2, longitude: (area.west + area.east) / 2)
  var points: [LatLng] = []
  while points.count < count {
    let guess = LatLng(
      latitude: area.south + random.next() * (area.north - area.south),
      longitude: area.west + random.next() * (area.east - area.west))
    guard let road = try? routing.nearest(guess, radius: 60).first,
      (try? routing.route([road.location, hub, road.location])) != nil
    else { continue }
    points.append(road.location)
  }
  return points
}

/// Percentiles of latencies in milliseconds.
func milliseconds(_ values: [Duration], _ p: Double) -> String {
  guard !values.isEmpty else { return "-" }
  let sorted = values.sorted()
  let d = sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
  let (s, atto) = d.components
  return String(format: "%.1f", Double(s) * 1000 + Double(atto) / 1e15)
}
