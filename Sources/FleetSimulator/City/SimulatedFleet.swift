import FleetCore
import FleetDriver
import FleetGeometry
import FleetProto
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Synchronization

/// Many simulated drivers at once, light enough for ten thousand in one process: each reports
/// its position every `reportInterval` over the Driver SDK's report stream (a few streams shared
/// by all, with a server token, as a gateway would) and learns its waypoints from the answer, as
/// a driver's app does; it drives to the first one over the road graph at road speeds (times
/// `speedup`), moves the trips through their statuses as the provider's backend would, and waits
/// at pickups. No polling: a driver hears of a new assignment with its next report.
public struct SimulatedFleet: Sendable {
  public struct Configuration: Sendable {
    public var provider: String
    public var vehicles: Int
    /// Vehicle IDs are `prefix-1` … `prefix-N`.
    public var prefix = "sim"
    /// Real time between a vehicle's reports.
    public var reportInterval: Duration = .seconds(5)
    /// Simulated seconds per real second.
    public var speedup = 1.0
    /// Simulated seconds at a pickup and at an intermediate stop.
    public var pickupDwell = 30.0
    public var stopDwell = 20.0
    /// Vehicles per report stream.
    public var vehiclesPerStream = 1000
    public var callTimeout: Duration = .seconds(10)

    public init(provider: String, vehicles: Int) {
      self.provider = provider
      self.vehicles = vehicles
    }

    public func vehicleID(_ index: Int) -> String { "\(prefix)-\(index)" }
  }

  public let configuration: Configuration
  let routing: RoutingEngine
  let places: CityPlaces
  let tokens: ServiceAccountTokenProvider
  let stats: SimulationStats
  /// When each ride this process booked was requested (real time), for the pickup wait.
  let requested: RequestTimes
  /// Wakes the drivers for their reports and arrivals.
  let ticker = Ticker()

  public init(
    configuration: Configuration, routing: RoutingEngine, places: CityPlaces, tokens: ServiceAccountTokenProvider,
    stats: SimulationStats, requested: RequestTimes
  ) {
    self.configuration = configuration
    self.routing = routing
    self.places = places
    self.tokens = tokens
    self.stats = stats
    self.requested = requested
  }

  /// Where each vehicle starts (index 0 is vehicle 1): where fleetd has it, heading as it last
  /// reported, for a vehicle that exists (a simulation started again carries on), else a street
  /// of the city, where it is created (offline), a few calls at a time.
  public func prepareVehicles(client: GRPCClient<HTTP2ClientTransport.Posix>) async throws -> [VehicleStart] {
    let vehicles = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
    let metadata: Metadata = ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"]
    let configuration = configuration
    var known: [String: VehicleStart] = [:]
    var list = Maps_Fleetengine_V1_ListVehiclesRequest()
    list.parent = "providers/\(configuration.provider)"
    list.pageSize = 500
    list.vehicleTypeCategories = [.auto, .taxi, .truck, .twoWheeler, .bicycle, .pedestrian]
    repeat {
      let page = try await vehicles.listVehicles(list, metadata: metadata)
      for vehicle in page.vehicles where vehicle.hasLastLocation {
        let location = vehicle.lastLocation
        known[String(vehicle.name.split(separator: "/").last ?? "")] = VehicleStart(
          point: LatLng(latitude: location.location.latitude, longitude: location.location.longitude),
          heading: location.hasHeading ? Double(location.heading.value) : nil)
      }
      list.pageToken = page.nextPageToken
    } while !list.pageToken.isEmpty
    let starts = (1...configuration.vehicles).map {
      known[configuration.vehicleID($0)] ?? VehicleStart(point: places.start(for: $0), heading: nil)
    }
    let missing = (1...configuration.vehicles).filter { known[configuration.vehicleID($0)] == nil }
    try await withThrowingTaskGroup(of: Void.self) { group in
      var running = 0
      for index in missing {
        if running >= 32 {
          try await group.next()
          running -= 1
        }
        running += 1
        let start = starts[index - 1].point
        group.addTask {
          var request = Maps_Fleetengine_V1_CreateVehicleRequest()
          request.parent = "providers/\(configuration.provider)"
          request.vehicleID = configuration.vehicleID(index)
          request.vehicle.vehicleState = .offline
          request.vehicle.supportedTripTypes = [.exclusive, .shared]
          request.vehicle.maximumCapacity = 4
          request.vehicle.vehicleType.category = .auto
          request.vehicle.lastLocation.location.latitude = start.latitude
          request.vehicle.lastLocation.location.longitude = start.longitude
          do {
            _ = try await vehicles.createVehicle(request, metadata: metadata)
          } catch let error as RPCError where error.code == .alreadyExists {
            // Made meanwhile by another simulation: it carries on from there.
          }
        }
      }
      try await group.waitForAll()
    }
    return starts
  }

