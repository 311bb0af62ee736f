import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetPositioning
import FleetProto
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// A driver and their app, simulated on the Driver SDK: goes online, drives to each waypoint
/// fleetd assigns the vehicle (over the road graph at road speeds, times `speedup`), moves each
/// trip through its statuses as the provider's backend would, and goes offline after `trips`
/// completed trips. Prints a line for every change.
public struct SimulatedDriver: Sendable {
  public struct Configuration: Sendable {
    public var endpoint: FleetEndpoint
    public var providerID: String
    public var vehicleID: String
    /// Simulated seconds per real second.
    public var speedup: Double = 1
    /// Between location updates (5…60 s, real time).
    public var interval: Duration = .seconds(5)
    /// Completed trips after which the driver goes offline and stops; nil: never.
    public var trips: Int?
    /// Where the vehicle starts when fleetd does not know it yet.
    public var start: LatLng?
    /// Seconds (simulated) spent at a pickup and at an intermediate stop.
    public var pickupDwell: Double = 30
    public var stopDwell: Double = 20

    public init(endpoint: FleetEndpoint, providerID: String, vehicleID: String) {
      self.endpoint = endpoint
      self.providerID = providerID
      self.vehicleID = vehicleID
    }
  }

  public let configuration: Configuration
  let tokens: ServiceAccountTokenProvider
  let routing: RoutingEngine?
  let log: @Sendable (String) -> Void

  public init(
    configuration: Configuration, key: ServiceAccountKey, routing: RoutingEngine?,
    log: @escaping @Sendable (String) -> Void
  ) throws {
    self.configuration = configuration
    tokens = try ServiceAccountTokenProvider(key: key)
    self.routing = routing
    self.log = log
  }

  var vehicleName: String { "providers/\(configuration.providerID)/vehicles/\(configuration.vehicleID)" }
  func tripName(_ id: String) -> String { "providers/\(configuration.providerID)/trips/\(id)" }

  func say(_ text: String) { log("vehicle \(configuration.vehicleID): \(text)") }

