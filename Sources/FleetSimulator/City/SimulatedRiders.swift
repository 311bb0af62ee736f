import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf
import Synchronization

/// Riders booking through the booking API (fleetkit.v1.Rides, as the provider's backend with a
/// server token), each at its request's time, however long earlier bookings take.
public struct SimulatedRiders: Sendable {
  public struct Configuration: Sendable {
    public var provider: String
    /// The share of riders who book a SHARED ride (the rest EXCLUSIVE).
    public var sharedFraction = 0.0
    /// Ride IDs are `prefix-N`.
    public var prefix: String
    /// Bookings in flight at most.
    public var concurrency = 256
    public var callTimeout: Duration = .seconds(10)

    public init(provider: String, prefix: String) {
      self.provider = provider
      self.prefix = prefix
    }
  }

  public let configuration: Configuration
  let tokens: ServiceAccountTokenProvider
  let stats: SimulationStats
  let requested: RequestTimes
  /// Told of each ride booked: the riders' apps that follow it.
  let watchers: SimulatedWatchers?

  public init(
    configuration: Configuration, tokens: ServiceAccountTokenProvider, stats: SimulationStats, requested: RequestTimes,
    watchers: SimulatedWatchers? = nil
  ) {
    self.configuration = configuration
    self.tokens = tokens
    self.stats = stats
    self.requested = requested
    self.watchers = watchers
  }

  /// Books every request of `demand` at its time; returns when a replay has none left.
  public func run(demand: Demand, client: GRPCClient<HTTP2ClientTransport.Posix>, seed: UInt64) async throws {
    var demand = demand
    var random = SplitMix64(seed: seed ^ 0x5EED)
    let rides = Fleetkit_V1_Rides.Client(wrapping: client)
    let clock = ContinuousClock()
    let start = clock.now
    let inFlight = InFlightBookings()
    var number = 0
    try await withThrowingDiscardingTaskGroup { group in
      while let request = demand.next() {
        try await clock.sleep(until: start + .seconds(request.time))
        while inFlight.count.load(ordering: .relaxed) >= configuration.concurrency {
          try await clock.sleep(for: .milliseconds(5))
        }
        number += 1
        let id = "\(configuration.prefix)-\(number)"
        let shared = random.nextUnit() < configuration.sharedFraction
        inFlight.count.add(1, ordering: .relaxed)
        group.addTask {
          defer { inFlight.count.subtract(1, ordering: .relaxed) }
          await book(id, request, shared: shared, rides: rides)
        }
      }
    }
  }

  func book(
    _ id: String, _ ride: RideRequest, shared: Bool,
    rides: Fleetkit_V1_Rides.Client<HTTP2ClientTransport.Posix>
  ) async {
    var request = Fleetkit_V1_CreateRideRequest()
    request.parent = "providers/\(configuration.provider)"
    request.rideID = id
    request.ride.pickupPoint.point.latitude = ride.pickup.latitude
    request.ride.pickupPoint.point.longitude = ride.pickup.longitude
    request.ride.dropoffPoint.point.latitude = ride.dropoff.latitude
    request.ride.dropoffPoint.point.longitude = ride.dropoff.longitude
    request.ride.numberOfPassengers = Int32(ride.passengers)
    request.ride.tripType = shared ? .shared : .exclusive
    let asked = ContinuousClock.now
    requested.record(id, at: asked)
    stats.update { $0.ridesRequested += 1 }
    var options = CallOptions.defaults
    options.timeout = configuration.callTimeout
    do {
      let metadata: Metadata = ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"]
      _ = try await rides.createRide(request, metadata: metadata, options: options)
      let took = (ContinuousClock.now - asked).seconds
      stats.update {
        $0.ridesBooked += 1
        $0.bookingLatency.record(took)
      }
      watchers?.watch(ride: id)
    } catch {
      _ = requested.take(id)
      // A booking cut short by the end of the run is no refusal of fleetd's (as for reports).
      guard !Task.isCancelled else { return }
      let code = (error as? RPCError).map { "\($0.code)" } ?? "\(type(of: error))"
      stats.update {
        $0.ridesRefused += 1
        $0.refusals[code, default: 0] += 1
      }
    }
  }
}

/// Bookings under way, shared with the tasks making them.
final class InFlightBookings: Sendable {
  let count = Atomic<Int>(0)
}
