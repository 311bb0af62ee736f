import ArgumentParser
import FleetCore
import FleetDispatch
import FleetProgress
import FleetRouting
import FleetStore
import Foundation
import Logging
import Synchronization

/// Dispatch quality in a simulated hour of Poisson demand on Monaco: the same requests served
/// by the batched and the greedy dispatcher at each load, the fleet driven in simulated time
/// (every drive at the graph's speeds, a dwell at each pickup), everything else the real thing:
/// fleetd's domain on SQLite, its progress engine, SearchVehicles' candidates and the dispatcher.
struct DispatchQuality: AsyncParsableCommand {
  static let configuration = CommandConfiguration(commandName: "quality")

  @Option(help: "The road graph (from `fleetd graph build`).") var graph: String
  @Option(help: "Vehicles in the fleet.") var vehicles = 40
  @Option(help: "Hours of demand.") var hours = 1.0
  @Option(help: "Target shares of the fleet busy, comma-separated.") var loads = "0.4,0.7,0.95"
  @Option(help: "Seconds between dispatch rounds.") var interval = 2.0
  @Option(help: "Seconds a ride may wait before it is NO_VEHICLE_FOUND.") var timeout = 300.0
  @Option(help: "Seconds spent at each pickup.") var dwell = 30.0
  @Option var seed: UInt64 = 7

  func run() async throws {
    let routing = try RoutingEngine(graph: graph)
    var random = Seeded(seed)
    // The mean drive between two random road points: what a ride takes, and roughly what a
    // pickup takes when cars are scattered.
    let sample = roadPoints(routing, count: 400, random: &random)
    let drives = stride(from: 0, to: sample.count - 1, by: 2).compactMap { try? routing.route([sample[$0], sample[$0 + 1]]).duration }
    let meanDrive = drives.reduce(0, +) / Double(drives.count)
    let busyPerRide = 2 * meanDrive + dwell
    print(
      "Monaco, \(vehicles) vehicles, \(hours) h of demand; mean drive between random road points \(Int(meanDrive)) s, so about \(Int(busyPerRide)) s of a car per ride; rounds every \(interval) s, rides given up after \(Int(timeout)) s"
    )
    print()
    print("| target load | policy | rides booked | served | mean pickup wait | p90 pickup wait | fleet busy (measured) |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for load in loads.split(separator: ",").compactMap({ Double($0) }) {
      let perSecond = load * Double(vehicles) / busyPerRide
      let demand = Demand.poisson(
        perSecond: perSecond, seconds: hours * 3600, routing: routing, random: &random)
      let starts = roadPoints(routing, count: vehicles, random: &random)
      for policy in DispatchPolicy.allCases {
        let outcome = try await Simulation(
          routing: routing, policy: policy, interval: interval, timeout: timeout, dwell: dwell
        ).run(demand: demand, starts: starts, seconds: hours * 3600)
        print(
          "| \(Int(load * 100)) % | \(policy.rawValue) | \(demand.count) | \(String(format: "%.1f", outcome.servedShare * 100)) % | \(Int(outcome.meanWait.rounded())) s | \(Int(outcome.p90Wait.rounded())) s | \(String(format: "%.0f", outcome.busyShare * 100)) % |"
        )
      }
    }
  }
}

/// Ride requests: when, from where, to where.
struct Demand {
  var time: Double
  var from: LatLng
  var to: LatLng

  /// Poisson arrivals; each ride between two road points at least 500 m apart.
  static func poisson(perSecond: Double, seconds: Double, routing: RoutingEngine, random: inout Seeded) -> [Demand] {
    var rides: [Demand] = []
    var t = 0.0
    while true {
      t += -log(1 - random.next()) / perSecond
      guard t < seconds else { return rides }
      var pair = roadPoints(routing, count: 2, random: &random)
      while pair[0].distance(to: pair[1]) < 500 { pair = roadPoints(routing, count: 2, random: &random) }
      rides.append(Demand(time: t, from: pair[0], to: pair[1]))
    }
  }
}