  /// Drives until `trips` trips are complete (or forever), then goes offline.
  public func run() async throws {
    let endpoint = configuration.endpoint
    try await endpoint.withClient { client in
      let backend = Backend(
        vehicles: .init(wrapping: client), trips: .init(wrapping: client), tokens: tokens,
        vehicleID: configuration.vehicleID, vehicleName: vehicleName)
      let start = try await ensureVehicle(backend)
      let car = SimulatedLocationProvider.driving(from: start, speedup: configuration.speedup)
      var context = DriverContext(
        tokenProvider: tokens, providerID: configuration.providerID, vehicleID: configuration.vehicleID,
        endpoint: endpoint,
        locationProvider: car, navigation: CarNavigation(car: car))
      context.reporting.callTimeout = .seconds(10)
      let api = RidesharingDriverAPI(driverContext: context)
      let reporter = api.vehicleReporter
      let acknowledgements = AcknowledgementListener()
      reporter.addListener(acknowledgements)
      reporter.locationUpdateInterval = configuration.interval
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await api.run() }
        reporter.locationTrackingEnabled = true
        try reporter.updateVehicleState(.online)
        try await acknowledgements.waitForState(.online)
        say("ONLINE at \(format(start))")
        try await drive(car: car, backend: backend)
        reporter.locationTrackingEnabled = false
        try await acknowledgements.waitForState(.offline)
        say("OFFLINE")
        group.cancelAll()
      }
    }
  }

  /// The vehicle's position: fleetd's if it knows the vehicle, else the configured start (the
  /// vehicle is created there).
  func ensureVehicle(_ backend: Backend) async throws -> LatLng {
    if let vehicle = try await backend.vehicle() {
      if vehicle.hasLastLocation {
        return LatLng(
          latitude: vehicle.lastLocation.location.latitude, longitude: vehicle.lastLocation.location.longitude)
      }
      if let start = configuration.start ?? defaultStart() { return start }
      throw FleetError(.failedPrecondition, "vehicle \(configuration.vehicleID) has no position: give --start LAT,LNG")
    }
    guard let start = configuration.start ?? defaultStart() else {
      throw FleetError(
        .failedPrecondition, "vehicle \(configuration.vehicleID) does not exist: give --start LAT,LNG or --graph")
    }
    do {
      try await backend.createVehicle(configuration.providerID, configuration.vehicleID, at: start)
    } catch let error as RPCError where error.code == .permissionDenied {
      throw FleetError(
        .failedPrecondition,
        "vehicle \(configuration.vehicleID) does not exist and this key may not create it (\(error.message)): create it with a server key first"
      )
    }
    say("created at \(format(start))")
    return start
  }

  /// A road position picked from the vehicle ID, so that many simulated vehicles spread out.
  func defaultStart() -> LatLng? {
    guard let routing else { return nil }
    let twoWay = routing.network.edges.filter { $0.forward != nil && $0.backward != nil }
    guard !twoWay.isEmpty else { return nil }
    // FNV-1a of the ID: stable from run to run.
    var hash: UInt64 = 1_469_598_103_934_665_603
    for byte in configuration.vehicleID.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
    let junction = routing.network.coordinate(ofJunction: twoWay[Int(hash % UInt64(twoWay.count))].from)
    return LatLng(latitude: Double(junction.latitudeE6) / 1e6, longitude: Double(junction.longitudeE6) / 1e6)
  }

  func drive(car: SimulatedLocationProvider, backend: Backend) async throws {
    var completed = 0
    var announced: [String: TripStatus] = [:]
    var outage = false
    while configuration.trips.map({ completed < $0 }) ?? true {
      try Task.checkCancellation()
      do {
        try await driveToNextStop(car: car, backend: backend, completed: &completed, announced: &announced)
        if outage {
          outage = false
          say("fleetd is back")
        }
      } catch let error as RPCError where Self.outageCodes.contains(error.code) {
        // A driver keeps driving through an outage; the reporter keeps the positions for later.
        if !outage { say("fleetd unreachable (\(error.code)); retrying") }
        outage = true
        try await Task.sleep(for: .seconds(1))
      } catch let error as RPCError where [.failedPrecondition, .notFound, .aborted].contains(error.code) {
        // The plan changed between reading it and acting on it (a rider canceled, the provider
        // moved a trip on): as a driver's app does, stop, read the plan again and go on.
        say("fleetd refused a change (\(error.code): \(error.message)); reading the plan again")
        car.drive(SimulatedDrive(path: [car.position], speed: 1))
        announced = [:]
        try await Task.sleep(for: .milliseconds(250))
      }
    }
  }

  /// Codes after which a driver keeps driving and asks again: fleetd is away, slow or busy.
  static let outageCodes: Set<RPCError.Code> = [
    .unavailable, .deadlineExceeded, .resourceExhausted, .internalError, .unknown,
  ]

  /// One step of the drive: waits for a waypoint, drives to it, or moves a trip on.
  func driveToNextStop(
    car: SimulatedLocationProvider, backend: Backend, completed: inout Int, announced: inout [String: TripStatus]
  ) async throws {
    guard let vehicle = try await backend.vehicle(), let next = vehicle.waypoints.first else {
      try await Task.sleep(for: .milliseconds(250))
      return
    }
    let trip = try await backend.trip(next.tripID)
    let type = WaypointType(rawValue: next.waypointType.rawValue) ?? .unknown
    let target = LatLng(latitude: next.location.point.latitude, longitude: next.location.point.longitude)
    if trip.tripStatus.rawValue == TripProgression.arrival(at: type).rawValue {
      // Done at this stop (after the dwell): leaving it for the trip's next waypoint is what
      // takes it off the vehicle's list.
      guard let following = vehicle.waypoints.dropFirst().firstIndex(where: { $0.tripID == next.tripID }) else {
        try await Task.sleep(for: .milliseconds(250))
        return
      }
      let status = TripProgression.enroute(
        to: WaypointType(rawValue: vehicle.waypoints[following].waypointType.rawValue) ?? .unknown)
      let stop = TripProgression.intermediateIndex(at: following, in: trip, remaining: vehicle.waypoints)
      try await backend.setStatus(next.tripID, status, intermediateIndex: stop)
      announced[next.tripID] = status
      say("trip \(next.tripID): \(status.wireName)")
      return
    }
    let stop = TripProgression.intermediateIndex(at: 0, in: trip, remaining: vehicle.waypoints)
    let enroute = TripProgression.enroute(to: type)
    if announced[next.tripID] != enroute || trip.tripStatus.rawValue != enroute.rawValue {
      try await backend.setStatus(next.tripID, enroute, intermediateIndex: stop)
      announced[next.tripID] = enroute
      say("trip \(next.tripID): \(enroute.wireName)")
    }
    let drive = Self.plannedDrive(on: routing, from: car.position, to: target, serverRoute: vehicle.currentRouteSegment)
    car.drive(drive)
    // Drive, watching for the plan to change under us (a cancellation, a new first stop).
    var replanned = false
    while !car.hasArrived {
      // Twice a second: soon enough to turn round, light enough for dozens of drivers at once.
      try await Task.sleep(for: .milliseconds(500))
      if let now = try await backend.vehicle(), now.waypoints.first != next {
        replanned = true
        break
      }
    }
    if replanned {
      car.drive(SimulatedDrive(path: [car.position], speed: 1))
      return
    }
    let arrival = TripProgression.arrival(at: type)
    try await backend.setStatus(next.tripID, arrival, intermediateIndex: stop)
    announced[next.tripID] = arrival
    say("trip \(next.tripID): \(arrival.wireName) (\(Int(drive.distance)) m in \(Int(drive.duration)) s)")
    switch type {
    case .pickup: try await dwell(configuration.pickupDwell)
    case .intermediateDestination: try await dwell(configuration.stopDwell)
    default:
      completed += 1
      announced[next.tripID] = nil
    }
  }

  func dwell(_ seconds: Double) async throws {
    try await sleep(simulated: seconds, speedup: configuration.speedup)
  }

  /// Over the road graph when there is one, else along fleetd's own route to the waypoint, else
  /// straight at 10 m/s.
  static func plannedDrive(on routing: RoutingEngine?, from start: LatLng, to target: LatLng, serverRoute: String = "")
    -> SimulatedDrive
  {
    if let routing, let route = try? routing.route([start, target]) {
      return SimulatedDrive(route: route, acceleration: 1.5)
    }
    if let path = Polyline.decode(serverRoute), path.count >= 2 {
      return SimulatedDrive(path: [start] + path + [target], speed: 10, acceleration: 1.5)
    }
    return SimulatedDrive(path: [start, target], speed: 10, acceleration: 1.5)
  }
}

