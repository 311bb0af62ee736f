import FleetAuth
import FleetConsumer
import FleetCore
import FleetGeometry
import FleetRideStatus
import FleetRideStatusClient
import FleetTestSupport
import Foundation
import Synchronization
import Testing

/// Consumer tokens for the trip asked, signed with the test fleetd's consumer key (what a rider
/// app's backend does).
struct SignedTripTokens: AuthorizationTokenProvider {
  let signer: TokenSigner
  func token(for context: AuthorizationContext) async throws -> String { try signer.token(tripID: context.id) }
}

/// The updater on fleetd's real endpoints: polls over `:rideStatus`, pushes over
/// `:watchRideStatus`, a trip driven from booking to drop-off, fleetd stopped mid-ride.
@Suite struct RideStatusClientTests {
  let start = LatLng(latitude: 43.7315, longitude: 7.4210)
  let pickupPoint = LatLng(latitude: 43.7330, longitude: 7.4250)
  let dropoffPoint = LatLng(latitude: 43.7360, longitude: 7.4230)

  func source(_ fleetd: Fleetd, signer: TokenSigner) -> FleetdRideStatusSource {
    var configuration = FleetdRideStatusSource.Configuration(baseURL: fleetd.httpURL, providerID: "acme")
    // No test here is about a slow answer: a debug fleetd among the whole suite's processes on
    // two slow cores can take seconds to answer, and a 2-s limit failed them (deadlineExceeded).
    configuration.requestTimeout = .seconds(10)
    configuration.reconnectBackoff = RetryBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))
    return FleetdRideStatusSource(configuration: configuration, tokenProvider: SignedTripTokens(signer: signer))
  }

  /// Phases with repeats collapsed: an ETA change sends the same phase again.
  func collapsed(_ phases: [RidePhase]) -> [RidePhase] {
    phases.reduce(into: []) { result, phase in
      if result.last != phase { result.append(phase) }
    }
  }

  @Test func aTripDrivenEndToEndStreamsValidPhasesFromConfirmedToCompleted() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { fleetd in
      try await fleetd.createVehicle("v1", at: start)
      try await fleetd.createTrip("t1", vehicle: "v1", pickup: pickupPoint, dropoff: dropoffPoint)
      try await fleetd.updateTrip("t1", status: .enrouteToPickup)
      // An hour between polls: every change after the first must come through the event stream.
      let updater = RideStatusUpdater(
        source: source(fleetd, signer: try await fleetd.signer(role: .consumer)),
        configuration: configuration(interval: .seconds(3600)))
      let receiver = RecordingReceiver()
      try await running(updater) {
        try updater.startSendingUpdates(rideIdentifier: "t1", observer: receiver)
        try await eventually("confirmed") { !receiver.statuses.isEmpty }
        let confirmed = try #require(receiver.statuses.first)
        #expect([.confirmed, .approachingPickup].contains(confirmed.phase))
        // fleetd routed the vehicle to the pickup: a few minutes at most in Monaco.
        let eta = try #require(confirmed.estimatedPickupDate)
        #expect(eta > Date() - 5 && eta < Date() + 600)
        #expect(confirmed.vehicle?.location != nil)

        try await fleetd.updateTrip("t1", status: .arrivedAtPickup)
        try await eventually("pickup") { receiver.phases.last == .pickup }
        try await fleetd.updateTrip("t1", status: .enrouteToDropoff)
        try await eventually("ongoing") { receiver.phases.last == .ongoing }
        try await fleetd.updateTrip("t1", status: .complete)
        try await eventually("the end") { receiver.stopReasons == [.rideEnded] }
      }
      let phases = collapsed(receiver.phases)
      #expect(phases.suffix(3) == [.pickup, .ongoing, .completed])
      #expect(phases.dropLast(3).allSatisfy { [.confirmed, .approachingPickup].contains($0) })
      #expect(receiver.statuses.last?.completionStatus?.outcome == .completed)
      let validator = RideStatusValidator(rideIdentifier: "t1")
      for status in receiver.statuses { #expect(validator.violations(of: status).isEmpty) }
    }
  }

  @Test func fleetdStoppedMidRideYieldsTheCachedStatusAndUpdatesResumeWhenItIsBack() async throws {
    let fleetd = Fleetd(graph: try await monacoGraph())
    try await fleetd.start()
    try await fleetd.createVehicle("v1", at: start)
    try await fleetd.createTrip("t1", vehicle: "v1", pickup: pickupPoint, dropoff: dropoffPoint)
    try await fleetd.updateTrip("t1", status: .enrouteToDropoff)
    let updater = RideStatusUpdater(
      source: source(fleetd, signer: try await fleetd.signer(role: .consumer)),
      configuration: configuration(interval: .milliseconds(100), deadline: .seconds(1), failures: 1000))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "t1", observer: receiver)
      try await eventually("ongoing") { receiver.phases == [.ongoing] }
      let ongoing = try #require(receiver.statuses.first)

      try await fleetd.stop()
      // Each failed poll repeats the last valid status: never an error, never silence.
      try await eventually("cached repeats") { receiver.statuses.count >= 4 }
      #expect(receiver.statuses.allSatisfy { $0 == ongoing })
      #expect(receiver.stopReasons.isEmpty)
      #expect(updater.isSending)

      try await fleetd.start()
      try await fleetd.updateTrip("t1", status: .complete)
      try await eventually("completed after the outage") { receiver.stopReasons == [.rideEnded] }
      #expect(receiver.phases.last == .completed)
    }
    try await fleetd.stop()
  }

  @Test func anOutageLongerThanTheFailureLimitStopsTheUpdatesAndSaysWhy() async throws {
    let fleetd = Fleetd()
    try await fleetd.start()
    try await fleetd.createTrip("t1", vehicle: nil, pickup: pickupPoint, dropoff: dropoffPoint)
    // Every answer (polled or pushed) and failure is kept: while fleetd shuts down, a poll may
    // still be answered, or a push arrive, so how many polls fail before the stop is counted,
    // not assumed. The updater handles them in the order they came, which is the order kept.
    // The deadline is long enough that an answer is never late.
    let polls = PollRecordingSource(source(fleetd, signer: try await fleetd.signer(role: .consumer)))
    let updater = RideStatusUpdater(
      source: polls, configuration: configuration(interval: .milliseconds(500), deadline: .seconds(5), failures: 3))
    let receiver = RecordingReceiver()
    try await running(updater) {
      try updater.startSendingUpdates(rideIdentifier: "t1", observer: receiver)
      try await eventually("received") { receiver.phases == [.received] }
      try await fleetd.stop()
      guard let stop = try await receiver.sourceFailure() else { return }
      #expect(stop.count == 3)
      let outcomes = polls.outcomes.withLock { $0 }
      // Stopped at the third failure in a row, and not before.
      #expect(
        outcomes.suffix(3) == [.failed, .failed, .failed] && outcomes.dropLast(3).last != .failed, "\(outcomes)")
      // The one status, once; then each failed poll repeated it (an unchanged answer sends nothing).
      #expect(
        receiver.phases == Array(repeating: .received, count: 1 + outcomes.count { $0 == .failed }), "\(outcomes)")
      #expect(outcomes.first == .answered || outcomes.first == .pushed, "\(outcomes)")
      #expect(!updater.isSending)
    }
  }

  @Test func anotherRidersTripIsRefusedAndNeverSent() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createTrip("t1", vehicle: nil, pickup: pickupPoint, dropoff: dropoffPoint)
      let consumer = try await fleetd.signer(role: .consumer)
      var configuration = FleetdRideStatusSource.Configuration(baseURL: fleetd.httpURL, providerID: "acme")
      configuration.tripID = { _ in "t1" }
      // Tokens for trip t2, asking for t1.
      struct WrongTrip: AuthorizationTokenProvider {
        let signer: TokenSigner
        func token(for context: AuthorizationContext) async throws -> String { try signer.token(tripID: "t2") }
      }
      let source = FleetdRideStatusSource(configuration: configuration, tokenProvider: WrongTrip(signer: consumer))
      let error = await #expect(throws: FleetClientError.self) {
        try await source.status(rideIdentifier: "t1")
      }
      #expect(error?.httpStatus == 403)
      #expect(error?.code == .permissionDenied)
      let missing = await #expect(throws: FleetClientError.self) {
        try await self.source(fleetd, signer: try await fleetd.signer(role: .server)).status(rideIdentifier: "nope")
      }
      #expect(missing?.code == .notFound)
    }
  }

  @Test func theRideIdentifierGivenAtBookingIsKept() async throws {
    try await Fleetd.with { fleetd in
      try await fleetd.createTrip("t1", vehicle: nil, pickup: pickupPoint, dropoff: dropoffPoint)
      var configuration = FleetdRideStatusSource.Configuration(baseURL: fleetd.httpURL, providerID: "acme")
      configuration.tripID = { ride in ride.replacingOccurrences(of: "booking/", with: "") }
      let source = FleetdRideStatusSource(
        configuration: configuration, tokenProvider: SignedTripTokens(signer: try await fleetd.signer(role: .consumer)))
      let status = try await source.status(rideIdentifier: "booking/t1")
      #expect(status.rideIdentifier == "booking/t1")
      #expect(status.phase == .received)
    }
  }
}

