import FleetAuth
import FleetConsumer
import FleetCore
import FleetGeometry
import FleetRouting
import FleetSimulator
import FleetTestSupport
import Foundation
import GRPCCore
import Testing

/// The Consumer SDK against a real fleetd on loopback, with a driver simulated through the
/// Driver SDK on the Monaco graph.
@Suite @MainActor struct TripModelIntegrationTests {
  // A short ride in Monaco: about a minute's drive to the pickup, one stop, the drop-off.
  static let start = LatLng(latitude: 43.7315, longitude: 7.4210)
  static let pickup = LatLng(latitude: 43.7330, longitude: 7.4250)
  static let stop = LatLng(latitude: 43.7345, longitude: 7.4230)
  static let dropoff = LatLng(latitude: 43.7360, longitude: 7.4230)

  /// A driver for vehicle `cab` at `start`. Speedup 3 keeps the reported speeds plausible to
  /// fleetd (under 50 m/s).
  func driver(_ fleetd: Fleetd) async throws -> SimulatedDriver {
    var configuration = SimulatedDriver.Configuration(endpoint: fleetd.endpoint, providerID: "acme", vehicleID: "cab")
    configuration.speedup = 3
    configuration.trips = 1
    configuration.start = Self.start
    configuration.pickupDwell = 3
    configuration.stopDwell = 3
    return try SimulatedDriver(
      configuration: configuration, key: try await fleetd.key(role: .server),
      routing: try await sharedRoutingEngine(graph: try await monacoGraph())
    ) { _ in }
  }

  func services(_ fleetd: Fleetd, transport: ConsumerConfiguration.Transport) async throws -> ConsumerServices {
    var configuration = ConsumerConfiguration()
    configuration.transport = transport
    configuration.pollingInterval = .milliseconds(300)
    configuration.retryBackoff = RetryBackoff(initial: .milliseconds(100), maximum: .seconds(1))
    return ConsumerServices(
      providerID: "acme", endpoint: fleetd.endpoint,
      tokenProvider: try ServiceAccountTokenProvider(key: try await fleetd.key(role: .consumer)),
      configuration: configuration)
  }

