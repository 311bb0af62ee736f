import FleetCore
import FleetLocation
import Foundation

/// Conversions per second between WGS-84, GCJ-02 and BD-09, on one core, over points spread
/// across mainland China. Run with `dev/location-bench.sh`.
@main
struct LocationBench {
  static func main() {
    var generator = SystemRandomNumberGenerator()
    let points = (0..<100_000).map { _ in
      LatLng(
        latitude: Double.random(in: 20...50, using: &generator),
        longitude: Double.random(in: 80...130, using: &generator))
    }
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
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(points.count * rounds) / seconds
        // The checksum keeps the work from being optimised away.
        print("| \(from.rawValue) → \(to.rawValue) | \(Int(rate).formatted()) |" + (checksum.isNaN ? " NaN" : ""))
      }
    }
  }
}