  /// Drives every vehicle until cancelled. `clients` carry the report streams and the trip
  /// calls (round robin).
  public func run(clients: [GRPCClient<HTTP2ClientTransport.Posix>], starts: [VehicleStart]) async throws {
    precondition(!clients.isEmpty)
    let streams = max(
      1, (configuration.vehicles + configuration.vehiclesPerStream - 1) / configuration.vehiclesPerStream)
    let channels = (0..<streams).map {
      // A driver here follows its waypoints; the rest of the vehicle is what it just reported.
      UpdateChannel(client: clients[$0 % clients.count], timeout: configuration.callTimeout, readMask: ["waypoints"])
    }
    let counts = FleetCounts()
    try await withThrowingDiscardingTaskGroup { group in
      for channel in channels { group.addTask { await channel.run() } }
      group.addTask { try await ticker.run() }
      group.addTask {
        // The fleet's size in each period's line.
        while true {
          try await Task.sleep(for: .seconds(1))
          stats.setFleet(online: counts.online.load(ordering: .relaxed), onTrip: counts.onTrip.load(ordering: .relaxed))
        }
      }
      let interval = configuration.reportInterval
      for index in 1...configuration.vehicles {
        let driver = VehicleDriver(
          fleet: self, id: configuration.vehicleID(index), start: starts[index - 1],
          channel: channels[(index - 1) % channels.count],
          trips: Maps_Fleetengine_V1_TripService.Client(wrapping: clients[index % clients.count]), counts: counts)
        // Spread over the interval, so that reports arrive evenly.
        let offset = interval * (Double(index - 1) / Double(configuration.vehicles))
        group.addTask { try await driver.run(firstReportAfter: offset) }
      }
    }
  }
}

/// Where a simulated vehicle is when the simulation starts, and the way it faces if known.
public struct VehicleStart: Sendable {
  public var point: LatLng
  public var heading: Double?

  public init(point: LatLng, heading: Double?) {
    self.point = point
    self.heading = heading
  }
}

/// When each booked ride was requested, shared between the riders and the drivers.
public final class RequestTimes: Sendable {
  let times = Mutex<[String: ContinuousClock.Instant]>([:])
  public init() {}
  public func record(_ ride: String, at instant: ContinuousClock.Instant) { times.withLock { $0[ride] = instant } }
  func take(_ ride: String) -> ContinuousClock.Instant? { times.withLock { $0.removeValue(forKey: ride) } }
}

final class FleetCounts: Sendable {
  let online = Atomic(0)
  let onTrip = Atomic(0)
}

/// One simulated vehicle: its own task, its own state.
struct VehicleDriver: Sendable {
  struct Target: Equatable {
    var trip: String
    var type: WaypointType
    var point: LatLng
  }

  let fleet: SimulatedFleet
  let id: String
  let start: VehicleStart
  let channel: UpdateChannel
  let trips: Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>
  let counts: FleetCounts

  var configuration: SimulatedFleet.Configuration { fleet.configuration }
  var name: String { "providers/\(configuration.provider)/vehicles/\(id)" }

  /// The vehicle's own state, kept by its task.
  struct State {
    var parked: LatLng
    /// The way the car faces, in whole degrees: where it last drove, or after a restart the
    /// heading fleetd stored. Every report carries it, standing or not, and a new drive leaves
    /// that way, as fleetd's plan for the car does: the two take the same roads.
    var heading: Double?
    var drive: SimulatedDrive?
    var driveStart = ContinuousClock.now
    var target: Target?
    /// The status this driver last gave each trip on board or on the way.
    var statuses: [String: TripStatus] = [:]
    /// Trips whose riders are in the car.
    var onBoard: Set<String> = []
    var dwellUntil: ContinuousClock.Instant?
    var online = false
    var countedOnTrip = false
    /// The waypoints fleetd last answered with.
    var waypoints: [Maps_Fleetengine_V1_TripWaypoint] = []
  }

  func run(firstReportAfter offset: Duration) async throws {
    let clock = ContinuousClock()
    var state = State(parked: start.point, heading: start.heading)
    // A drive under way when the run ends counts as far as the car got: rides in a metro last
    // longer than a short run, and counting only finished drives showed almost every km empty.
    defer { stopDriving(&state) }
    var nextReport = clock.now + offset
    while true {
      let event = eventTime(state)
      try await fleet.ticker.sleep(until: min(nextReport, event ?? nextReport))
      var reportNow = clock.now >= nextReport
      if let event, clock.now >= event {
        await handleEvent(&state)
        reportNow = true
      }
      guard reportNow else { continue }
      if clock.now >= nextReport {
        nextReport += configuration.reportInterval
        if nextReport < clock.now { nextReport = clock.now + configuration.reportInterval }
      }
      if let vehicle = await report(&state) {
        state.waypoints = vehicle.waypoints
        await react(&state)
      }
    }
  }

