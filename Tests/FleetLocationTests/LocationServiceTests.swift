import FleetCore
import FleetGeocoding
import FleetPositioning
import FleetTestSupport
import Foundation
import Testing

@testable import FleetLocation

/// Replays at about a millisecond per fix, keeping the recorded times.
let fastClock = PositioningClock(
  now: { Date(timeIntervalSince1970: 0) }, sleep: { _ in try await Task.sleep(for: .milliseconds(1)) })

@Suite struct LocationServiceTests {
  @Test func aReplayedDriveYieldsFilteredUpdatesAndAnAlwaysValidLocationWithItsAddress() async throws {
    let drive = RecordedDrive.fixes
    let options = LocationOptions(desiredAccuracy: 50, distanceFilter: 10, pausesWhenStationary: true)
    let service = LocationService(
      provider: ReplayLocationProvider(track: drive, keepsRecordedTimes: true, clock: fastClock),
      geocoder: try await monacoGeocoding(),
      configuration: .init(options: options, addressRefreshInterval: .milliseconds(20)),
      clock: fastClock)
    #expect(service.currentLocation == nil)
    let updates = Collected(service.updates())
    let currents = Collected(service.currentLocations())
    let events = Collected(service.events())
    let running = Task { try await service.run() }
    defer { running.cancel() }

    try await eventually("the whole drive replayed") { service.currentLocation == drive.last }
    try await eventually("the address of the end of the drive") { service.currentAddress?.place == "Larvotto" }

    var filter = LocationFilter(options: options)
    let expected = drive.filter { filter.consider($0).verdict == .deliver }
    try await eventually("every delivery") { updates.all.count == expected.count }
    #expect(updates.all == expected)
    // The current location followed every fix, filtered or not, in order.
    try await eventually("every current location") { currents.all.count == drive.count }
    #expect(currents.all == drive)
    #expect(service.currentAddress?.city == "Monaco")
    #expect(service.currentAddress?.countryCode == "MC")
    let seen = events.all
    #expect(seen.first == .authorizationChanged(.always))
    #expect(seen.contains(.updatesStarted))
    #expect(seen.contains(.paused))
    #expect(seen.contains(.resumed))
    #expect(seen.contains { if case .addressChanged = $0 { true } else { false } })
  }

  @Test func theCurrentLocationIsSeededFromTheProvidersCacheAndGeocoded() async throws {
    let cached = fix(43.7315, 7.4210, at: 0)
    let provider = ManualProvider(cached: cached)
    let service = LocationService(
      provider: provider, geocoder: try await monacoGeocoding(),
      configuration: .init(addressRefreshInterval: .milliseconds(20)))
    let running = Task { try await service.run() }
    defer { running.cancel() }
    try await eventually("the cached fix") { service.currentLocation == cached }
    try await eventually("its address") { service.currentAddress?.place == "Monaco-Ville" }
    let first = await service.currentLocations().first { _ in true }
    #expect(first == cached)

    // A new fix replaces it; an older one (a late cache) would not.
    try await eventually("the provider started") { provider.isStarted }
    let newer = fix(43.7345, 7.4230, at: 10)
    provider.send(newer)
    try await eventually("the new fix") { service.currentLocation == newer }
    service.updateCurrent(fix(43.70, 7.40, at: 5))
    #expect(service.currentLocation == newer)
    try await eventually("the new address") { service.currentAddress?.place == "La Condamine" }
  }

