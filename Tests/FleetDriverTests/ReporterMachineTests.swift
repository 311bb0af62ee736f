import FleetCore
import FleetPositioning
import FleetProto
import Foundation
import Testing

@testable import FleetDriver

@Suite("Reporter decisions")
struct ReporterMachineTests {
  func sent(_ action: ReporterMachine.Action) -> PlannedUpdate? {
    if case .send(let plan) = action { return plan }
    return nil
  }

  @Test func oneUpdateInFlightAtATime() {
    var machine = ReporterMachine()
    _ = machine.setTracking(true, now: .zero)
    _ = machine.record(fix(1, 1, at: 0))
    #expect(sent(machine.next(now: .zero)) != nil)
    _ = machine.record(fix(1, 2, at: 1))
    try? machine.requestState(.online)
    #expect(machine.next(now: .seconds(100)) == .wait(until: nil), "nothing else while one is in flight")
    machine.finished(.acknowledged, now: .seconds(1), jitter: 0.5)
    let next = sent(machine.next(now: .seconds(1)))
    #expect(next?.state == .online, "the state change goes at once, not at the next period")
    #expect(next?.location?.coordinate.longitude == 2)
  }

  @Test func transientFailuresBackOffExponentiallyWithJitterAndKeepTheFixes() {
    var configuration = ReportingConfiguration()
    configuration.initialRetryDelay = .seconds(1)
    configuration.maximumRetryDelay = .seconds(30)
    var machine = ReporterMachine(configuration: configuration)
    _ = machine.setTracking(true, now: .zero)
    var now = Duration.zero
    var delays: [Duration] = []
    for i in 0..<8 {
      _ = machine.record(fix(1, Double(i), at: Double(i)))
      guard let plan = sent(machine.next(now: now)) else {
        Issue.record("no update at attempt \(i)")
        return
      }
      #expect(
        plan.past.map(\.time) == (0..<i).map { Date(timeIntervalSince1970: 1_800_000_000 + Double($0)) }.suffix(100))
      machine.finished(.failed(FleetClientError(.unavailable, "down")), now: now, jitter: i.isMultiple(of: 2) ? 0 : 1)
      guard case .wait(let until?) = machine.next(now: now) else {
        Issue.record("no retry scheduled")
        return
      }
      delays.append(until - now)
      now = until
    }
    // Equal jitter: between half and all of 1, 2, 4, 8, 16 s, then capped at 30 s.
    #expect(
      delays == [
        .milliseconds(500), .seconds(2), .seconds(2), .seconds(8), .seconds(8), .seconds(30), .seconds(15),
        .seconds(30),
      ])
    #expect(machine.backlog.count == 8)
    // Back: the newest fix goes as the location, the others as past locations, oldest first.
    _ = machine.record(fix(1, 8, at: 8))
    let recovery = sent(machine.next(now: now))!
    #expect(recovery.location?.time == Date(timeIntervalSince1970: 1_800_000_008))
    #expect(recovery.past.count == 8)
    machine.finished(.acknowledged, now: now, jitter: 0)
    #expect(machine.backlog.isEmpty)
    #expect(machine.consecutiveFailures == 0)
  }

  @Test func backlogIsBoundedAndSentInChunks() {
    var configuration = ReportingConfiguration()
    configuration.backlogCapacity = 5
    configuration.pastLocationsPerUpdate = 2
    var machine = ReporterMachine(configuration: configuration)
    _ = machine.setTracking(true, now: .zero)
    var now = Duration.zero
    for i in 0..<9 {
      _ = machine.record(fix(1, Double(i), at: Double(i)))
      _ = sent(machine.next(now: now))
      machine.finished(.failed(FleetClientError(.deadlineExceeded, "slow")), now: now, jitter: 0)
      now += .seconds(120)
    }
    #expect(
      machine.backlog.map(\.time.timeIntervalSince1970) == (4..<9).map { 1_800_000_000 + Double($0) },
      "the oldest go first")
    _ = machine.record(fix(1, 9, at: 9))
    let first = sent(machine.next(now: now))!
    #expect(first.past.count == 2)
    machine.finished(.acknowledged, now: now, jitter: 0)
    #expect(machine.backlog.count == 3)
  }

  @Test func unauthenticatedRetriesOnceAtOnceThenBacksOff() {
    var machine = ReporterMachine()
    _ = machine.setTracking(true, now: .zero)
    _ = machine.record(fix(1, 1, at: 0))
    _ = sent(machine.next(now: .zero))
    machine.finished(.failed(FleetClientError(.unauthenticated, "expired")), now: .seconds(1), jitter: 0)
    #expect(sent(machine.next(now: .seconds(1))) != nil, "a fresh token may be all it takes")
    machine.finished(.failed(FleetClientError(.unauthenticated, "still")), now: .seconds(1), jitter: 0)
    #expect(machine.next(now: .seconds(1)) == .wait(until: .seconds(2)))
  }

  @Test func aRefusedUpdateIsNotRetriedInALoop() {
    var machine = ReporterMachine()
    _ = machine.setTracking(true, now: .zero)
    _ = machine.record(fix(1, 1, at: 0))
    try? machine.requestState(.online)
    _ = sent(machine.next(now: .zero))
    machine.finished(.failed(FleetClientError(.permissionDenied, "not yours")), now: .zero, jitter: 0)
    #expect(machine.pendingState == nil, "the refused state change is dropped (the app is told)")
    #expect(machine.next(now: .seconds(1)) == .wait(until: .seconds(10)), "the next try is the next period")
  }

  @Test func updatesNeverHaveAnEmptyMask() async {
    var machine = ReporterMachine()
    _ = machine.setTracking(true, now: .zero)
    #expect(machine.next(now: .zero) == .wait(until: nil), "tracking without a fix sends nothing")
    let sendsAtOnce = machine.record(fix(1, 1, at: 0))
    #expect(sendsAtOnce, "the first fix is sent at once")
    // Without a state change to carry it (a delivery vehicle has none).
    #expect(sent(machine.next(now: .seconds(1)))?.location == fix(1, 1, at: 0))
    let reporter = RidesharingDriverAPI(
      driverContext: DriverContext(
        tokenProvider: StaticTokens(), providerID: "acme", vehicleID: "v",
        endpoint: FleetEndpoint(host: "127.0.0.1", port: 1))
    ).vehicleReporter
    for plan in [
      PlannedUpdate(location: fix(1, 1, at: 0), past: [], state: nil, mayCarryRoute: true),
      PlannedUpdate(location: nil, past: [], state: .offline, mayCarryRoute: false),
      PlannedUpdate(location: nil, past: [fix(1, 1, at: 0)], state: nil, mayCarryRoute: true),
    ] {
      #expect(!(await reporter.prepare(plan)).updateMask.isEmpty)
    }
  }

  @Test func nonFiniteReadingsAreLeftOutAndHeadingsWrap() {
    var bad = fix(43.73, 7.42, at: 0)
    bad.heading = .nan
    bad.speed = .infinity
    bad.horizontalAccuracy = .nan
    let sent = Maps_Fleetengine_V1_VehicleLocation(bad)
    #expect(!sent.hasHeading && !sent.hasSpeed && !sent.hasLatlngAccuracy)
    var turning = fix(43.73, 7.42, at: 0)
    turning.heading = -90.4
    #expect(Maps_Fleetengine_V1_VehicleLocation(turning).heading.value == 270)
    turning.heading = 725
    #expect(Maps_Fleetengine_V1_VehicleLocation(turning).heading.value == 5)
  }
}