  /// Simulated seconds since the current drive began.
  func elapsed(_ state: State) -> Double {
    (ContinuousClock.now - state.driveStart).seconds * configuration.speedup
  }

  func position(_ state: State) -> LatLng {
    guard let drive = state.drive else { return state.parked }
    return drive.position(after: elapsed(state))
  }

  /// The next arrival or the end of a stop's dwell.
  func eventTime(_ state: State) -> ContinuousClock.Instant? {
    if let dwell = state.dwellUntil { return dwell }
    guard let drive = state.drive, state.target != nil else { return nil }
    return state.driveStart + .seconds(drive.duration / configuration.speedup)
  }

  func handleEvent(_ state: inout State) async {
    if let dwell = state.dwellUntil {
      if ContinuousClock.now >= dwell { state.dwellUntil = nil }
      return
    }
    guard let target = state.target else { return }
    stopDriving(&state, at: target.point)
    let arrival = TripProgression.arrival(at: target.type)
    guard await setStatus(target.trip, arrival, &state) else { return }
    switch target.type {
    case .pickup:
      state.onBoard.insert(target.trip)
      fleet.stats.update { figures in
        figures.ridesPickedUp += 1
        if let asked = fleet.requested.take(target.trip) {
          figures.pickupWait.record((ContinuousClock.now - asked).seconds * configuration.speedup)
        }
      }
      state.dwellUntil = .now + .seconds(configuration.pickupDwell / configuration.speedup)
    case .intermediateDestination:
      state.dwellUntil = .now + .seconds(configuration.stopDwell / configuration.speedup)
    default:
      state.onBoard.remove(target.trip)
      state.statuses[target.trip] = nil
      fleet.stats.update { $0.ridesCompleted += 1 }
    }
  }

  /// Ends the current drive where the car is (or at `point` when it arrived), counting the metres.
  func stopDriving(_ state: inout State, at point: LatLng? = nil) {
    guard let drive = state.drive else {
      state.target = nil
      return
    }
    let driven = min(drive.distance, drive.distance(after: elapsed(state)))
    let empty = state.onBoard.isEmpty
    fleet.stats.update { figures in
      figures.metresDriven += driven
      if empty { figures.metresEmpty += driven }
    }
    state.parked = point ?? position(state)
    state.drive = nil
    state.target = nil
  }

  /// Acts on the waypoints fleetd last gave: leaves a stop whose dwell is over, sets the trip
  /// on its way to the first waypoint and drives there; stops when there is none.
  func react(_ state: inout State) async {
    defer {
      // The fleet's count of vehicles on a trip (driving to a stop or with riders aboard).
      let onTrip = state.target != nil || !state.onBoard.isEmpty
      if onTrip != state.countedOnTrip {
        counts.onTrip.add(onTrip ? 1 : -1, ordering: .relaxed)
        state.countedOnTrip = onTrip
      }
    }
    var remaining = state.waypoints
    for _ in 0..<2 {
      guard let next = remaining.first else {
        if state.target != nil { stopDriving(&state) }
        return
      }
      let type = WaypointType(rawValue: next.waypointType.rawValue) ?? .unknown
      let point = LatLng(latitude: next.location.point.latitude, longitude: next.location.point.longitude)
      if state.statuses[next.tripID] == nil {
        // A trip new to this driver: assigned just now, or under way before a restart.
        guard let status = await tripStatus(next.tripID) else { return }
        if status == .new { fleet.stats.update { $0.ridesAssigned += 1 } }
        if [.arrivedAtPickup, .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination, .enrouteToDropoff]
          .contains(status)
        {
          state.onBoard.insert(next.tripID)
        }
        state.statuses[next.tripID] = status
      }
      let status = state.statuses[next.tripID]
      if status == TripProgression.arrival(at: type) {
        // At this stop: once the dwell is over, on to the trip's next waypoint.
        guard state.dwellUntil == nil,
          let following = remaining.dropFirst().first(where: { $0.tripID == next.tripID })
        else { return }
        let on = TripProgression.enroute(to: WaypointType(rawValue: following.waypointType.rawValue) ?? .unknown)
        guard await setStatus(next.tripID, on, &state) else { return }
        remaining.removeFirst()
        continue
      }
      let enroute = TripProgression.enroute(to: type)
      if status != enroute {
        guard await setStatus(next.tripID, enroute, &state) else { return }
      }
      let target = Target(trip: next.tripID, type: type, point: point)
      guard state.target != target else { return }
      let from = position(state)
      stopDriving(&state)
      state.parked = from
      let route = try? fleet.routing.route([from, point], heading: state.heading)
      state.drive =
        route.map { SimulatedDrive(route: $0, acceleration: 1.5) }
        ?? SimulatedDrive(path: [from, point], speed: 10, acceleration: 1.5)
      state.driveStart = .now
      state.target = target
      return
    }
  }

