import FleetCore
import Foundation
import Prometheus

/// Rides as an operator sizes a city by them, from the events of this instance's commits: rides
/// requested, completed and unserved, how long riders waited for their car, and how much longer
/// a pooled ride took than the direct one. With several instances each counts its own commits;
/// their sum counts every ride once.
final class RideMetrics: Sendable {
  let requested: Counter
  let completed: Counter
  let noVehicleFound: Counter
  let pickupWait: DurationHistogram
  let detourRatio: ValueHistogram
  let vehiclesOnline: Gauge

  init(registry: PrometheusCollectorRegistry) {
    requested = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_rides_requested", unitName: "total", helpText: "Rides booked, now or for later"))
    completed = registry.makeCounter(
      descriptor: .init(metricName: "fleetd_rides_completed", unitName: "total", helpText: "Rides completed"))
    noVehicleFound = registry.makeCounter(
      descriptor: .init(
        metricName: "fleetd_rides_no_vehicle_found", unitName: "total",
        helpText: "Rides nobody could serve in time (NO_VEHICLE_FOUND)"))
    pickupWait = registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "fleetd_ride_pickup_wait", unitName: "seconds",
        helpText: "From the request (or the pickup time booked) to the rider getting in"),
      buckets: [30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 3600].map { .seconds($0) })
    detourRatio = registry.makeValueHistogram(
      descriptor: .init(
        metricName: "fleetd_ride_detour_ratio", unitName: "",
        helpText: "Shared rides: time aboard divided by the direct drive's time"),
      buckets: [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.75, 2, 2.5, 3])
    vehiclesOnline = registry.makeGauge(
      descriptor: .init(metricName: "fleetd_vehicles_online", unitName: "", helpText: "Online vehicles, every provider")
    )
  }

  func record(_ events: [FleetEvent]) {
    for event in events {
      guard case .ride(let view) = event.payload else { continue }
      let ride = view.ride
      switch event.type {
      case .rideCreated, .rideScheduled: requested.increment()
      case .rideCompleted:
        completed.increment()
        // The direct drive the dispatcher planned the pool on, else the one the fare was priced on.
        if ride.request.tripType == .shared, let direct = ride.directSeconds ?? ride.route?.seconds, direct > 0,
          let boarded = ride.meterStart?.time
        {
          detourRatio.record(max(0, event.time.timeIntervalSince(boarded)) / direct)
        }
      case .rideNoVehicleFound: noVehicleFound.increment()
      case .rideStarted:
        // A ride booked for later waits from its pickup time, never less than nothing.
        let from = max(ride.createTime, ride.request.pickupTime ?? ride.createTime)
        pickupWait.record(.milliseconds(Int64(max(0, event.time.timeIntervalSince(from)) * 1000)))
      default: break
      }
    }
  }
}
