import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetProto
import FleetRouting
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// A day of parcel deliveries, played end to end against fleetd as a delivery company would: the
/// provider's backend creates the vans at a depot and the day's DELIVERY tasks (street addresses
/// of the extract, each with a tracking ID and a time at the door), gives each van the tasks of
/// one sector around the depot as stops, and has fleetd order them (`OptimizeStops`, applied);
/// then each van's driver works through its stops on the Driver SDK (`SimulatedCourier`). The day
/// is over when every van has no stop left; the summary is read back from fleetd's tasks.
public struct DeliveryDay: Sendable {
  public struct Configuration: Sendable {
    public var endpoint: FleetEndpoint
    public var providerID: String
    public var vans = 3
    public var tasks = 30
    /// Van IDs are `vanPrefix-1` … `vanPrefix-N`.
    public var vanPrefix = "van"
    /// Where the vans start; by default the street junction nearest the extract's middle.
    public var depot: LatLng?
    /// Time at the door per task, seconds (simulated), drawn uniformly.
    public var taskDuration: ClosedRange<Double> = 60...180
    public var speedup: Double = 1
    public var interval: Duration = .seconds(5)
    public var failureShare = 0.05
    public var seed: UInt64 = 1

    public init(endpoint: FleetEndpoint, providerID: String) {
      self.endpoint = endpoint
      self.providerID = providerID
    }
  }

  /// How the day went, as fleetd's tasks say at its end.
  public struct Summary: Sendable, Hashable {
    public var tasks = 0
    public var closed = 0
    public var succeeded = 0
    public var failed = 0
    public var driveMetres = 0.0
    public var driveSeconds = 0.0
    /// The tracking IDs of the day's parcels, in creation order.
    public var trackingIDs: [String] = []
  }

  typealias DeliveryClient = Maps_Fleetengine_Delivery_V1_DeliveryService.Client<HTTP2ClientTransport.Posix>

  public let configuration: Configuration
  let tokens: ServiceAccountTokenProvider
  let routing: RoutingEngine
  let places: CityPlaces
  let log: @Sendable (String) -> Void

  /// `key` is a server key (or a `deliveryadmin` one): the backend creates vans and tasks.
  public init(
    configuration: Configuration, key: ServiceAccountKey, routing: RoutingEngine,
    log: @escaping @Sendable (String) -> Void
  ) throws {
    self.configuration = configuration
    tokens = try ServiceAccountTokenProvider(key: key)
    self.routing = routing
    places = CityPlaces(routing: routing)
    self.log = log
  }

  var parent: String { "providers/\(configuration.providerID)" }
  var vanIDs: [String] { (1...max(configuration.vans, 1)).map { "\(configuration.vanPrefix)-\($0)" } }

  /// Plans the day, runs the vans until every stop is done, and reads the outcome back.
  /// `started` is given the parcels' tracking IDs once the vans are loaded.
  public func run(started: @Sendable ([String]) -> Void = { _ in }) async throws -> Summary {
    try await configuration.endpoint.withClient { client in
      let deliveries = DeliveryClient(wrapping: client)
      let ordering = Fleetkit_V1_StopOrdering.Client(wrapping: client)
      let day = plan()
      let vans = try await prepareVans(at: day.depot, deliveries)
      try await createTasks(day.tasks, deliveries)
      for (van, tasks) in zip(vanIDs, day.sectors) {
        try await assign(tasks, to: van, after: vans[van]?.left ?? [], deliveries)
        try await optimize(van, ordering)
      }
      log("day \(day.tag): \(day.tasks.count) tasks on \(vanIDs.count) vans from \(format(day.depot))")
      started(day.tasks.map(\.trackingID))
      var summary = Summary()
      summary.trackingIDs = day.tasks.map(\.trackingID)
      try await withThrowingTaskGroup(of: SimulatedCourier.Summary.self) { group in
        for (index, van) in vanIDs.enumerated() {
          var courier = SimulatedCourier.Configuration(
            endpoint: configuration.endpoint, providerID: configuration.providerID, vehicleID: van)
          courier.speedup = configuration.speedup
          courier.interval = configuration.interval
          courier.failureShare = configuration.failureShare
          courier.seed = configuration.seed &+ UInt64(index + 1)
          let driver = SimulatedCourier(configuration: courier, tokens: tokens, routing: routing, log: log)
          let start = vans[van]?.start ?? day.depot
          group.addTask { try await driver.run(from: start) }
        }
        for try await van in group {
          summary.driveMetres += van.driveMetres
          summary.driveSeconds += van.driveSeconds
        }
      }
      try await readOutcomes(day.tasks, deliveries, into: &summary)
      return summary
    }
  }

