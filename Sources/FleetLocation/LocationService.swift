import FleetClient
import FleetGeometry
import FleetPlaces
import FleetPositioning
import Foundation
import Synchronization

/// What the location service tells the app besides the fixes themselves.
public enum LocationEvent: Sendable, Hashable {
  /// The authorization state, first right after `run()` starts, then on every change.
  case authorizationChanged(LocationAuthorization)
  /// Access was denied or restricted: updates have stopped. The app may prompt the user to
  /// allow it in the settings.
  case authorizationDenied(LocationAuthorization)
  /// Updates started (authorization granted) or stopped (authorization lost).
  case updatesStarted
  case updatesStopped
  /// The device stayed still and deliveries paused, or it moved and they resumed.
  case paused
  case resumed
  /// The current location's address was looked up and differs from the last one.
  case addressChanged(Address)
  /// The fix source failed; the service retries it with backoff.
  case sourceFailed(LocationError)
  /// A reverse-geocoding lookup failed; the cached address stays.
  case geocodingFailed(String)
}

/// The location service: one per app. It starts positioning when authorization is granted and
/// stops when it is lost, filters fixes for battery (accuracy, distance, pause when still),
/// keeps a current location that is valid from the first fix on — seeded from the provider's
/// cache — and, with a geocoder, the current location's address, refreshed periodically.
///
/// Call `run()` in a task the app owns (it returns when that task is cancelled); read
/// `currentLocation` and `currentAddress` at any time; iterate `updates()` for delivered fixes,
/// `currentLocations()` for every change of the current location, `events()` for the rest.
public final class LocationService: Sendable {
  public struct Configuration: Sendable {
    public var options: LocationOptions
    /// How often the current location's address is looked up again (only when the location
    /// changed since the last lookup).
    public var addressRefreshInterval: Duration
    /// Waits between restarts of a failed fix source.
    public var sourceRetry: RetryBackoff

    public init(
      options: LocationOptions = LocationOptions(), addressRefreshInterval: Duration = .seconds(60),
      sourceRetry: RetryBackoff = RetryBackoff(initial: .seconds(1), maximum: .seconds(30))
    ) {
      self.options = options
      self.addressRefreshInterval = addressRefreshInterval
      self.sourceRetry = sourceRetry
    }
  }

  struct State {
    var filter: LocationFilter
    var authorization: LocationAuthorization
    var current: LocationFix?
    var address: Address?
    var geocodedAt: LatLng?
    var isUpdating = false
    var isRunning = false
  }

  public let provider: any LocationProvider
  public let authorizer: any LocationAuthorizer
  public let geocoder: (any ReverseGeocoding)?
  let configuration: Configuration
  let clock: PositioningClock
  let state: Mutex<State>
  let deliveries = Broadcast<LocationFix>()
  let currents = Broadcast<LocationFix>()
  let eventStream = Broadcast<LocationEvent>(buffer: 256)

  public init(
    provider: any LocationProvider, authorizer: any LocationAuthorizer = UnrestrictedLocationAuthorizer(),
    geocoder: (any ReverseGeocoding)? = nil, configuration: Configuration = Configuration(),
    clock: PositioningClock = .system
  ) {
    self.provider = provider
    self.authorizer = authorizer
    self.geocoder = geocoder
    self.configuration = configuration
    self.clock = clock
    state = Mutex(State(filter: LocationFilter(options: configuration.options), authorization: authorizer.status))
  }

  // MARK: Reading

  /// The newest fix — from the provider's cache until the first new one arrives; nil only
  /// while no fix exists at all. Its `time` is the newest fix's.
  public var currentLocation: LocationFix? { state.withLock { $0.current } }

  /// The current location's address, as last looked up; nil before the first lookup.
  public var currentAddress: Address? { state.withLock { $0.address } }

  public var authorization: LocationAuthorization { state.withLock { $0.authorization } }

  /// Whether positioning is on (authorized and running).
  public var isUpdating: Bool { state.withLock { $0.isUpdating } }

  /// Whether deliveries are paused because the device is still.
  public var isPaused: Bool { state.withLock { $0.filter.isPaused } }

  /// The filter options; changing them applies from the next fix.
  public var options: LocationOptions {
    get { state.withLock { $0.filter.options } }
    set { state.withLock { $0.filter.options = newValue } }
  }

  /// The fixes that pass the filters, as they arrive.
  public func updates() -> AsyncStream<LocationFix> { deliveries.subscribe() }

  /// The current location now (when there is one), then every change.
  public func currentLocations() -> AsyncStream<LocationFix> {
    state.withLock { s in
      let current = s.current
      return currents.subscribe(initial: { current })
    }
  }

  public func events() -> AsyncStream<LocationEvent> { eventStream.subscribe() }

  /// Asks the authorizer for `level`; the service reacts to the answer through the status
  /// updates it follows.
  @discardableResult
  public func requestAuthorization(_ level: LocationAuthorizationRequest = .whenInUse) async -> LocationAuthorization {
    await authorizer.requestAuthorization(level)
  }

  // MARK: Running

  /// Follows the authorization until the calling task is cancelled: positioning runs while it
  /// allows location and stops when it does not. Runs once at a time.
  public func run() async throws {
    let alreadyRunning = state.withLock { s in
      defer { s.isRunning = true }
      return s.isRunning
    }
    guard !alreadyRunning else { throw LocationError(.sourceUnavailable, "the location service is already running") }
    defer { state.withLock { $0.isRunning = false } }

    var statuses = authorizer.statusUpdates().makeAsyncIterator()
    var next = await statuses.next()
    while let status = next, !Task.isCancelled {
      record(status)
      guard status.allowsLocation else {
        next = await statuses.next()
        continue
      }
      next = await withTaskGroup(of: Void.self, returning: LocationAuthorization?.self) { group in
        group.addTask { await self.trackWhileAuthorized() }
        var following = await statuses.next()
        while let status = following, status.allowsLocation {
          record(status)
          following = await statuses.next()
        }
        group.cancelAll()
        return following
      }
      stopUpdating()
    }
    try Task.checkCancellation()
  }

