import FleetCore
import FleetDriver
import FleetGeometry
import FleetPositioning
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import Synchronization
import Testing

@Suite("Vehicle reporter against fleetd")
struct VehicleReporterTests {
  func context(
    _ fleetd: Fleetd, vehicle: String, tokens: any AuthorizationTokenProvider,
    reporting: ReportingConfiguration = .init()
  )
    -> DriverContext
  {
    DriverContext(
      tokenProvider: tokens, providerID: "acme", vehicleID: vehicle, endpoint: fleetd.endpoint, reporting: reporting)
  }

  @Test func sendsTheNewestPositionEveryIntervalAndTellsListeners() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v1")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      let api = RidesharingDriverAPI(driverContext: context(fleetd, vehicle: "v1", tokens: tokens), clock: clock)
      let reporter = api.vehicleReporter
      let listener = RecordingListener()
      reporter.addListener(listener)
      reporter.locationUpdateInterval = .seconds(20)
      try await driving(api) {
        reporter.report(fix(43.73, 7.42, at: 0))
        reporter.locationTrackingEnabled = true
        // Tracking on: the first update goes at once.
        var events = try await listener.waitFor(1)
        #expect(events[0].update.updateMask == ["last_location"])
        #expect(events[0].update.vehicle?.lastLocation?.latitude == 43.73)
        // Newer fixes replace older ones until the next period: only the newest is sent.
        reporter.report(fix(43.731, 7.42, at: 5))
        reporter.report(fix(43.732, 7.42, at: 10))
        reporter.report(fix(43.7315, 7.42, at: 8))  // older than the newest: ignored
        clock.advance(by: .seconds(19))
        try await Task.sleep(for: .milliseconds(200))
        #expect(listener.all.count == 1, "nothing before the interval has passed")
        clock.advance(by: .seconds(1))
        events = try await listener.waitFor(2)
        #expect(events[1].update.location?.coordinate.latitude == 43.732)
        #expect(events[1].update.pastLocations.isEmpty)
        // Without a new fix, the next period repeats the newest position (the vehicle is alive).
        clock.advance(by: .seconds(20))
        events = try await listener.waitFor(3)
        #expect(events[2].update.location?.coordinate.latitude == 43.732)
        #expect(events.allSatisfy { $0.error == nil })
        #expect(try await fleetd.vehicle("v1").lastLocation.location.latitude == 43.732)
      }
    }
  }

  @Test(arguments: [(1, 5), (5, 5), (10, 10), (60, 60), (3600, 60)])
  func intervalIsClampedToFiveToSixtySeconds(requested: Int, expected: Int) async throws {
    let tokens = StaticTokens()
    let api = RidesharingDriverAPI(
      driverContext: DriverContext(
        tokenProvider: tokens, providerID: "acme", vehicleID: "v", endpoint: FleetEndpoint(host: "127.0.0.1", port: 1)))
    #expect(api.vehicleReporter.locationUpdateInterval == .seconds(10), "default")
    api.vehicleReporter.locationUpdateInterval = .seconds(requested)
    #expect(api.vehicleReporter.locationUpdateInterval == .seconds(expected))
  }

  @Test func goingOnlineNeedsTrackingAndTurningTrackingOffSendsAFinalOffline() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v2")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      let api = RidesharingDriverAPI(driverContext: context(fleetd, vehicle: "v2", tokens: tokens), clock: clock)
      let reporter = api.vehicleReporter
      let listener = RecordingListener()
      reporter.addListener(listener)
      let refusal = #expect(throws: FleetClientError.self) { try reporter.updateVehicleState(.online) }
      #expect(refusal?.code == .failedPrecondition)
      #expect(refusal?.message.contains("tracking") == true)
      try await driving(api) {
        reporter.report(fix(43.74, 7.43, at: 0))
        reporter.locationTrackingEnabled = true
        try reporter.updateVehicleState(.online)
        // The fix goes out as tracking starts: with the state change when that comes first, else
        // just before it (the reporter's task may run between the two calls).
        var events = try await listener.waitFor(1)
        if !events[0].update.updateMask.contains("vehicle_state") { events = try await listener.waitFor(2) }
        let online = events.count
        #expect(events[0].update.updateMask.contains("last_location"))
        #expect(events[online - 1].update.updateMask.contains("vehicle_state"))
        #expect(events[online - 1].update.vehicleState == .online)
        #expect(try await fleetd.vehicle("v2").vehicleState == .online)

        reporter.locationTrackingEnabled = false
        let final = try await listener.waitFor(online + 1)[online]
        #expect(final.update.vehicleState == .offline)
        #expect(final.update.updateMask == ["vehicle_state"], "the position was already acknowledged")
        #expect(try await fleetd.vehicle("v2").vehicleState == .offline)
        // Tracking off: no more updates, however long it stays off.
        clock.advance(by: .seconds(600))
        try await Task.sleep(for: .milliseconds(200))
        #expect(listener.all.count == online + 1)
      }
    }
  }

  @Test func aTokenForAnotherVehicleIsPermissionDeniedAndListenersAreTold() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("mine")
      try await fleetd.createVehicle("theirs")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver), vehicleID: "theirs")
      let api = RidesharingDriverAPI(
        driverContext: context(fleetd, vehicle: "mine", tokens: tokens), clock: ManualClock())
      let listener = RecordingListener()
      api.vehicleReporter.addListener(listener)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.73, 7.42, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        let event = try await listener.waitFor(1)[0]
        #expect(event.error?.code == .permissionDenied)
        #expect(event.update.vehicle == nil)
      }
      #expect(try await fleetd.vehicle("mine").hasLastLocation == false)
    }
  }

  @Test func listenersAreHeldWeaklyAndCanBeRemoved() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v3")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      let api = RidesharingDriverAPI(driverContext: context(fleetd, vehicle: "v3", tokens: tokens), clock: clock)
      let kept = RecordingListener()
      let removed = RecordingListener()
      var dropped: RecordingListener? = RecordingListener()
      weak let droppedRef = dropped
      api.vehicleReporter.addListener(kept)
      api.vehicleReporter.addListener(removed)
      api.vehicleReporter.addListener(dropped!)
      dropped = nil
      #expect(droppedRef == nil, "the reporter does not keep a listener alive")
      api.vehicleReporter.removeListener(removed)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.73, 7.42, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        try await kept.waitFor(1)
      }
      #expect(removed.all.isEmpty)
    }
  }

  @Test func anUnauthenticatedAnswerGetsAFreshToken() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v5")
      let tokens = FirstTokenExpired(good: SigningTokenProvider(signer: try await fleetd.signer(role: .driver)))
      let api = RidesharingDriverAPI(
        driverContext: context(fleetd, vehicle: "v5", tokens: tokens), clock: ManualClock())
      let listener = RecordingListener()
      api.vehicleReporter.addListener(listener)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.73, 7.42, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        let events = try await listener.waitFor(2)
        #expect(events[0].error?.code == .unauthenticated, "the stale token is refused")
        #expect(events[1].error == nil, "retried at once with a fresh token")
        #expect(tokens.invalidations.count == 1)
      }
    }
  }

  @Test func routeProgressGoesWithTheLocationWhileNavigatingToTheNextWaypoint() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v6")
      try await fleetd.vehicles { client, metadata in
        var online = Maps_Fleetengine_V1_UpdateVehicleRequest()
        online.name = "providers/acme/vehicles/v6"
        online.vehicle.vehicleState = .online
        online.updateMask.paths = ["vehicle_state"]
        _ = try await client.updateVehicle(online, metadata: metadata)
      }
      try await fleetd.createTrip("t6", vehicle: "v6", pickup: LatLng(latitude: 43.7350, longitude: 7.4230))
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      let navigation = FixedNavigation()
      var context = context(fleetd, vehicle: "v6", tokens: tokens)
      context.navigation = navigation
      let api = RidesharingDriverAPI(driverContext: context, clock: clock)
      let listener = RecordingListener()
      api.vehicleReporter.addListener(listener)
      try await driving(api) {
        api.vehicleReporter.report(fix(43.7300, 7.4200, at: 0))
        api.vehicleReporter.locationTrackingEnabled = true
        // The first answer tells the reporter the vehicle's waypoints.
        var events = try await listener.waitFor(1)
        #expect(events[0].update.vehicle?.waypoints.first?.tripID == "t6")
        // Navigating elsewhere: no route progress.
        navigation.progress.withLock {
          $0 = NavigationProgress(
            destination: LatLng(latitude: 43.7400, longitude: 7.4300), path: [], remainingDistanceMeters: 900,
            remainingTime: .seconds(120))
        }
        clock.advance(by: .seconds(10))
        events = try await listener.waitFor(2)
        #expect(events[1].update.route == nil)
        #expect(events[1].update.updateMask == ["last_location"])
        // Navigating to the pickup: the route, its length and time go along.
        let path = [LatLng(latitude: 43.7300, longitude: 7.4200), LatLng(latitude: 43.7350, longitude: 7.4230)]
        navigation.progress.withLock {
          $0 = NavigationProgress(
            destination: LatLng(latitude: 43.73502, longitude: 7.42301), path: path, remainingDistanceMeters: 640,
            remainingTime: .seconds(95))
        }
        clock.advance(by: .seconds(10))
        events = try await listener.waitFor(3)
        #expect(
          events[2].update.updateMask == [
            "last_location", "current_route_segment", "remaining_distance_meters", "remaining_time_seconds",
          ])
        #expect(events[2].error == nil, "\(String(describing: events[2].error))")
        let stored = try await fleetd.vehicle("v6")
        #expect(stored.remainingDistanceMeters.value == 640)
        #expect(Polyline.decode(stored.currentRouteSegment) == path)
      }
    }
  }

  /// fleetd goes away in the middle of a drive and comes back on the same store: the fixes
  /// it missed arrive as past locations, in order, and nothing it acknowledged is lost.
  @Test func anOutageIsBridgedByTheBacklog() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createVehicle("v4")
      let tokens = SigningTokenProvider(signer: try await fleetd.signer(role: .driver))
      let clock = ManualClock()
      var reporting = ReportingConfiguration()
      // Generous: on a loaded machine the first call (connecting) can take seconds. Calls
      // during the outage fail at once (connection refused), not by this deadline.
      reporting.callTimeout = .seconds(10)
      let backlogFile = FileManager.default.temporaryDirectory.appendingPathComponent(
        "backlog-\(UUID().uuidString).json")
      reporting.backlogFile = backlogFile
      defer { try? FileManager.default.removeItem(at: backlogFile) }
      let api = RidesharingDriverAPI(
        driverContext: context(fleetd, vehicle: "v4", tokens: tokens, reporting: reporting), clock: clock)
      let reporter = api.vehicleReporter
      let listener = RecordingListener()
      reporter.addListener(listener)
      // A drive north, one fix per 10 s period.
      let drive = (0..<12).map { fix(43.7300 + Double($0) * 0.0005, 7.4200, at: Double($0) * 10) }
      try await driving(api) {
        reporter.report(drive[0])
        reporter.locationTrackingEnabled = true
        try await listener.waitFor(1)
        for i in 1...3 {
          reporter.report(drive[i])
          clock.advance(by: .seconds(10))
          try await listener.waitFor(1 + i)
        }
        let acknowledgedBefore = listener.all.compactMap { $0.error == nil ? $0.update.location : nil }
        #expect(
          acknowledgedBefore.map(\.time) == drive[0...3].map(\.time),
          "events: \(listener.all.map { "\($0.update.location?.time as Any) \($0.error as Any)" })")

        try await fleetd.stop()
        // Four periods without fleetd: each update fails and its fix joins the backlog.
        var failures = 0
        for i in 4...7 {
          reporter.report(drive[i])
          clock.advance(by: .seconds(60))  // past the period and any backoff
          let events = try await listener.waitFor(listener.all.count + 1)
          let last = events.last!
          #expect(last.error?.isTransient == true, "\(String(describing: last.error))")
          failures += 1
        }
        #expect(failures == 4)
        #expect(reporter.backlogCount >= 3)
        #expect(FileManager.default.fileExists(atPath: backlogFile.path), "the backlog is on disk")

        try await fleetd.start()
        // Acknowledged before the outage and durable: fleetd still has it after the restart.
        #expect(try await fleetd.vehicle("v4").lastLocation.location.latitude == drive[3].coordinate.latitude)
        reporter.report(drive[8])
        let countBefore = listener.all.count
        var delivered: RecordingListener.Event?
        // The connection comes back in real time (gRPC's reconnect backoff): keep the
        // reporter's clock moving until an update gets through.
        let giveUp = ContinuousClock.now + .seconds(30)
        while delivered == nil, ContinuousClock.now < giveUp {
          clock.advance(by: .seconds(60))
          let events = try await listener.waitFor(listener.all.count + 1)
          delivered = events[countBefore...].first { $0.error == nil }
          if delivered == nil { try await Task.sleep(for: .milliseconds(250)) }
        }
        let recovery = try #require(delivered, "\(listener.all[countBefore...].map { String(describing: $0.error) })")
        // The missed fixes arrive in time order as past locations, the newest as the location.
        let past = recovery.update.pastLocations.map(\.time)
        #expect(past == past.sorted())
        #expect(Set(past) == Set(drive[4...7].map(\.time)))
        #expect(recovery.update.location?.time == drive[8].time)
        #expect(recovery.update.updateMask == ["last_location", "past_locations"])
        #expect(reporter.backlogCount == 0)
        #expect(!FileManager.default.fileExists(atPath: backlogFile.path))
        let stored = try await fleetd.vehicle("v4").lastLocation
        #expect(stored.location.latitude == drive[8].coordinate.latitude)
        // Never stale over new: an older fix reported now is ignored.
        reporter.report(drive[2])
        clock.advance(by: .seconds(10))
        let after = try await listener.waitFor(listener.all.count + 1).last!
        #expect(after.update.location?.time == drive[8].time)
      }
    }
  }
}

/// Hands out a token the server refuses until told it was refused.
final class FirstTokenExpired: AuthorizationTokenProvider {
  let good: SigningTokenProvider
  let refused = Mutex(false)
  let invalidations = Counter()
  init(good: SigningTokenProvider) { self.good = good }

  func token(for context: AuthorizationContext) async throws -> String {
    refused.withLock { $0 } ? try await good.token(for: context) : "expired.token.value"
  }

  func invalidateToken(for context: AuthorizationContext) async {
    invalidations.increment()
    refused.withLock { $0 = true }
  }
}

/// Navigation whose progress the test sets.
final class FixedNavigation: NavigationSource {
  let progress = Mutex<NavigationProgress?>(nil)
  func currentProgress() async -> NavigationProgress? { progress.withLock { $0 } }
}

/// A token provider for tests that never reach a server.
struct StaticTokens: AuthorizationTokenProvider {
  func token(for context: AuthorizationContext) async throws -> String { "unused" }
}