/// One policy on one demand, in simulated seconds.
final class Simulation {
  struct Outcome {
    var servedShare: Double
    var meanWait: Double
    var p90Wait: Double
    var busyShare: Double
  }

  /// A car's drive along a route, at the route's average speed.
  struct Drive {
    var target: TripWaypoint
    var points: [LatLng]
    var along: [Double]
    var start: Double
    var duration: Double

    func position(at t: Double) -> LatLng {
      let total = along.last ?? 0
      guard duration > 0, total > 0 else { return points.last! }
      let metres = min(1, max(0, (t - start) / duration)) * total
      guard let i = along.firstIndex(where: { $0 >= metres }), i > 0 else { return points[0] }
      let f = (metres - along[i - 1]) / max(1e-9, along[i] - along[i - 1])
      return LatLng(
        latitude: points[i - 1].latitude + (points[i].latitude - points[i - 1].latitude) * f,
        longitude: points[i - 1].longitude + (points[i].longitude - points[i - 1].longitude) * f)
    }
  }

  struct Car {
    var id: String
    var position: LatLng
    var drive: Drive?
    var dwellUntil = 0.0
  }

  let routing: RoutingEngine
  let policy: DispatchPolicy
  let interval: Double
  let timeout: Double
  let dwell: Double
  let epoch = Date(timeIntervalSince1970: 1_800_000_000)
  let now = Mutex(0.0)
  let admin = Caller.admin(of: "sim")

  init(routing: RoutingEngine, policy: DispatchPolicy, interval: Double, timeout: Double, dwell: Double) {
    self.routing = routing
    self.policy = policy
    self.interval = interval
    self.timeout = timeout
    self.dwell = dwell
  }

  func name(_ kind: ResourceKind, _ id: String) -> ResourceName { ResourceName(provider: "sim", kind: kind, id: id) }

  func run(demand: [Demand], starts: [LatLng], seconds: Double) async throws -> Outcome {
    // SQLite on a RAM disk when there is one: the same store, without the disk's fsync time.
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    let directory = base + "fleetkit-dispatch-sim-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var logger = Logger(label: "dispatch-sim")
    logger.logLevel = .critical
    let progress = ProgressEngine(routing: routing)
    let clock = { @Sendable [now, epoch] in epoch.addingTimeInterval(now.withLock { $0 }) }
    let fleet = try await Fleet(
      storage: try SQLiteFleetStore(directory: directory, logger: logger), progress: progress,
      travel: RoadTravelEstimator(routing: routing, traffic: progress.traffic), clock: clock)
    var configuration = DispatchConfiguration()
    configuration.policy = policy
    configuration.noVehicleTimeout = .milliseconds(Int64(timeout * 1000))
    let dispatcher = Dispatcher(fleet: fleet, configuration: configuration, logger: logger)

    var cars = starts.enumerated().map { Car(id: "car-\($0.offset)", position: $0.element) }
    for car in cars {
      var v = Vehicle(provider: "sim", id: car.id)
      v.state = .online
      v.supportedTripTypes = [.exclusive]
      v.maximumCapacity = 4
      v.category = .auto
      v.lastLocation = VehicleLocation(location: car.position)
      v.lastLocation?.updateTime = clock()
      _ = try await fleet.createVehicle(caller: admin, provider: "sim", vehicleID: car.id, vehicle: VehicleInput(vehicle: v))
    }

    var booked: [String: Double] = [:]
    var pickedUp: [String: Double] = [:]
    var completed = Set<String>()
    var next = 0
    var busySeconds = 0.0
    var givenUp = 0
    var t = 0.0
    // Demand for `seconds`, then until every ride is done or given up (an hour at most).
    while t < seconds || (completed.count + givenUp < booked.count && t < seconds + 3600) {
      now.withLock { $0 = t }
      while next < demand.count, demand[next].time <= t {
        var request = RideRequest()
        request.pickupPoint = TerminalLocation(point: demand[next].from)
        request.dropoffPoint = TerminalLocation(point: demand[next].to)
        let id = "ride-\(next)"
        _ = try await fleet.createRide(caller: admin, provider: "sim", rideID: id, request: request)
        booked[id] = t
        next += 1
      }
      if t.truncatingRemainder(dividingBy: interval) == 0 { givenUp += try await dispatcher.round().expired.count }
      for i in cars.indices {
        let vehicle = try fleet.getVehicle(caller: admin, name: name(.vehicles, cars[i].id))
        if t < seconds && !vehicle.currentTrips.isEmpty { busySeconds += 1 }
        try await advance(&cars[i], vehicle: vehicle, fleet: fleet, t: t, pickedUp: &pickedUp, completed: &completed)
      }
      if Int(t) % 5 == 0 {
        for car in cars {
          var v = Vehicle(provider: "sim", id: car.id)
          v.lastLocation = VehicleLocation(location: car.position)
          v.lastLocation?.updateTime = clock()
          _ = try await fleet.updateVehicle(
            caller: admin, name: name(.vehicles, car.id), vehicle: VehicleInput(vehicle: v), mask: ["last_location"])
        }
      }
      t += 1
    }
    let waits = pickedUp.map { $0.value - booked[$0.key]! }.sorted()
    return Outcome(
      servedShare: Double(completed.count) / Double(max(1, booked.count)),
      meanWait: waits.isEmpty ? 0 : waits.reduce(0, +) / Double(waits.count),
      p90Wait: waits.isEmpty ? 0 : waits[Int(Double(waits.count - 1) * 0.9)],
      busyShare: busySeconds / (Double(cars.count) * seconds))
  }