  func record(_ status: LocationAuthorization) {
    let changed = state.withLock { s in
      defer { s.authorization = status }
      return s.authorization != status
    }
    eventStream.yield(.authorizationChanged(status))
    if status == .denied || status == .restricted, changed || !isUpdating {
      eventStream.yield(.authorizationDenied(status))
    }
  }

  func stopUpdating() {
    let was = state.withLock { s in
      defer { s.isUpdating = false }
      return s.isUpdating
    }
    if was { eventStream.yield(.updatesStopped) }
  }

  /// Seeds the current location from the provider's cache, then reads fixes and refreshes the
  /// address until cancelled.
  func trackWhileAuthorized() async {
    state.withLock { s in
      s.isUpdating = true
      s.filter.reset()
    }
    eventStream.yield(.updatesStarted)
    if let cached = await provider.lastKnownFix() { updateCurrent(cached) }
    await withTaskGroup(of: Void.self) { group in
      group.addTask { await self.readFixes() }
      if geocoder != nil { group.addTask { await self.refreshAddressPeriodically() } }
    }
  }

  /// Reads the provider, restarting it with backoff when it fails, until cancelled or until it
  /// ends (a replayed track).
  func readFixes() async {
    var failures = 0
    while !Task.isCancelled {
      do {
        for try await fix in provider.fixes() {
          failures = 0
          handle(fix)
        }
        return
      } catch is CancellationError {
        return
      } catch {
        guard !Task.isCancelled else { return }
        failures += 1
        let reported = (error as? LocationError) ?? LocationError(.sourceUnavailable, "\(error)")
        eventStream.yield(.sourceFailed(reported))
        let wait = configuration.sourceRetry.delay(afterFailures: failures, jitter: Double.random(in: 0...1))
        do { try await clock.sleep(wait) } catch { return }
      }
    }
  }

  /// One new fix: it becomes the current location; the filter decides whether it is delivered.
  func handle(_ fix: LocationFix) {
    updateCurrent(fix)
    let (verdict, transition) = state.withLock { $0.filter.consider(fix) }
    switch transition {
    case .paused?: eventStream.yield(.paused)
    case .resumed?: eventStream.yield(.resumed)
    case nil: break
    }
    if verdict == .deliver { deliveries.yield(fix) }
  }

  /// Takes `fix` as the current location unless a newer one is already there.
  func updateCurrent(_ fix: LocationFix) {
    state.withLock { s in
      if let current = s.current, current.time > fix.time { return }
      s.current = fix
      currents.yield(fix)
    }
  }

  func refreshAddressPeriodically() async {
    while !Task.isCancelled {
      await refreshAddress()
      do { try await clock.sleep(configuration.addressRefreshInterval) } catch { return }
    }
  }

  /// Looks up the current location's address, unless it was looked up there already.
  public func refreshAddress() async {
    guard let geocoder else { return }
    let target = state.withLock { s -> LatLng? in
      guard let current = s.current?.coordinate, current != s.geocodedAt else { return nil }
      return current
    }
    guard let target else { return }
    do {
      let address = try await geocoder.reverseGeocode(target)
      let changed = state.withLock { s in
        defer {
          s.address = address
          s.geocodedAt = target
        }
        return s.address != address
      }
      if changed { eventStream.yield(.addressChanged(address)) }
    } catch {
      if !(error is CancellationError) { eventStream.yield(.geocodingFailed("\(error)")) }
    }
  }

  // MARK: One fix

  /// One fix at the desired accuracy, for screens that need a single position; positioning
  /// stops again afterwards. Asks for when-in-use authorization when it is undetermined.
  /// Within `timeout` it returns the first fix at the desired accuracy; at the timeout, the
  /// most accurate fix seen; with none, it throws `sourceUnavailable`. The fixes read update
  /// the current location but are not delivered through `updates()`.
  public func locateOnce(timeout: Duration = .seconds(30)) async throws -> LocationFix {
    var status = authorizer.status
    if status == .notDetermined { status = await authorizer.requestAuthorization(.whenInUse) }
    guard status.allowsLocation else {
      throw LocationError(.denied, "location access is \(status.rawValue); allow it to locate the device")
    }
    let desired = options.desiredAccuracy
    let best = BestFix()
    let provider = provider
    let clock = clock
    let found = try await withThrowingTaskGroup(of: LocationFix?.self) { group in
      group.addTask {
        for try await fix in provider.fixes() {
          self.updateCurrent(fix)
          best.offer(fix)
          if let desired, let accuracy = fix.horizontalAccuracy, accuracy > desired { continue }
          return fix
        }
        return nil
      }
      group.addTask {
        try await clock.sleep(timeout)
        return nil
      }
      defer { group.cancelAll() }
      return try await group.next() ?? nil
    }
    if let fix = found ?? best.fix { return fix }
    throw LocationError(.sourceUnavailable, "no fix within \(timeout)")
  }
}

/// The most accurate fix seen so far (an unstated accuracy counts as the worst).
final class BestFix: Sendable {
  let best = Mutex<LocationFix?>(nil)
  func offer(_ fix: LocationFix) {
    best.withLock { b in
      let accuracy = fix.horizontalAccuracy ?? .infinity
      if b == nil || accuracy < (b?.horizontalAccuracy ?? .infinity) { b = fix }
    }
  }
  var fix: LocationFix? { best.withLock { $0 } }
}
