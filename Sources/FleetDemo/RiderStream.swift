import Foundation

/// Riders booking rides at random places, `perMinute` a minute on average (a Poisson stream:
/// exponential gaps), as real requests arrive.
struct RiderStream: Sendable {
  let backend: DemoBackend
  let places: DemoPlaces
  let perMinute: Double

  func run() async throws {
    guard perMinute > 0 else { return }
    while true {
      let gap = -log(Double.random(in: Double.ulpOfOne..<1)) * 60 / perMinute
      try await Task.sleep(for: .milliseconds(Int(min(gap, 3600) * 1000)))
      let trip = places.trip()
      do {
        _ = try await backend.bookRide(from: trip.pickup, to: trip.dropoff)
      } catch is CancellationError {
        return
      } catch {
        // A rider whose booking failed (fleetd restarting) tries another time.
      }
    }
  }
}
