import FleetProto
import Foundation
import Synchronization

/// Riders booking rides at random places, `perMinute` a minute on average (a Poisson stream:
/// exponential gaps), as real requests arrive. Where fleetd prices rides (`priced`), each asks
/// for quotes first and books one of them, and `aheadShare` of them book for later (10 to 45
/// minutes ahead).
struct RiderStream: Sendable {
  let backend: DemoBackend
  let places: DemoPlaces
  let perMinute: Double
  let priced: Bool
  var aheadShare = 0.2

  /// Bookings in flight at most; a rider who arrives beyond it waits for one to finish.
  var concurrency = 128

  func run() async throws {
    guard perMinute > 0 else { return }
    let clock = ContinuousClock()
    var next = clock.now
    let inFlight = InFlight()
    try await withThrowingDiscardingTaskGroup { group in
      while true {
        // Arrivals on their own schedule: a slow booking does not hold back the next rider.
        let gap = -log(Double.random(in: Double.ulpOfOne..<1)) * 60 / perMinute
        next = next.advanced(by: .milliseconds(Int64(min(gap, 3600) * 1000)))
        try await clock.sleep(until: next)
        while inFlight.count.load(ordering: .relaxed) >= concurrency { try await clock.sleep(for: .milliseconds(10)) }
        inFlight.count.add(1, ordering: .relaxed)
        group.addTask {
          defer { inFlight.count.subtract(1, ordering: .relaxed) }
          do {
            try await book()
          } catch is CancellationError {
            throw CancellationError()
          } catch {
            // A rider whose booking failed (fleetd restarting, a place outside the service
            // area) goes elsewhere.
          }
        }
      }
    }
  }

  func book() async throws {
    let trip = places.trip()
    let passengers = Int32.random(in: 1...3)
    guard priced else {
      _ = try await backend.bookRide(from: trip.pickup, to: trip.dropoff, passengers: passengers)
      return
    }
    // Whole seconds: the booking repeats the quote's pickup time exactly.
    let pickupTime =
      Double.random(in: 0..<1) < aheadShare
      ? Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + Double.random(in: 600...2700)).rounded()) : nil
    let quotes = try await backend.quotes(
      from: trip.pickup, to: trip.dropoff, passengers: passengers, at: pickupTime)
    _ = try await backend.bookRide(
      from: trip.pickup, to: trip.dropoff, passengers: passengers, at: pickupTime, quote: Self.choose(quotes))
  }

  /// Most riders take the first product a car can reach soon; some the cheapest.
  static func choose(_ quotes: [Fleetkit_V1_Quote]) -> Fleetkit_V1_Quote? {
    let reachable = quotes.filter { $0.hasPickupEta || $0.pickupEtaUnavailableReason.isEmpty }
    let offered = reachable.isEmpty ? quotes : reachable
    if Double.random(in: 0..<1) < 0.3 {
      return offered.min { ($0.fare.units, $0.fare.nanos) < ($1.fare.units, $1.fare.nanos) }
    }
    return offered.first
  }
}

/// Bookings under way, shared with the tasks making them.
final class InFlight: Sendable {
  let count = Atomic<Int>(0)
}
