import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetPositioning
import FleetProto
import FleetSimulator
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Testing

typealias DeliveryClient = Maps_Fleetengine_Delivery_V1_DeliveryService.Client<HTTP2ClientTransport.Posix>

/// The Driver SDK's delivery mode against a real fleetd over gRPC: the reporter's positions, the
/// manager's stop changes and task outcomes under the delivery roles, and `fleet deliver` running a
/// whole day.
@Suite("delivery driver")
struct DeliveryDriverTests {
  let depot = LatLng(latitude: 43.7300, longitude: 7.4200)
  let door = LatLng(latitude: 43.7370, longitude: 7.4250)

  /// Admin calls to the DeliveryService.
  func withDeliveries(_ fleetd: Fleetd, _ body: (DeliveryClient, Metadata) async throws -> Void) async throws {
    let metadata: Metadata = ["authorization": "Bearer \(try fleetd.admin.token())"]
    try await withGRPCClient(
      transport: .http2NIOPosix(
        target: .ipv4(address: "127.0.0.1", port: fleetd.grpcPort), transportSecurity: .plaintext)
    ) { client in try await body(DeliveryClient(wrapping: client), metadata) }
  }

  func createVan(_ id: String, _ deliveries: DeliveryClient, _ metadata: Metadata) async throws {
    _ = try await deliveries.createDeliveryVehicle(
      .with {
        $0.parent = "providers/acme"
        $0.deliveryVehicleID = id
      }, metadata: metadata)
  }

  func createTask(_ id: String, at point: LatLng, _ deliveries: DeliveryClient, _ metadata: Metadata) async throws {
    _ = try await deliveries.createTask(
      .with {
        $0.parent = "providers/acme"
        $0.taskID = id
        $0.task.type = .delivery
        $0.task.state = .open
        $0.task.trackingID = "parcel-\(id)"
        $0.task.plannedLocation.point = .with {
          $0.latitude = point.latitude
          $0.longitude = point.longitude
        }
        $0.task.taskDuration = .init(seconds: 120)
      }, metadata: metadata)
  }