  // MARK: - The plan

  struct PlannedTask {
    var id: String
    var trackingID: String
    var point: LatLng
    var duration: Double
  }

  struct Plan {
    var tag: String
    var depot: LatLng
    var tasks: [PlannedTask]
    /// The tasks of each van, in creation order.
    var sectors: [[PlannedTask]]
  }

  /// The day's tasks at street junctions, and one sector of them around the depot per van.
  func plan() -> Plan {
    var random = SplitMix64(seed: configuration.seed)
    // IDs unique to this run, so that days can follow each other on the same fleetd.
    let tag = String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
    let depot = configuration.depot ?? middle()
    let span = configuration.taskDuration
    let tasks = (1...max(configuration.tasks, 1)).map { n in
      PlannedTask(
        id: "task-\(tag)-\(n)", trackingID: "parcel-\(tag)-\(n)",
        point: places.end(using: &random),
        duration: (span.lowerBound + random.nextUnit() * (span.upperBound - span.lowerBound)).rounded())
    }
    // Sectors of equal size by bearing from the depot: each van keeps to its part of town.
    let byBearing = tasks.sorted { depot.bearing(to: $0.point) < depot.bearing(to: $1.point) }
    let vans = vanIDs.count
    let sectors = (0..<vans).map { v in
      Array(byBearing[(v * byBearing.count / vans)..<((v + 1) * byBearing.count / vans)])
    }
    return Plan(tag: tag, depot: depot, tasks: tasks, sectors: sectors)
  }

  /// The street junction nearest the middle of the extract's streets.
  func middle() -> LatLng {
    let points = places.points
    let centre = LatLng(
      latitude: points.map(\.latitude).reduce(0, +) / Double(points.count),
      longitude: points.map(\.longitude).reduce(0, +) / Double(points.count))
    return points.min { $0.distance(to: centre) < $1.distance(to: centre) } ?? centre
  }

  // MARK: - The backend's calls

  var options: CallOptions {
    var options = CallOptions.defaults
    options.timeout = .seconds(30)
    return options
  }

