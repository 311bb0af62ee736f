import ArgumentParser
import BenchSupport
import FleetGeometry
import Foundation

/// Point-in-polygon through the area index, in process on one core: the lookup every quote,
/// booking and vehicle report makes (service areas, zones, surge), over a metro's worth of
/// irregular polygons with holes, next to checking every polygon in turn (the peer it replaces).
/// Both must find the same areas for every point.
struct AreaLookup: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "areas")

  @Option(help: "Polygons, spread over a 40 × 40 km metro.") var areas = 10_000
  @Option(help: "Vertices of each polygon's outer ring.") var vertices = 24
  @Option(help: "Points looked up through the index.") var points = 200_000
  @Option(help: "Of them, checked against every polygon in turn as well.") var checked = 2_000

  func run() async throws {
    var random = Seeded(7)
    let (south, west) = (48.70, 2.15)  // a box the size of Paris and its ring, 0.36° × 0.54°
    let (height, width) = (0.36, 0.54)
    func ring(around centre: LatLng, radius metres: Double, jagged: Bool) -> [LatLng] {
      (0..<vertices).map { i in
        let angle = Double(i) / Double(vertices) * 2 * .pi
        let r = metres * (jagged ? 0.6 + 0.4 * random.next() : 1)
        return LatLng(
          latitude: centre.latitude + r * sin(angle) / 111_320,
          longitude: centre.longitude + r * cos(angle) / (111_320 * cos(centre.latitude * .pi / 180)))
      }
    }
    var entries: [(Int, Area)] = []
    for key in 0..<areas {
      let centre = LatLng(latitude: south + random.next() * height, longitude: west + random.next() * width)
      let radius = 150 + random.next() * 850
      var rings = [ring(around: centre, radius: radius, jagged: true)]
      // One in four with a hole: an airport inside a district, a park inside a zone.
      if key % 4 == 0 { rings.append(ring(around: centre, radius: radius * 0.3, jagged: false).reversed()) }
      entries.append((key, Area(polygons: [rings])))
    }
    let clock = ContinuousClock()
    let built = clock.now
    let index = AreaIndex(entries)
    let buildTime = clock.now - built
    let queries = (0..<points).map { _ in
      LatLng(latitude: south + random.next() * height, longitude: west + random.next() * width)
    }

    var indexTimes: [Duration] = []
    indexTimes.reserveCapacity(points)
    var found = 0
    for point in queries {
      let start = clock.now
      let hits = index.areas(containing: point)
      indexTimes.append(clock.now - start)
      found += hits.count
    }
    var scanTimes: [Duration] = []
    var disagreements = 0
    for point in queries.prefix(checked) {
      let start = clock.now
      let hits = entries.filter { $0.1.contains(point) }.map(\.0)
      scanTimes.append(clock.now - start)
      if Set(hits) != Set(index.areas(containing: point).map(\.key)) { disagreements += 1 }
    }
    print(
      "\(areas) polygons of \(vertices) vertices (a quarter with a hole) over 40 × 40 km; index built in \(String(format: "%.1f", micro(buildTime) / 1000)) ms; \(String(format: "%.2f", Double(found) / Double(points))) areas per point on average"
    )
    print()
    print("| lookup, one core | points | mean µs | p50 µs | p99 µs | max µs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for (label, times) in [("area index", indexTimes), ("every polygon in turn (peer)", scanTimes)] {
      let total = times.reduce(Duration.zero, +)
      print(
        "| \(label) | \(times.count) | \(String(format: "%.2f", micro(total) / Double(times.count))) | \(percentile(times, 0.5)) | \(percentile(times, 0.99)) | \(percentile(times, 1)) |"
      )
    }
    print()
    print("the index and the scan disagreed on \(disagreements) of \(min(checked, points)) points")
    if disagreements > 0 { throw ExitCode(1) }
  }

  func micro(_ d: Duration) -> Double {
    let (s, atto) = d.components
    return Double(s) * 1e6 + Double(atto) / 1e12
  }

  func percentile(_ values: [Duration], _ p: Double) -> String {
    let sorted = values.sorted()
    return String(format: "%.2f", micro(sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]))
  }
}