  /// Runs `body` while the SDK's services and the driver run; cancels both afterwards.
  func running(_ services: ConsumerServices, _ driver: SimulatedDriver?, _ body: @MainActor () async throws -> Void)
    async throws
  {
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await services.run() }
      if let driver { group.addTask { try await driver.run() } }
      do {
        try await body()
      } catch {
        group.cancelAll()
        throw error
      }
      group.cancelAll()
      try? await group.waitForAll()
    }
  }

  @Test(
    "a whole trip: every callback, in the documented order, only on change",
    arguments: [
      ConsumerConfiguration.Transport.push, .polling,
    ])
  func wholeTrip(transport: ConsumerConfiguration.Transport) async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let services = try await services(fleetd, transport: transport)
      let driver = try await driver(fleetd)
      try await fleetd.createTrip("ride", vehicle: nil, pickup: Self.pickup, dropoff: Self.dropoff, stops: [Self.stop])
      let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/ride")
      let recorder = RecordingSubscriber()
      model.register(recorder)
      let events = model.updates()
      let streamed = Task {
        var trips: [(TripStatus, TripPropertyFields)] = []
        for await event in events {
          if case .trip(let trip, let fields) = event { trips.append((trip.status, fields)) }
        }
        return trips
      }
      try await running(services, driver) {
        try await eventually("NEW seen") { recorder.statuses == [.new] }
        try await eventually("the driver online") { (try? await fleetd.vehicle("cab").vehicleState) == .online }
        try await fleetd.updateTrip("ride", vehicle: "cab")
        try await eventually("COMPLETE seen", timeout: .seconds(180)) { recorder.statuses.last == .complete }
        try await eventually("the model inactive") { model.modelState == .inactive }
      }

      let calls = recorder.calls
      let trips = recorder.trips
      #expect(recorder.errors.isEmpty, "no errors: \(recorder.errors)")
      #expect(
        recorder.statuses == [
          .new, .enrouteToPickup, .arrivedAtPickup, .enrouteToIntermediateDestination,
          .arrivedAtIntermediateDestination, .enrouteToDropoff, .complete,
        ])
      #expect(calls.first?.name == "modelState" && calls.first?.value == "active")
      #expect(calls.last?.name == "modelState" && calls.last?.value == "inactive")

      // Each delivery: didUpdateTrip, then exactly the changed fields' callbacks in order.
      var deliveries: [[RecordingSubscriber.Call]] = []
      for call in calls where call.name != "modelState" {
        if call.name == "trip" { deliveries.append([call]) } else { deliveries[deliveries.count - 1].append(call) }
      }
      #expect(deliveries.count == trips.count)
      for (delivery, (_, fields)) in zip(deliveries, trips) {
        let expected = zip(RecordingSubscriber.fieldCallbacks, TripPropertyFields.ordered).filter {
          fields.contains($0.1)
        }
        .map(\.0)
        #expect(delivery.dropFirst().map(\.name) == expected)
      }
      // Only on change: no callback repeats the value of the one before it.
      var last: [String: String] = [:]
      for call in calls where call.name != "trip" && call.name != "modelState" {
        #expect(last[call.name] != call.value, "\(call.name) repeated \(call.value)")
        last[call.name] = call.value
      }
      // Every kind of trip callback happened at least once.
      let seen = Set(calls.map(\.name))
      for name in RecordingSubscriber.fieldCallbacks { #expect(seen.contains(name), "never called: \(name)") }
      // The vehicle came closer: the remaining distance to the pickup fell while driving to it.
      let distances = calls.filter { $0.name == "activeRouteRemainingDistance" }.compactMap { Double($0.value) }
      #expect(distances.count >= 3)
      // The AsyncSequence saw the same updates, and finished with the trip.
      let sequence = await streamed.value
      #expect(sequence.map(\.0) == trips.map(\.0.status))
      #expect(sequence.map(\.1) == trips.map(\.1))
    }
  }

  @Test("fleetd restarted mid-trip: the model recovers by itself, with nothing to report")
  func recoversFromRestart() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      let services = try await services(fleetd, transport: .automatic)
      let driver = try await driver(fleetd)
      let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/ride")
      let recorder = RecordingSubscriber()
      try await running(services, driver) {
        try await eventually("the driver online") { (try? await fleetd.vehicle("cab").vehicleState) == .online }
        try await fleetd.createTrip("ride", vehicle: "cab", pickup: Self.pickup, dropoff: Self.dropoff)
        model.register(recorder)
        try await eventually("on its way") { recorder.statuses.contains(.enrouteToPickup) }
        let before = recorder.calls.count
        try await fleetd.stop()
        try await Task.sleep(for: .seconds(2))
        try await fleetd.start()
        try await eventually("COMPLETE after the restart", timeout: .seconds(180)) {
          recorder.statuses.last == .complete
        }
        #expect(recorder.calls.count > before + 5)
      }
      #expect(recorder.errors.isEmpty, "server errors are recovered, not reported: \(recorder.errors)")
      #expect(recorder.statuses.contains(.arrivedAtPickup))
    }
  }

  /// Signs consumer tokens for one fixed trip, whatever it is asked for.
  struct OtherTripTokens: AuthorizationTokenProvider {
    let signer: TokenSigner
    let fetches = Counter()
    func token(for context: AuthorizationContext) async throws -> String {
      fetches.increment()
      return try signer.token(tripID: "another-trip")
    }
  }

  @Test("a token for another trip: PERMISSION_DENIED reported, retried until tracking stops")
  func permissionDenied() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createTrip("ride", vehicle: nil, pickup: Self.pickup)
      let tokens = OtherTripTokens(signer: try await fleetd.signer(role: .consumer))
      var configuration = ConsumerConfiguration()
      configuration.retryBackoff = RetryBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))
      let services = ConsumerServices(
        providerID: "acme", endpoint: fleetd.endpoint, tokenProvider: tokens, configuration: configuration)
      let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/ride")
      let recorder = RecordingSubscriber()
      model.register(recorder)
      try await running(services, nil) {
        try await eventually("three reports") { recorder.errors.count >= 3 }
        model.stopTracking()
        try await eventually("inactive") { model.modelState == .inactive }
        let reported = recorder.errors.count
        let fetched = tokens.fetches.count
        try await Task.sleep(for: .seconds(1))
        #expect(recorder.errors.count == reported, "no retries after stopTracking")
        #expect(tokens.fetches.count == fetched)
      }
      #expect(recorder.errors.allSatisfy { $0.code == .permissionDenied })
      #expect(recorder.statuses.isEmpty)
    }
  }

  @Test("unregistering the last subscriber stops the updates and the requests")
  func unregisterStops() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("cab", at: Self.start)
      try await fleetd.createTrip("ride", vehicle: "cab", pickup: Self.pickup)
      let signer = try await fleetd.signer(role: .consumer)
      let tokens = CountingTokens(signer: signer)
      var configuration = ConsumerConfiguration()
      configuration.transport = .polling
      configuration.pollingInterval = .milliseconds(100)
      let services = ConsumerServices(
        providerID: "acme", endpoint: fleetd.endpoint, tokenProvider: tokens, configuration: configuration)
      let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/ride")
      let recorder = RecordingSubscriber()
      let other = RecordingSubscriber()
      model.register(recorder)
      model.register(other)
      try await running(services, nil) {
        try await eventually("NEW") { recorder.statuses == [.new] }
        model.unregister(recorder)
        try await fleetd.updateTrip("ride", status: .enrouteToPickup)
        try await eventually("the other subscriber still hears") { other.statuses.last == .enrouteToPickup }
        #expect(recorder.statuses == [.new], "an unregistered subscriber hears nothing more")
        model.unregister(other)
        try await eventually("inactive") { model.modelState == .inactive }
        let fetched = tokens.fetches.count
        try await fleetd.updateTrip("ride", status: .arrivedAtPickup)
        try await Task.sleep(for: .seconds(1))
        #expect(tokens.fetches.count == fetched, "no more requests once nobody listens")
        #expect(other.statuses.last == .enrouteToPickup)
        // Registering again resumes.
        model.register(other)
        try await eventually("resumed") { other.statuses.last == .arrivedAtPickup }
      }
    }
  }

  struct CountingTokens: AuthorizationTokenProvider {
    let signer: TokenSigner
    let fetches = Counter()
    func token(for context: AuthorizationContext) async throws -> String {
      fetches.increment()
      return try signer.token(tripID: context.id)
    }
  }
}