  /// Moves a trip to `status` as the provider's backend; false when fleetd refused it (the
  /// ride was canceled or reassigned: the next report's waypoints say what to do).
  func setStatus(_ trip: String, _ status: TripStatus, _ state: inout State) async -> Bool {
    var request = Maps_Fleetengine_V1_UpdateTripRequest()
    request.name = "providers/\(configuration.provider)/trips/\(trip)"
    request.trip.tripStatus = Maps_Fleetengine_V1_TripStatus(rawValue: status.rawValue) ?? .unknownTripStatus
    request.updateMask.paths = ["trip_status"]
    var options = CallOptions.defaults
    options.timeout = configuration.callTimeout
    do {
      if status == .enrouteToIntermediateDestination || status == .arrivedAtIntermediateDestination {
        var get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = request.name
        let current = try await trips.getTrip(get, metadata: try metadata(), options: options)
        if let index = TripProgression.intermediateIndex(
          at: 0, in: current, remaining: state.waypoints.filter { $0.tripID == trip })
        {
          request.trip.intermediateDestinationIndex = Int32(index)
          request.updateMask.paths.append("intermediate_destination_index")
        }
      }
      _ = try await trips.updateTrip(request, metadata: try metadata(), options: options)
      state.statuses[trip] = status
      return true
    } catch {
      fleet.stats.update { $0.statusCallsFailed += 1 }
      state.statuses[trip] = nil
      state.onBoard.remove(trip)
      if state.target?.trip == trip { stopDriving(&state) }
      return false
    }
  }

  /// The trip's status as fleetd has it; nil when it cannot be read.
  func tripStatus(_ trip: String) async -> TripStatus? {
    var request = Maps_Fleetengine_V1_GetTripRequest()
    request.name = "providers/\(configuration.provider)/trips/\(trip)"
    var options = CallOptions.defaults
    options.timeout = configuration.callTimeout
    do {
      let found = try await trips.getTrip(request, metadata: try metadata(), options: options)
      return TripStatus(rawValue: found.tripStatus.rawValue)
    } catch {
      fleet.stats.update { $0.statusCallsFailed += 1 }
      return nil
    }
  }

  func metadata() throws -> Metadata { ["authorization": "Bearer \(try fleet.tokens.token(vehicleID: nil))"] }

  /// One report: where the car is, its remaining route when it drives to a stop, and (first)
  /// that it is online. Returns the vehicle as fleetd stored it.
  func report(_ state: inout State) async -> Maps_Fleetengine_V1_Vehicle? {
    var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
    request.name = name
    let now = Date()
    var location = Maps_Fleetengine_V1_VehicleLocation()
    let point = position(state)
    location.location.latitude = point.latitude
    location.location.longitude = point.longitude
    location.updateTime = .init(date: now)
    location.locationSensor = .gps
    location.latlngAccuracy = .init(5)
    var paths = ["last_location"]
    if let drive = state.drive, state.target != nil {
      let t = elapsed(state)
      location.speed = .init(drive.speed(after: t))
      if let heading = drive.heading(after: t) { state.heading = Double(Int32(heading.rounded()) % 360) }
      request.vehicle.currentRouteSegment = Polyline.encode(drive.remainingPath(after: t))
      request.vehicle.remainingDistanceMeters = .init(Int32(max(0, drive.distance - drive.distance(after: t))))
      request.vehicle.remainingTimeSeconds = .init(Int32(max(0, (drive.duration - t) / configuration.speedup)))
      paths += ["current_route_segment", "remaining_distance_meters", "remaining_time_seconds"]
    }
    if let heading = state.heading { location.heading = .init(Int32(heading)) }
    request.vehicle.lastLocation = location
    if !state.online {
      request.vehicle.vehicleState = .online
      paths.append("vehicle_state")
    }
    request.updateMask.paths = paths
    let sent = ContinuousClock.now
    do {
      let vehicle = try await channel.send(request, token: try fleet.tokens.token(vehicleID: nil))
      let took = (ContinuousClock.now - sent).seconds
      fleet.stats.update {
        $0.reportsSent += 1
        $0.reportLatency.record(took)
      }
      if !state.online {
        state.online = true
        counts.online.add(1, ordering: .relaxed)
      }
      return vehicle
    } catch {
      // A report cut short by the end of the run is no failure of fleetd's.
      guard !Task.isCancelled else { return nil }
      let code = (error as? RPCError).map { "\($0.code)" } ?? "\(type(of: error))"
      fleet.stats.update {
        $0.reportsSent += 1
        $0.reportsFailed += 1
        $0.reportFailures[code, default: 0] += 1
      }
      return nil
    }
  }
}
