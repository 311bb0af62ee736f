import FleetGeocoding
import FleetGeometry
import FleetLocation
import FleetPlaces
import FleetPositioning
import Foundation

/// The location service in numbers: updates delivered on a recorded drive with and without the
/// filters (the battery story), reverse-geocoding and place-search latency on Monaco
/// (in-process, one caller), and coordinate conversions per second. Run with
/// `dev/location-bench.sh`.
@main
struct LocationBench {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  static let data = root.appendingPathComponent("data")

  static func main() throws {
    try filters()
    try geocoding()
    conversions()
  }

  static func filters() throws {
    let drive = try TrackFile.read(
      contentsOf: root.appendingPathComponent("Tests/FleetLocationTests/Fixtures/monaco-drive.gpx"))
    let minutes = drive.last!.time.timeIntervalSince(drive[0].time) / 60
    print("## Updates delivered on the recorded Monaco drive (\(drive.count) fixes at 1 Hz, \(Int(minutes)) min)\n")
    print("| options | delivered | share of fixes |")
    print("| --- | ---: | ---: |")
    let cases: [(String, LocationOptions)] = [
      ("none", LocationOptions()),
      ("accuracy ≤ 50 m", LocationOptions(desiredAccuracy: 50)),
      (
        "accuracy ≤ 50 m, pause (other)",
        LocationOptions(desiredAccuracy: 50, activityType: .other, pausesWhenStationary: true)
      ),
      ("accuracy ≤ 50 m, distance 10 m", LocationOptions(desiredAccuracy: 50, distanceFilter: 10)),
      ("accuracy ≤ 50 m, distance 50 m", LocationOptions(desiredAccuracy: 50, distanceFilter: 50)),
      (
        "accuracy ≤ 50 m, distance 10 m, pause (automotive)",
        LocationOptions(desiredAccuracy: 50, distanceFilter: 10, activityType: .automotive, pausesWhenStationary: true)
      ),
      (
        "accuracy ≤ 50 m, distance 10 m, pause (other)",
        LocationOptions(desiredAccuracy: 50, distanceFilter: 10, activityType: .other, pausesWhenStationary: true)
      ),
    ]
    for (name, options) in cases {
      var filter = LocationFilter(options: options)
      let delivered = drive.filter { filter.consider($0).verdict == .deliver }.count
      print("| \(name) | \(delivered) | \(String(format: "%.0f %%", 100 * Double(delivered) / Double(drive.count))) |")
    }
    print()
  }

  static func geocoding() throws {
    let started = ContinuousClock.now
    let engine = try GeocodingEngine(
      osmPath: data.appendingPathComponent("monaco.osm.pbf").path,
      geoNamesPath: data.appendingPathComponent("cities1000.csv").path)
    let build = ContinuousClock.now - started
    print("## Geocoding on Monaco, in-process, one caller\n")
    print("Built from monaco.osm.pbf and cities1000.csv in \(milliseconds(build)) ms: \(engine.summary)\n")
    var random = SystemRandomNumberGenerator()
    let points = (0..<20_000).map { _ in
      LatLng(
        latitude: Double.random(in: 43.725...43.752, using: &random),
        longitude: Double.random(in: 7.405...7.440, using: &random))
    }
    let world = (0..<5_000).map { _ in
      LatLng(
        latitude: Double.random(in: -60...70, using: &random), longitude: Double.random(in: -180...180, using: &random))
    }
    print("| operation | calls | p50 µs | p99 µs | max µs |")
    print("| --- | ---: | ---: | ---: | ---: |")
    row("reverse, Monaco", measure(points) { _ = try? engine.reverse($0) })
    row("reverse, anywhere (GeoNames)", measure(world) { _ = try? engine.reverse($0) })
    let keywords = ["pharmacy", "restaurant", "casino", "hotel", "bank", "museum", "pharmacie", "bar", "café", "école"]
    let searches = (0..<5_000).map { i in
      PlaceSearch(keyword: keywords[i % keywords.count], city: "Monaco", near: points[i])
    }
    row("search, city given", measure(searches) { _ = try? engine.search($0) })
    let nearOnly = searches.map { PlaceSearch(keyword: $0.keyword, near: $0.near) }
    row("search, city from near", measure(nearOnly) { _ = try? engine.search($0) })
    print()
  }

  static func measure<Input>(_ inputs: [Input], _ body: (Input) -> Void) -> [Duration] {
    for input in inputs.prefix(200) { body(input) }  // warm-up
    return inputs.map { input in
      let start = ContinuousClock.now
      body(input)
      return ContinuousClock.now - start
    }
  }

  static func row(_ name: String, _ samples: [Duration]) {
    let sorted = samples.sorted()
    func micro(_ d: Duration) -> String { String(format: "%.1f", d / .microseconds(1)) }
    let p50 = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
    print("| \(name) | \(samples.count) | \(micro(p50)) | \(micro(p99)) | \(micro(sorted.last!)) |")
  }

  static func milliseconds(_ d: Duration) -> Int { Int((d / .milliseconds(1)).rounded()) }

  static func conversions() {
    var generator = SystemRandomNumberGenerator()
    let points = (0..<100_000).map { _ in
      LatLng(
        latitude: Double.random(in: 20...50, using: &generator),
        longitude: Double.random(in: 80...130, using: &generator))
    }
    print("## Coordinate conversions, points across mainland China\n")
    print("| from → to | conversions/s (1 core) |")
    print("| --- | ---: |")
    for from in CoordinateSystem.allCases {
      for to in CoordinateSystem.allCases where to != from {
        var checksum = 0.0
        let rounds = 20
        let start = ContinuousClock.now
        for _ in 0..<rounds {
          for p in points { checksum += p.converted(from: from, to: to).latitude }
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let rate = Double(points.count * rounds) / seconds
        // The checksum keeps the work from being optimised away.
        print("| \(from.rawValue) → \(to.rawValue) | \(Int(rate).formatted()) |" + (checksum.isNaN ? " NaN" : ""))
      }
    }
  }
}