func format(_ point: LatLng) -> String {
  String(format: "%.5f,%.5f", point.latitude, point.longitude)
}

/// The trip statuses a driver moves through, per waypoint (Fleet Engine's trip lifecycle).
public enum TripProgression {
  public static func enroute(to type: WaypointType) -> TripStatus {
    switch type {
    case .pickup: .enrouteToPickup
    case .intermediateDestination: .enrouteToIntermediateDestination
    default: .enrouteToDropoff
    }
  }

  public static func arrival(at type: WaypointType) -> TripStatus {
    switch type {
    case .pickup: .arrivedAtPickup
    case .intermediateDestination: .arrivedAtIntermediateDestination
    default: .complete
    }
  }

  /// For an intermediate stop (`remaining[position]`): its index among the trip's intermediate
  /// destinations. Those not yet visited are the last ones, and it is the first of them.
  static func intermediateIndex(
    at position: Int, in trip: Maps_Fleetengine_V1_Trip, remaining: [Maps_Fleetengine_V1_TripWaypoint]
  ) -> Int? {
    let waypoint = remaining[position]
    guard waypoint.waypointType == .intermediateDestinationWaypointType else { return nil }
    let left = remaining[position...].filter {
      $0.tripID == waypoint.tripID && $0.waypointType == .intermediateDestinationWaypointType
    }.count
    return trip.intermediateDestinations.count - left
  }
}

/// The car's remaining drive as the navigation's route progress.
struct CarNavigation: NavigationSource {
  let car: SimulatedLocationProvider
  func currentProgress() async -> NavigationProgress? {
    guard !car.hasArrived, let remaining = car.remaining, let destination = remaining.path.last else { return nil }
    return NavigationProgress(
      destination: destination, path: remaining.path, remainingDistanceMeters: remaining.metres,
      remainingTime: .milliseconds(Int(remaining.seconds * 1000 / max(car.configuration.speedup, 0.001))))
  }
}

/// Waits for the reporter to have a state acknowledged.
final class AcknowledgementListener: VehicleReporterListener {
  let states = AsyncStream<VehicleState>.makeStream(bufferingPolicy: .unbounded)
  func vehicleReporter(_ reporter: VehicleReporter, didSucceed update: VehicleUpdate) {
    if let state = update.vehicleState { states.continuation.yield(state) }
  }
  func vehicleReporter(_ reporter: VehicleReporter, didFail update: VehicleUpdate, with error: FleetClientError) {
    if !error.isTransient { states.continuation.finish() }
  }
  func waitForState(_ state: VehicleState) async throws {
    for await acknowledged in states.stream where acknowledged == state { return }
    throw FleetError(
      .unavailable, "fleetd did not acknowledge the vehicle going \(state == .online ? "online" : "offline")")
  }
}