  func metadata() throws -> Metadata { ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"] }

  /// A van as the day begins: where it is, and the stops it has left from a day that was
  /// interrupted (they go with this day's).
  struct Van {
    var start: LatLng
    var left: [Maps_Fleetengine_Delivery_V1_VehicleJourneySegment] = []
  }

  /// Creates the vans that do not exist yet at the depot; answers each one as the day begins.
  func prepareVans(at depot: LatLng, _ deliveries: DeliveryClient) async throws -> [String: Van] {
    var vans: [String: Van] = [:]
    for van in vanIDs {
      let name = "\(parent)/deliveryVehicles/\(van)"
      do {
        let existing = try await deliveries.getDeliveryVehicle(
          .with { $0.name = name }, metadata: try metadata(), options: options)
        if !existing.remainingVehicleJourneySegments.isEmpty {
          log(
            "\(van): \(existing.remainingVehicleJourneySegments.count) stops left from an earlier day go with this one")
        }
        let point = existing.lastLocation.location
        vans[van] = Van(
          start: existing.hasLastLocation ? LatLng(latitude: point.latitude, longitude: point.longitude) : depot,
          left: existing.remainingVehicleJourneySegments.map { segment in
            // The stop as written: its place, state and task IDs (their durations are answered only).
            .with {
              $0.stop.plannedLocation = segment.stop.plannedLocation
              $0.stop.state = segment.stop.state
              $0.stop.tasks = segment.stop.tasks.map { info in .with { $0.taskID = info.taskID } }
            }
          })
      } catch let error as RPCError where error.code == .notFound {
        var request = Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest()
        request.parent = parent
        request.deliveryVehicleID = van
        request.deliveryVehicle.type = .auto
        request.deliveryVehicle.lastLocation.location = .with {
          $0.latitude = depot.latitude
          $0.longitude = depot.longitude
        }
        _ = try await deliveries.createDeliveryVehicle(request, metadata: try metadata(), options: options)
        vans[van] = Van(start: depot)
      }
    }
    return vans
  }

  /// BatchCreateTasks, 500 at a time (Fleet Engine's limit).
  func createTasks(_ tasks: [PlannedTask], _ deliveries: DeliveryClient) async throws {
    for start in stride(from: 0, to: tasks.count, by: 500) {
      var batch = Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest()
      batch.parent = parent
      batch.requests = tasks[start..<min(start + 500, tasks.count)].map { planned in
        Maps_Fleetengine_Delivery_V1_CreateTaskRequest.with {
          $0.parent = parent
          $0.taskID = planned.id
          $0.task.type = .delivery
          $0.task.state = .open
          $0.task.trackingID = planned.trackingID
          $0.task.plannedLocation.point = .with {
            $0.latitude = planned.point.latitude
            $0.longitude = planned.point.longitude
          }
          $0.task.taskDuration = .init(seconds: Int64(planned.duration))
        }
      }
      _ = try await deliveries.batchCreateTasks(batch, metadata: try metadata(), options: options)
    }
  }

  /// One stop per task after the stops the van has `left`, in creation order: fleetd assigns the
  /// tasks to the van.
  func assign(
    _ tasks: [PlannedTask], to van: String, after left: [Maps_Fleetengine_Delivery_V1_VehicleJourneySegment],
    _ deliveries: DeliveryClient
  ) async throws {
    var request = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest()
    request.deliveryVehicle.name = "\(parent)/deliveryVehicles/\(van)"
    request.deliveryVehicle.remainingVehicleJourneySegments =
      left
      + tasks.map { task in
        .with {
          $0.stop.state = .new
          $0.stop.plannedLocation.point = .with {
            $0.latitude = task.point.latitude
            $0.longitude = task.point.longitude
          }
          $0.stop.tasks = [.with { $0.taskID = task.id }]
        }
      }
    request.updateMask.paths = ["remaining_vehicle_journey_segments"]
    _ = try await deliveries.updateDeliveryVehicle(request, metadata: try metadata(), options: options)
  }

  /// fleetd orders the van's stops and applies the order.
  func optimize(_ van: String, _ ordering: Fleetkit_V1_StopOrdering.Client<HTTP2ClientTransport.Posix>) async throws {
    let answer = try await ordering.optimizeStops(
      .with {
        $0.name = "\(parent)/deliveryVehicles/\(van)"
        $0.apply = true
      }, metadata: try metadata(), options: options)
    func minutes(_ measures: Fleetkit_V1_StopOrderMeasures) -> String {
      String(format: "%.1f min", Double(measures.driveDuration.seconds) / 60)
    }
    log(
      "\(van): \(answer.remainingVehicleJourneySegments.count) stops ordered: drive \(minutes(answer.optimized)) (in creation order \(minutes(answer.current)))"
    )
  }

  /// The day's tasks as fleetd holds them at the end.
  func readOutcomes(_ tasks: [PlannedTask], _ deliveries: DeliveryClient, into summary: inout Summary) async throws {
    summary.tasks = tasks.count
    for planned in tasks {
      let task = try await deliveries.getTask(
        .with { $0.name = "\(parent)/tasks/\(planned.id)" }, metadata: try metadata(), options: options)
      if task.state == .closed { summary.closed += 1 }
      switch task.taskOutcome {
      case .succeeded: summary.succeeded += 1
      case .failed: summary.failed += 1
      default: break
      }
    }
  }
}