  /// Runs a delivery driver app for `van` with `key`'s tokens while `body` works.
  func driving(
    _ fleetd: Fleetd, van: String, key: ServiceAccountKey, _ body: (DeliveryDriverAPI) async throws -> Void
  ) async throws {
    var context = DriverContext(
      tokenProvider: try ServiceAccountTokenProvider(key: key), providerID: "acme", vehicleID: van,
      endpoint: fleetd.endpoint)
    context.reporting.initialRetryDelay = .milliseconds(50)
    let api = DeliveryDriverAPI(driverContext: context)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await api.run() }
      defer { group.cancelAll() }
      try await body(api)
    }
  }

  /// A trusted driver moves through its stop as Google's Driver SDK does — ENROUTE, ARRIVED, the
  /// outcome, completed — and fleetd follows: the task is assigned, then closed with the
  /// outcome the driver gave; a stop the backend added meanwhile is kept. Its positions arrive too.
  @Test func trustedDriverWorksThroughAStop() async throws {
    try await Fleetd.with { fleetd in
      try await withDeliveries(fleetd) { deliveries, metadata in
        try await createVan("van", deliveries, metadata)
        try await createTask("t1", at: door, deliveries, metadata)
        try await driving(fleetd, van: "van", key: try await fleetd.key(role: .deliveryTrustedDriver)) { api in
          #expect(throws: FleetClientError.self) { try api.vehicleReporter.updateVehicleState(.online) }
          api.vehicleReporter.locationTrackingEnabled = true
          api.vehicleReporter.report(LocationFix(coordinate: depot, time: Date()))
          let manager = api.vehicleManager
          let stop = VehicleStop(plannedLocation: door, tasks: [.init(taskID: "t1")], state: .new)
          #expect(try await manager.setStops([stop]).map(\.state) == [.new])
          let assigned = try await deliveries.getTask(.with { $0.name = "providers/acme/tasks/t1" }, metadata: metadata)
          #expect(assigned.deliveryVehicleID == "van")

          // Completing a stop the driver has not arrived at is refused before anything is sent.
          await #expect(throws: FleetClientError.self) { try await manager.completedStop() }
          #expect(try await manager.enrouteToNextStop().map(\.state) == [.enroute])
          // The backend adds a stop meanwhile: the driver's next change keeps it.
          try await createTask("t2", at: depot, deliveries, metadata)
          _ = try await deliveries.updateDeliveryVehicle(
            Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest.with {
              $0.deliveryVehicle.name = "providers/acme/deliveryVehicles/van"
              $0.deliveryVehicle.remainingVehicleJourneySegments = [(door, "t1", .enroute), (depot, "t2", .new)].map {
                (point, task, state) in
                .with {
                  $0.stop.plannedLocation.point = .with {
                    $0.latitude = point.latitude
                    $0.longitude = point.longitude
                  }
                  $0.stop.tasks = [.with { $0.taskID = task }]
                  $0.stop.state = state
                }
              }
              $0.updateMask.paths = ["remaining_vehicle_journey_segments"]
            }, metadata: metadata)
          let arrived = try await manager.arrivedAtStop()
          #expect(arrived.map(\.state) == [.arrived, .new])
          #expect(arrived.map { $0.tasks.map(\.taskID) } == [["t1"], ["t2"]])
          #expect(arrived.first?.tasks.first?.duration == 120)
          await #expect(throws: FleetClientError.self) { try await manager.setTaskOutcome(.unspecified, taskID: "t1") }
          try await manager.setTaskOutcome(.failed, taskID: "t1", location: door)
          #expect(try await manager.completedStop().map(\.state) == [.new])

          let closed = try await deliveries.getTask(.with { $0.name = "providers/acme/tasks/t1" }, metadata: metadata)
          #expect(closed.state == .closed)
          #expect(closed.taskOutcome == .failed)
          #expect(closed.taskOutcomeLocationSource == .provider)
          #expect(abs(closed.taskOutcomeLocation.point.latitude - door.latitude) < 1e-9)
          try await eventually("the reported position stored") {
            let van = try await deliveries.getDeliveryVehicle(
              .with { $0.name = "providers/acme/deliveryVehicles/van" }, metadata: metadata)
            return van.hasLastLocation && abs(van.lastLocation.location.latitude - depot.latitude) < 1e-6
          }
          #expect(api.vehicleReporter.lastReportedVehicle?.lastLocation != nil)
        }
      }
    }
  }

  /// An untrusted driver's app reports its van's positions, but fleetd refuses its stop changes
  /// and task outcomes (Google's deliveryuntrusteddriver may only update the location), and the
  /// manager says so with PERMISSION_DENIED rather than retrying.
  @Test func untrustedDriverReportsButDoesNotChangeStops() async throws {
    try await Fleetd.with { fleetd in
      try await withDeliveries(fleetd) { deliveries, metadata in
        try await createVan("van", deliveries, metadata)
        try await createTask("t1", at: door, deliveries, metadata)
        try await driving(fleetd, van: "van", key: try await fleetd.key(role: .deliveryUntrustedDriver)) { api in
          api.vehicleReporter.locationTrackingEnabled = true
          api.vehicleReporter.report(LocationFix(coordinate: door, time: Date()))
          try await eventually("the untrusted driver's position stored") {
            let van = try await deliveries.getDeliveryVehicle(
              .with { $0.name = "providers/acme/deliveryVehicles/van" }, metadata: metadata)
            return van.hasLastLocation && abs(van.lastLocation.location.latitude - door.latitude) < 1e-6
          }
          // Over fleetd's location stream, as the rides reporter's, not with unary calls.
          let metrics = try await fleetd.metrics()
          let calls = { (rpc: String) in
            metrics.filter { $0.key.contains("rpc=\"\(rpc)\"") && $0.key.hasPrefix("fleetd_requests_total") }
              .values.reduce(0, +)
          }
          #expect(calls("ReportLocations") >= 1, "\(metrics.keys.filter { $0.hasPrefix("fleetd_requests_total") })")
          #expect(calls("UpdateDeliveryVehicle") == 0)
          let stop = VehicleStop(plannedLocation: door, tasks: [.init(taskID: "t1")], state: .new)
          do {
            try await api.vehicleManager.setStops([stop])
            Issue.record("an untrusted driver changed its stops")
          } catch {
            #expect(FleetClientError(error).code == .permissionDenied, "\(error)")
          }
          do {
            try await api.vehicleManager.setTaskOutcome(.succeeded, taskID: "t1")
            Issue.record("an untrusted driver set a task's outcome")
          } catch {
            #expect(FleetClientError(error).code == .permissionDenied, "\(error)")
          }
        }
      }
    }
  }

  /// On the location stream a delivery vehicle reports its position and navigation only: a
  /// report that would change its stops is refused (UpdateDeliveryVehicle is for that), and so is
  /// a delivery vehicle under a rides vehicle's name. The stream goes on after each.
  @Test func theLocationStreamTakesADeliveryVehiclesPositionOnly() async throws {
    try await Fleetd.with { fleetd in
      try await withDeliveries(fleetd) { deliveries, metadata in
        try await createVan("van", deliveries, metadata)
        let token = try fleetd.admin.token()
        try await withGRPCClient(
          transport: .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: fleetd.grpcPort), transportSecurity: .plaintext)
        ) { client in
          let channel = UpdateChannel(client: client, timeout: .seconds(10))
          try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await channel.run() }
            defer { group.cancelAll() }
            var stops = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest()
            stops.deliveryVehicle.name = "providers/acme/deliveryVehicles/van"
            stops.updateMask.paths = ["remaining_vehicle_journey_segments"]
            let refusedStops = await #expect(throws: RPCError.self) { try await channel.send(stops, token: token) }
            #expect(refusedStops?.code == .invalidArgument, "\(String(describing: refusedStops))")
            var position = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest()
            position.deliveryVehicle.name = "providers/acme/deliveryVehicles/van"
            position.deliveryVehicle.lastLocation.location = .with {
              $0.latitude = door.latitude
              $0.longitude = door.longitude
            }
            position.updateMask.paths = ["last_location"]
            let stored = try await channel.send(position, token: token)
            #expect(stored.name == "providers/acme/deliveryVehicles/van")
            #expect(abs(stored.lastLocation.location.latitude - door.latitude) < 1e-9)
            var unnamed = position
            unnamed.deliveryVehicle.name = "providers/acme/vehicles/van"
            let refusedName = await #expect(throws: RPCError.self) { try await channel.send(unnamed, token: token) }
            #expect(refusedName?.code == .invalidArgument, "\(String(describing: refusedName))")
          }
        }
      }
    }
  }

  /// `fleet deliver` as a process plays a day: vans created at the depot, the tasks given out
  /// and ordered by fleetd, every stop driven and completed on the Driver SDK. It exits 0 only
  /// when fleetd has every task closed with an outcome; each outcome was recorded where the
  /// parcel was to go, the vans have no stop left, and their apps reported their positions.
  @Test func fleetDeliverCompletesADayOfTasks() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let directory = NSTemporaryDirectory() + "fleetkit-deliver-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: directory) }
      let keyFile = directory + "/server.json"
      try await fleetd.key(role: .server).encoded().write(to: URL(fileURLWithPath: keyFile))
      let outcome = try await ChildProcess.runFleet([
        "deliver", "--grpc-port", "\(fleetd.grpcPort)", "--provider", "acme", "--key", keyFile, "--graph",
        fleetd.graph!, "--vehicles", "2", "--tasks", "8", "--speedup", "100", "--failure-share", "0.25",
        "--depot", "43.7300,7.4200",
      ])
      #expect(outcome.status == 0, "\(outcome.output)\n\(outcome.errors)")
      let lines = outcome.output.split(separator: "\n").map(String.init)
      #expect(lines.last?.hasPrefix("day done: 8/8 tasks closed") == true, "\(lines)")
      #expect(lines.filter { $0.contains(": ARRIVED at ") }.count == 8, "\(lines)")
      #expect(lines.filter { $0.contains("stops ordered") }.count == 2, "\(lines)")

      try await withDeliveries(fleetd) { deliveries, metadata in
        var tasks: [Maps_Fleetengine_Delivery_V1_Task] = []
        var page = ""
        repeat {
          let answer = try await deliveries.listTasks(
            .with {
              $0.parent = "providers/acme"
              $0.pageToken = page
            }, metadata: metadata)
          tasks += answer.tasks
          page = answer.nextPageToken
        } while !page.isEmpty
        #expect(tasks.count == 8)
        for task in tasks {
          #expect(task.state == .closed, "\(task.name)")
          #expect([.succeeded, .failed].contains(task.taskOutcome), "\(task.name)")
          #expect(["van-1", "van-2"].contains(task.deliveryVehicleID), "\(task.name)")
          let planned = LatLng(
            latitude: task.plannedLocation.point.latitude, longitude: task.plannedLocation.point.longitude)
          let done = LatLng(
            latitude: task.taskOutcomeLocation.point.latitude, longitude: task.taskOutcomeLocation.point.longitude)
          #expect(planned.distance(to: done) < 60, "\(task.name): done \(Int(planned.distance(to: done))) m away")
        }
        for van in ["van-1", "van-2"] {
          let vehicle = try await deliveries.getDeliveryVehicle(
            .with { $0.name = "providers/acme/deliveryVehicles/\(van)" }, metadata: metadata)
          #expect(vehicle.remainingVehicleJourneySegments.isEmpty)
          // The van's own app reported where it was (the backend's position at creation has
          // no sensor).
          #expect(vehicle.lastLocation.locationSensor == .gps, "\(van): \(vehicle.lastLocation)")
        }
      }
    }
  }
}
