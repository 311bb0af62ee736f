import FleetProto
import FleetSimulator
import Foundation
import Synchronization

/// Riders booking rides at the times and places of the demand model (Poisson arrivals over the
/// day's profile, from the city's streets and hotspots): the same model `fleet simulate` runs.
/// Where fleetd prices rides (`priced`), each asks for quotes first and books one of them, and
/// `aheadShare` of them book for later (10 to 45 minutes ahead).
struct RiderStream: Sendable {
  let backend: DemoBackend
  let demand: Demand
  let priced: Bool
  var aheadShare = 0.2

  /// Bookings in flight at most; a rider who arrives beyond it waits for one to finish.
  var concurrency = 128

  func run() async throws {
    var demand = demand
    let clock = ContinuousClock()
    let start = clock.now
    let inFlight = InFlight()
    try await withThrowingDiscardingTaskGroup { group in
      // Arrivals on their own schedule: a slow booking does not hold back the next rider.
      while let request = demand.next() {
        try await clock.sleep(until: start + .milliseconds(Int64(request.time * 1000)))
        while inFlight.count.load(ordering: .relaxed) >= concurrency { try await clock.sleep(for: .milliseconds(10)) }
        inFlight.count.add(1, ordering: .relaxed)
        group.addTask {
          defer { inFlight.count.subtract(1, ordering: .relaxed) }
          do {
            try await book(request)
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

  func book(_ trip: RideRequest) async throws {
    let passengers = Int32(trip.passengers)
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