  /// One second of a car: drive, arrive, dwell, move its trip on, as `fleet drive` does.
  func advance(
    _ car: inout Car, vehicle: Vehicle, fleet: Fleet, t: Double, pickedUp: inout [String: Double],
    completed: inout Set<String>
  ) async throws {
    if let drive = car.drive {
      car.position = drive.position(at: t)
      if vehicle.waypoints.first != drive.target {
        car.drive = nil  // Its plan changed under it.
      } else if t >= drive.start + drive.duration {
        car.drive = nil
        car.position = drive.target.location.point
        let trip = drive.target.tripID
        if drive.target.waypointType == .pickup {
          try await setStatus(trip, .arrivedAtPickup, fleet)
          pickedUp[trip] = t
          car.dwellUntil = t + dwell
        } else {
          try await setStatus(trip, .complete, fleet)
          completed.insert(trip)
        }
      }
      return
    }
    guard t >= car.dwellUntil, let target = vehicle.waypoints.first else { return }
    let trip = try fleet.getTrip(caller: admin, name: name(.trips, target.tripID)).trip
    if trip.status == .arrivedAtPickup {
      // Done waiting at the pickup: leaving it takes it off the car's list.
      try await setStatus(target.tripID, .enrouteToDropoff, fleet)
      return
    }
    let enroute: TripStatus = target.waypointType == .pickup ? .enrouteToPickup : .enrouteToDropoff
    if trip.status != enroute { try await setStatus(target.tripID, enroute, fleet) }
    guard let route = try? routing.route([car.position, target.location.point]), let leg = route.legs.first else {
      return
    }
    var along = [0.0]
    for (a, b) in zip(leg.geometry, leg.geometry.dropFirst()) { along.append(along.last! + a.distance(to: b)) }
    car.drive = Drive(target: target, points: leg.geometry, along: along, start: t, duration: route.duration)
  }

  func setStatus(_ trip: String, _ status: TripStatus, _ fleet: Fleet) async throws {
    var update = Trip(provider: "sim", id: trip)
    update.status = status
    _ = try await fleet.updateTrip(caller: admin, name: name(.trips, trip), trip: update, mask: ["trip_status"])
  }
}