@Suite struct ServerSentEventParserTests {
  @Test func eventsSplitAnywhereWithEveryLineEnding() {
    let stream = Array(
      ": comment\r\nevent: rideStatus\r\ndata: {\"a\":1}\r\n\r\ndata: one\ndata: two\nid: 7\n\nevent: x\r\r"
        .utf8)
    let whole: [ServerSentEvent] = {
      var parser = ServerSentEventParser()
      return parser.feed(stream)
    }()
    #expect(
      whole == [
        ServerSentEvent(name: "rideStatus", data: "{\"a\":1}"),
        ServerSentEvent(data: "one\ntwo", id: "7"),
      ])
    // Cut at every byte, the same events come out.
    for cut in 1..<stream.count {
      var parser = ServerSentEventParser()
      let events = parser.feed(stream[..<cut]) + parser.feed(stream[cut...])
      #expect(events == whole, "cut at \(cut)")
    }
  }

  @Test func fieldsWithoutASpaceOrValue() {
    var parser = ServerSentEventParser()
    #expect(parser.feed(Array("data:x\ndata\n\n".utf8)) == [ServerSentEvent(data: "x\n")])
  }
}

/// A source that keeps, in order, whether each poll was answered, and each push (an answer too).
final class PollRecordingSource: RideStatusSource {
  enum Outcome: Equatable {
    case answered, failed, pushed
  }

  let wrapped: any RideStatusSource
  /// In the order they came.
  let outcomes = Mutex<[Outcome]>([])

  init(_ wrapped: any RideStatusSource) { self.wrapped = wrapped }

  func status(rideIdentifier: String) async throws -> RideStatus {
    do {
      let status = try await wrapped.status(rideIdentifier: rideIdentifier)
      outcomes.withLock { $0.append(.answered) }
      return status
    } catch {
      outcomes.withLock { $0.append(.failed) }
      throw error
    }
  }

  func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async {
    await wrapped.watch(rideIdentifier: rideIdentifier) { [self] status in
      outcomes.withLock { $0.append(.pushed) }
      onChange(status)
    }
  }
}
