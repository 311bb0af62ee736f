import Synchronization

/// Whether the app may read the device's position, in Core Location's five states.
public enum LocationAuthorization: String, Sendable, Hashable, Codable, CaseIterable {
  /// The user has not been asked yet.
  case notDetermined
  /// Allowed while the app is in use.
  case whenInUse
  /// Allowed at any time, also in the background.
  case always
  /// The user said no.
  case denied
  /// The device's policy forbids it (parental controls, management); the user cannot change it.
  case restricted

  /// Whether fixes may be read in this state.
  public var allowsLocation: Bool { self == .whenInUse || self == .always }
}

/// The level an app asks for.
public enum LocationAuthorizationRequest: String, Sendable, Hashable, Codable {
  case whenInUse
  case always
}

/// Where the location service learns whether it may read positions: the operating system's
/// permission on Apple platforms, the app's own consent screen, or nothing at all (Linux
/// daemons and track files need no per-app permission).
public protocol LocationAuthorizer: Sendable {
  /// The state now.
  var status: LocationAuthorization { get }
  /// Asks for `level`; returns the state afterwards. As on Apple platforms, asking changes
  /// only an undetermined state (or upgrades when-in-use to always); a denial stands until the
  /// user changes it in the settings.
  func requestAuthorization(_ level: LocationAuthorizationRequest) async -> LocationAuthorization
  /// The state now, then every change.
  func statusUpdates() -> AsyncStream<LocationAuthorization>
}

/// Always `always`: for platforms without a location permission (Linux with gpsd, replayed
/// tracks, simulations).
public struct UnrestrictedLocationAuthorizer: LocationAuthorizer {
  public init() {}
  public var status: LocationAuthorization { .always }
  public func requestAuthorization(_ level: LocationAuthorizationRequest) async -> LocationAuthorization { .always }
  public func statusUpdates() -> AsyncStream<LocationAuthorization> {
    AsyncStream { $0.yield(.always) }
  }
}

/// An authorization the app manages itself: `decide` stands for the prompt (the app's consent
/// screen) and is asked on a request while the state is undetermined; `set(_:)` reports a
/// change made elsewhere (the user revoking consent in the app's settings).
public final class ManualLocationAuthorizer: LocationAuthorizer {
  let state: Mutex<LocationAuthorization>
  let decide: @Sendable (LocationAuthorizationRequest) async -> LocationAuthorization
  let listeners = Broadcast<LocationAuthorization>()

  public init(
    status: LocationAuthorization = .notDetermined,
    decide: @escaping @Sendable (LocationAuthorizationRequest) async -> LocationAuthorization
  ) {
    state = Mutex(status)
    self.decide = decide
  }

  public var status: LocationAuthorization { state.withLock { $0 } }

  public func requestAuthorization(_ level: LocationAuthorizationRequest) async -> LocationAuthorization {
    let current = status
    let asks = current == .notDetermined || (current == .whenInUse && level == .always)
    guard asks else { return current }
    let answer = await decide(level)
    // An upgrade request that is refused leaves when-in-use as it was.
    let settled = current == .whenInUse && !answer.allowsLocation ? current : answer
    set(settled)
    return settled
  }

  /// Changes the state and tells every listener when it differs.
  public func set(_ status: LocationAuthorization) {
    // Under the state's lock, so that listeners see the changes in the order they were made.
    state.withLock { s in
      guard s != status else { return }
      s = status
      listeners.yield(status)
    }
  }

  public func statusUpdates() -> AsyncStream<LocationAuthorization> {
    state.withLock { s in
      let current = s
      return listeners.subscribe(initial: { current })
    }
  }
}
