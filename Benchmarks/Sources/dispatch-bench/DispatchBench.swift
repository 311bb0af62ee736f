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
    subcommands: [
      SearchLoad.self, QuoteLoad.self, SearchInProcess.self, AreaLookup.self, SolverLoad.self, DispatchQuality.self,
      StopOrderingBench.self,
    ])
}

/// Monaco itself, within the extract (which reaches up the hills into France): where the
/// benchmarks place vehicles, pickups and drop-offs.
let monaco = (south: 43.7245, west: 7.4095, north: 43.7515, east: 7.4425)

/// Where the benchmarks place things on a graph: Monaco itself when the graph is Monaco's
/// extract, else the middle half of the graph's extent (a city's built-up core, not the
/// outskirts an extract reaches into).
func benchArea(_ routing: RoutingEngine) -> (south: Double, west: Double, north: Double, east: Double) {
  var (south, north, west, east) = (90.0, -90.0, 180.0, -180.0)
  for point in routing.network.points {
    let latitude = Double(point.latitudeE6) / 1e6
    let longitude = Double(point.longitudeE6) / 1e6
    south = min(south, latitude)
    north = max(north, latitude)
    west = min(west, longitude)
    east = max(east, longitude)
  }
  if south <= monaco.south, north >= monaco.north, west <= monaco.west, east >= monaco.east,
    north - south < 0.2, east - west < 0.2
  {
    return monaco
  }
  let (height, width) = (north - south, east - west)
  return (south + height / 4, west + width / 4, north - height / 4, east - width / 4)
}

/// Points on the network's roads within the area: random points snapped to their nearest road,
/// kept when a road is near and a car can leave it and come back (not a dead end of a tiny
/// component such as a car park).
func roadPoints(
  _ routing: RoutingEngine, count: Int, random: inout Seeded,
  area given: (south: Double, west: Double, north: Double, east: Double)? = nil
) -> [LatLng] {
  let area = given ?? benchArea(routing)
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
