import FleetAuth
import FleetCore
import FleetDriver
import FleetGeometry
import FleetPositioning
import FleetProto
import FleetServer
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging
import Synchronization

/// Signs tokens locally with a service-account key (a provider's token server would).
struct SigningTokenProvider: AuthorizationTokenProvider {
  let signer: TokenSigner
  var vehicleID: String?
  let fetches = Counter()

  func token(for context: AuthorizationContext) async throws -> String {
    fetches.increment()
    return try signer.token(vehicleID: vehicleID ?? context.id)
  }
}

/// A reporter clock the test moves by hand.
final class ManualClock: ReporterClock {
  struct Sleeper {
    var deadline: Duration
    var continuation: CheckedContinuation<Void, any Error>
  }

  let state = Mutex<(now: Duration, sleepers: [UUID: Sleeper])>((.zero, [:]))

  var now: Duration { state.withLock { $0.now } }

  func advance(by step: Duration) {
    let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
      s.now += step
      let ready = s.sleepers.filter { $0.value.deadline <= s.now }
      for id in ready.keys { s.sleepers[id] = nil }
      return ready.values.map(\.continuation)
    }
    for continuation in due { continuation.resume() }
  }

  func sleep(until deadline: Duration) async throws {
    let id = UUID()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let resume = state.withLock { s -> Bool in
          if deadline <= s.now || Task.isCancelled { return true }
          s.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return false
        }
        if resume { continuation.resume() }
      }
    } onCancel: {
      let sleeper = state.withLock { s in s.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }
}

/// Records what the reporter tells its listeners, and lets a test wait for it.
final class RecordingListener: VehicleReporterListener {
  enum Event: Sendable {
    case succeeded(VehicleUpdate)
    case failed(VehicleUpdate, FleetClientError)

    var update: VehicleUpdate {
      switch self {
      case .succeeded(let u), .failed(let u, _): u
      }
    }
    var error: FleetClientError? {
      if case .failed(_, let e) = self { return e }
      return nil
    }
  }

  let events = Mutex<[Event]>([])

  func vehicleReporter(_ reporter: VehicleReporter, didSucceed update: VehicleUpdate) {
    events.withLock { $0.append(.succeeded(update)) }
  }

  func vehicleReporter(_ reporter: VehicleReporter, didFail update: VehicleUpdate, with error: FleetClientError) {
    events.withLock { $0.append(.failed(update, error)) }
  }

  var all: [Event] { events.withLock { $0 } }

  /// Waits (real time, polling) until there are at least `count` events.
  @discardableResult
  func waitFor(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [Event] {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
      let seen = all
      if seen.count >= count { return seen }
      try await Task.sleep(for: .milliseconds(10))
    }
    struct Timeout: Error, CustomStringConvertible {
      var description: String
    }
    throw Timeout(description: "expected \(count) reporter events, saw \(all.count): \(all.map { "\($0)" })")
  }
}

/// A fix at a point, `seconds` after a fixed start.
func fix(_ latitude: Double, _ longitude: Double, at seconds: Double) -> LocationFix {
  LocationFix(
    coordinate: LatLng(latitude: latitude, longitude: longitude), horizontalAccuracy: 5,
    time: Date(timeIntervalSince1970: 1_800_000_000 + seconds))
}

/// Runs a driver API against fleetd while `body` drives it; cancels it afterwards.
func driving(_ api: RidesharingDriverAPI, _ body: () async throws -> Void) async throws {
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await api.run() }
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
