import ArgumentParser
import BenchSupport
import FleetCore
import FleetDispatch
import FleetGeometry
import FleetProgress
import FleetRouting
import FleetStoreSQLite
import Foundation
import Logging
import Synchronization

/// Dispatch quality in a simulated hour of Poisson demand on a city (Monaco itself, or the middle
/// of any other graph's extent): the same requests served by the batched and the greedy
/// dispatcher and, booked as SHARED, pooled, at each load, the fleet driven in simulated time
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

  @Option(help: "Seconds between the fleet's location reports.") var reportEvery = 10.0
  @Option(
    help:
      "How rides are matched, comma-separated: batched, greedy, pooled (batched, the rides SHARED), reassign (batched, rides moved to a free car --reassign-saving sooner)."
  )
  var modes = "batched,greedy"
  @Option(help: "For the reassign mode: seconds a free car must save on a ride's pickup to take it.")
  var reassignSaving = 180.0
  @Option(
    help:
      "Metres (0-10000) a ride's dispatch radius grows by for each minute it waits, up to 10000, as fleetd serve's flag (0: never)."
  )
  var dispatchRadiusGrowth: Int32 = DispatchRules().pickupRadiusGrowthPerMinute

  func run() async throws {
    let growths = DispatchRules.radiusGrowthsPerMinute
    guard growths.contains(dispatchRadiusGrowth) else {
      throw ValidationError(
        "--dispatch-radius-growth must be between \(growths.lowerBound) and \(growths.upperBound) metres a minute, got \(dispatchRadiusGrowth)"
      )
    }
    let routing = try RoutingEngine(graph: graph)
    var random = Seeded(seed)
    let sample = roadPoints(routing, count: 400, random: &random)
    let drives = stride(from: 0, to: sample.count - 1, by: 2).compactMap {
      try? routing.route([sample[$0], sample[$0 + 1]]).duration
    }
    let meanDrive = drives.reduce(0, +) / Double(drives.count)
    let chosen = try modes.split(separator: ",").map { name in
      guard let mode = Simulation.Mode(rawValue: String(name)) else {
        throw ValidationError("--modes takes batched, greedy, pooled and reassign, got '\(name)'")
      }
      return mode
    }
    print(
      "\(URL(fileURLWithPath: graph).lastPathComponent), \(vehicles) vehicles, \(hours) h of demand (rides between random road points in \(benchArea(routing) == monaco ? "Monaco" : "the middle half of the graph's extent"), \(Int(meanDrive)) s of driving on average), \(Int(dwell)) s at each pickup, rounds every \(interval) s, rides given up after \(Int(timeout)) s, the dispatch radius growing \(dispatchRadiusGrowth) m a minute waited; the first 10 minutes warm the fleet up and are not counted"
    )
    print()
    print(
      "| target load | demand | policy | rides booked | served | mean pickup wait | p90 pickup wait | fleet busy (measured) | vehicle-km per completed ride | empty km | detour mean / p90 (shared) | widened: picked up (mean wait) | round p50 / p99 ms |"
    )
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    let warmUp = 600.0
    let measured = hours * 3600
    for load in loads.split(separator: ",").compactMap({ Double($0) }) {
      let starts = roadPoints(routing, count: vehicles, random: &random)
      // Demand for the target load: a first guess (a pickup takes half a random drive), then
      // two half-hour pilot runs that scale it by the busy share they measure.
      var perSecond = load * Double(vehicles) / (1.5 * meanDrive + dwell)
      for _ in 0..<2 {
        let pilot = Demand.poisson(perSecond: perSecond, seconds: 1800 + warmUp, routing: routing, random: &random)
        let outcome = try await simulation(routing, Simulation.Mode.batched).run(
          demand: pilot, starts: starts, warmUp: warmUp, seconds: 1800, reportEvery: reportEvery)
        perSecond *= load / max(0.02, outcome.busyShare)
      }
      let demand = Demand.poisson(perSecond: perSecond, seconds: measured + warmUp, routing: routing, random: &random)
      for mode in chosen {
        let outcome = try await simulation(routing, mode).run(
          demand: demand, starts: starts, warmUp: warmUp, seconds: measured, reportEvery: reportEvery)
        let detour =
          outcome.detours.isEmpty
          ? "-"
          : String(
            format: "%.2f / %.2f", outcome.detours.reduce(0, +) / Double(outcome.detours.count),
            outcome.detours.sorted()[Int(Double(outcome.detours.count - 1) * 0.9)])
        print(
          "| \(Int(load * 100)) % | \(Int(perSecond * 3600)) rides/h | \(mode.rawValue) | \(outcome.booked) | \(String(format: "%.1f", outcome.servedShare * 100)) % | \(Int(outcome.meanWait.rounded())) s | \(Int(outcome.p90Wait.rounded())) s | \(String(format: "%.0f", outcome.busyShare * 100)) % | \(String(format: "%.2f", outcome.kilometresPerCompleted)) | \(String(format: "%.0f", outcome.emptyShare * 100)) % | \(detour) | \(outcome.widenedWaits.count) (\(outcome.widenedWaits.isEmpty ? "-" : "\(Int((outcome.widenedWaits.reduce(0, +) / Double(outcome.widenedWaits.count)).rounded())) s")) | \(milliseconds(outcome.rounds, 0.5)) / \(milliseconds(outcome.rounds, 0.99)) |"
        )
      }
    }
  }

  func simulation(_ routing: RoutingEngine, _ mode: Simulation.Mode) -> Simulation {
    Simulation(
      routing: routing, mode: mode, interval: interval, timeout: timeout, dwell: dwell,
      reassignSaving: reassignSaving, radiusGrowth: dispatchRadiusGrowth)
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
  enum Mode: String {
    case batched, greedy
    /// The rides booked SHARED, matched batched: pooled.
    case pooled
    /// Batched, rides not yet picked up moved to a free car that is clearly sooner.
    case reassign

    var policy: DispatchPolicy { self == .greedy ? .greedy : .batched }
  }

  struct Outcome {
    /// Rides booked after the warm-up, and what became of them.
    var booked: Int
    var servedShare: Double
    var meanWait: Double
    var p90Wait: Double
    var busyShare: Double
    /// Kilometres the fleet drove per ride completed, and the share of them driven with nobody
    /// aboard, over the whole run.
    var kilometresPerCompleted: Double
    var emptyShare: Double
    /// Shared rides completed: time aboard ÷ the direct drive's.
    var detours: [Double]
    /// The pickup waits of the rides picked up by a car from beyond the base dispatch radius
    /// (offered as their wait widened it).
    var widenedWaits: [Double]
    var rounds: [Duration]
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
    var aboard: Set<String> = []
  }

  let routing: RoutingEngine
  let mode: Mode
  let interval: Double
  let timeout: Double
  let dwell: Double
  let reassignSaving: Double
  let radiusGrowth: Int32
  let time = SimulatedTime()
  let admin = Caller.admin(of: "sim")

  init(
    routing: RoutingEngine, mode: Mode, interval: Double, timeout: Double, dwell: Double, reassignSaving: Double,
    radiusGrowth: Int32
  ) {
    self.routing = routing
    self.mode = mode
    self.interval = interval
    self.timeout = timeout
    self.dwell = dwell
    self.reassignSaving = reassignSaving
    self.radiusGrowth = radiusGrowth
  }

  func name(_ kind: ResourceKind, _ id: String) -> ResourceName { ResourceName(provider: "sim", kind: kind, id: id) }

  /// Demand from 0 to `warmUp + seconds`; rides booked before `warmUp` and the fleet's busy time
  /// then are not counted. Then until every ride is done or given up (an hour at most).
  func run(demand: [Demand], starts: [LatLng], warmUp: Double, seconds: Double, reportEvery: Double) async throws
    -> Outcome
  {
    let end = warmUp + seconds
    // SQLite on a RAM disk when there is one: the same store, without the disk's fsync time.
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm/" : NSTemporaryDirectory()
    let directory = base + "fleetkit-dispatch-sim-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var logger = Logger(label: "dispatch-sim")
    logger.logLevel = .critical
    let progress = ProgressEngine(routing: routing)
    let clock = time.read
    let fleet = try await Fleet(
      store: try SQLiteStore(directory: directory, logger: logger), progress: progress,
      travel: RoadTravelEstimator(routing: routing), clock: clock)
    var configuration = DispatchConfiguration()
    configuration.policy = mode.policy
    configuration.noVehicleTimeout = .milliseconds(Int64(timeout * 1000))
    configuration.rules.pickupRadiusGrowthPerMinute = radiusGrowth
    if mode == .reassign {
      configuration.reassignment = Reassignment(minimumSaving: .milliseconds(Int64(reassignSaving * 1000)))
    }
    let dispatcher = Dispatcher(fleet: fleet, configuration: configuration, logger: logger)

    var cars = starts.enumerated().map { Car(id: "car-\($0.offset)", position: $0.element) }
    for car in cars {
      var v = Vehicle(provider: "sim", id: car.id)
      v.state = .online
      v.supportedTripTypes = [.exclusive, .shared]
      v.maximumCapacity = 4
      v.category = .auto
      v.lastLocation = VehicleLocation(location: car.position)
      v.lastLocation?.updateTime = clock()
      _ = try await fleet.createVehicle(
        caller: admin, provider: "sim", vehicleID: car.id, vehicle: VehicleInput(vehicle: v))
    }

    var booked: [String: Double] = [:]
    var pickedUp: [String: Double] = [:]
    var completed = Set<String>()
    /// When each ride was dropped off.
    var finished: [String: Double] = [:]
    var next = 0
    var busySeconds = 0.0
    var givenUp = 0
    var metres = 0.0
    var emptyMetres = 0.0
    var completedRides = 0
    var detours: [Double] = []
    var widened = Set<String>()
    var rounds: [Duration] = []
    var t = 0.0
    while t < end || (completed.count + givenUp < booked.count && t < end + 3600) {
      time.set(t)
      while next < demand.count, demand[next].time <= t {
        var request = RideRequest()
        request.pickupPoint = TerminalLocation(point: demand[next].from)
        request.dropoffPoint = TerminalLocation(point: demand[next].to)
        request.tripType = mode == .pooled ? .shared : .exclusive
        let id = "ride-\(next)"
        _ = try await fleet.createRide(caller: admin, provider: "sim", rideID: id, request: request)
        booked[id] = t
        next += 1
      }
      if t.truncatingRemainder(dividingBy: interval) == 0 {
        let round = try await dispatcher.round()
        givenUp += round.expired.count
        for assigned in round.assigned where assigned.widened { widened.insert(assigned.ride.id) }
        if t >= warmUp && t < end { rounds.append(round.duration) }
      }
      for i in cars.indices {
        let vehicle = try fleet.getVehicle(caller: admin, name: name(.vehicles, cars[i].id))
        if t >= warmUp && t < end && !vehicle.currentTrips.isEmpty { busySeconds += 1 }
        let before = cars[i].position
        let done = completed.count
        try await advance(
          &cars[i], vehicle: vehicle, fleet: fleet, t: t, pickedUp: &pickedUp, completed: &completed,
          finished: &finished)
        // Over the whole run, the drain after the demand included: every kilometre driven for
        // the rides completed (a window shorter than the trips would count their kilometres
        // without their completions).
        let moved = before.distance(to: cars[i].position)
        metres += moved
        if cars[i].aboard.isEmpty { emptyMetres += moved }
        completedRides += completed.count - done
      }
      if t.truncatingRemainder(dividingBy: reportEvery) == 0 {
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
    // Shared rides' detours: aboard from leaving the pickup to the drop-off, over the direct drive.
    if mode == .pooled {
      for (trip, done) in finished where booked[trip]! >= warmUp {
        guard let picked = pickedUp[trip], let index = Int(trip.dropFirst("ride-".count)),
          let direct = try? routing.route([demand[index].from, demand[index].to]).duration, direct > 0
        else { continue }
        detours.append((done - picked - dwell) / direct)
      }
    }
    let counted = booked.filter { $0.value >= warmUp }
    let served = completed.filter { booked[$0]! >= warmUp }.count
    // Each counted ride's wait from booking to pickup, once; the widened rides' are among them.
    let waitsByRide = pickedUp.compactMap { ride, at in booked[ride]! >= warmUp ? (ride, at - booked[ride]!) : nil }
    let waits = waitsByRide.map(\.1).sorted()
    let widenedWaits = waitsByRide.filter { widened.contains($0.0) }.map(\.1)
    return Outcome(
      booked: counted.count, servedShare: Double(served) / Double(max(1, counted.count)),
      meanWait: waits.isEmpty ? 0 : waits.reduce(0, +) / Double(waits.count),
      p90Wait: waits.isEmpty ? 0 : waits[Int(Double(waits.count - 1) * 0.9)],
      busyShare: busySeconds / (Double(cars.count) * seconds),
      kilometresPerCompleted: metres / 1000 / Double(max(1, completedRides)),
      emptyShare: metres > 0 ? emptyMetres / metres : 0, detours: detours, widenedWaits: widenedWaits,
      rounds: rounds)
  }

  /// One second of a car: drive, arrive, dwell, move its trip on, as `fleet drive` does.
  func advance(
    _ car: inout Car, vehicle: Vehicle, fleet: Fleet, t: Double, pickedUp: inout [String: Double],
    completed: inout Set<String>, finished: inout [String: Double]
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
          car.aboard.insert(trip)
          car.dwellUntil = t + dwell
        } else {
          try await setStatus(trip, .complete, fleet)
          completed.insert(trip)
          car.aboard.remove(trip)
          finished[trip] = t
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

/// Seconds since the simulation began, as the fleet's clock.
final class SimulatedTime: Sendable {
  let epoch = Date(timeIntervalSince1970: 1_800_000_000)
  let seconds = Mutex(0.0)
  func set(_ t: Double) { seconds.withLock { $0 = t } }
  var read: @Sendable () -> Date { { self.epoch.addingTimeInterval(self.seconds.withLock { $0 }) } }
}