  @Test func aCachingProviderKeepsTheLastFixForTheNextStart() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("fleetkit-last-fix-\(UUID()).json")
    defer { try? FileManager.default.removeItem(at: file) }
    let track = Array(RecordedDrive.fixes.prefix(40))
    let caching = CachingLocationProvider(
      ReplayLocationProvider(track: track, keepsRecordedTimes: true, clock: fastClock), file: file)
    #expect(await caching.lastKnownFix() == nil)
    for try await _ in caching.fixes() {}
    #expect(await caching.lastKnownFix() == track.last)
    // A new process: nothing in memory, the file still there.
    let nextLaunch = CachingLocationProvider(ManualProvider(), file: file)
    #expect(await nextLaunch.lastKnownFix() == track.last)
  }

  @Test func authorizationStartsAndStopsUpdatesAndADenialIsReported() async throws {
    let authorizer = ManualLocationAuthorizer(status: .notDetermined) { _ in .whenInUse }
    let provider = ManualProvider()
    let service = LocationService(provider: provider, authorizer: authorizer)
    let events = Collected(service.events())
    let updates = Collected(service.updates())
    let running = Task { try await service.run() }
    defer { running.cancel() }

    try await eventually("the initial state") { events.all.first == .authorizationChanged(.notDetermined) }
    #expect(!service.isUpdating)
    #expect(provider.starts == 0)

    #expect(await service.requestAuthorization(.whenInUse) == .whenInUse)
    try await eventually("updates started") { service.isUpdating && provider.isStarted }
    provider.send(fix(43.73, 7.42, at: 0))
    try await eventually("a delivery") { updates.all.count == 1 }

    authorizer.set(.denied)
    try await eventually("the denial") { events.all.contains(.authorizationDenied(.denied)) }
    try await eventually("updates stopped") { !service.isUpdating }
    provider.send(fix(43.74, 7.42, at: 1))  // an old sequence: nobody reads it any more

    // A request cannot overturn a denial; only the user can (in the settings).
    #expect(await service.requestAuthorization(.always) == .denied)
    authorizer.set(.always)
    try await eventually("updates restarted") { service.isUpdating && provider.starts == 2 }
    provider.send(fix(43.75, 7.42, at: 2))
    try await eventually("a delivery after the restart") { updates.all.count == 2 }
    #expect(updates.all.map(\.coordinate.latitude) == [43.73, 43.75])
    #expect(
      events.all.filter { if case .authorizationChanged = $0 { true } else { false } } == [
        .authorizationChanged(.notDetermined), .authorizationChanged(.whenInUse), .authorizationChanged(.denied),
        .authorizationChanged(.always),
      ])
    #expect(events.all.filter { $0 == .updatesStarted }.count == 2)
    #expect(events.all.filter { $0 == .updatesStopped }.count == 1)
  }

  @Test func aServiceCreatedDeniedSaysSoAtOnce() async throws {
    let service = LocationService(
      provider: ManualProvider(), authorizer: ManualLocationAuthorizer(status: .restricted) { _ in .always })
    let events = Collected(service.events())
    let running = Task { try await service.run() }
    defer { running.cancel() }
    try await eventually("the restriction") { events.all.contains(.authorizationDenied(.restricted)) }
    #expect(!service.isUpdating)
  }

  @Test func anUpgradeThatIsRefusedKeepsWhenInUse() async {
    let authorizer = ManualLocationAuthorizer(status: .whenInUse) { _ in .denied }
    #expect(await authorizer.requestAuthorization(.always) == .whenInUse)
    #expect(authorizer.status == .whenInUse)
  }

  @Test func aFailingSourceIsReportedAndRestarted() async throws {
    let provider = ManualProvider()
    let service = LocationService(
      provider: provider,
      configuration: .init(sourceRetry: RetryBackoff(initial: .milliseconds(10), maximum: .milliseconds(50))))
    let events = Collected(service.events())
    let running = Task { try await service.run() }
    defer { running.cancel() }
    try await eventually("the first start") { provider.starts == 1 }
    provider.fail(LocationError(.sourceUnavailable, "gpsd went away"))
    try await eventually("the failure") {
      events.all.contains(.sourceFailed(LocationError(.sourceUnavailable, "gpsd went away")))
    }
    try await eventually("the restart") { provider.starts == 2 }
  }

  @Test func locateOnceReturnsTheFirstAccurateFixAndStops() async throws {
    let track = [
      fix(43.73, 7.42, accuracy: 200, at: 0), fix(43.731, 7.42, accuracy: 90, at: 1),
      fix(43.732, 7.42, accuracy: 20, at: 2), fix(43.733, 7.42, accuracy: 5, at: 3),
    ]
    let service = LocationService(
      provider: ReplayLocationProvider(track: track, keepsRecordedTimes: true, clock: fastClock),
      configuration: .init(options: LocationOptions(desiredAccuracy: 50)))
    let found = try await service.locateOnce()
    #expect(found == track[2])
    #expect(service.currentLocation == track[2])
  }

  @Test func locateOnceSettlesForTheBestFixAtTheTimeout() async throws {
    let provider = ManualProvider()
    let service = LocationService(
      provider: provider, configuration: .init(options: LocationOptions(desiredAccuracy: 10)))
    async let located = service.locateOnce(timeout: .seconds(2))
    try await eventually("the provider started") { provider.isStarted }
    provider.send(fix(43.73, 7.42, accuracy: 80, at: 0))
    provider.send(fix(43.74, 7.42, accuracy: 30, at: 1))
    provider.send(fix(43.75, 7.42, accuracy: 60, at: 2))
    #expect(try await located.coordinate.latitude == 43.74)
  }

  @Test func locateOnceAsksWhenUndeterminedAndFailsWhenDenied() async throws {
    let asked = ManualLocationAuthorizer(status: .notDetermined) { _ in .denied }
    let service = LocationService(provider: ManualProvider(), authorizer: asked)
    let error = await #expect(throws: LocationError.self) { try await service.locateOnce(timeout: .seconds(1)) }
    #expect(error?.code == .denied)
    #expect(asked.status == .denied)
  }
}
