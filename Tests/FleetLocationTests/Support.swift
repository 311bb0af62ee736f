import FleetCore
import FleetGeometry
import FleetPositioning
import Foundation
import Synchronization

/// The recorded drive in Fixtures: 1,024 fixes at 1 Hz through Monaco, from the Palace to Port
/// Hercule (a 5-minute stop), the Casino (a 90-second stop) and Larvotto; every 20th fix is a
/// 150 m-accuracy outlier, the rest have 5–8 m accuracy and a few metres of noise.
enum RecordedDrive {
  static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/monaco-drive.gpx")
  static let fixes: [LocationFix] = try! TrackFile.read(contentsOf: url)
}

/// A provider the test feeds by hand; each `fixes()` call starts a new sequence, and only the
/// newest one is fed.
final class ManualProvider: LocationProvider {
  let state = Mutex<(continuation: AsyncThrowingStream<LocationFix, any Error>.Continuation?, starts: Int)>((nil, 0))
  let cached: LocationFix?

  init(cached: LocationFix? = nil) { self.cached = cached }

  func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: LocationFix.self)
    state.withLock {
      $0.continuation = continuation
      $0.starts += 1
    }
    return stream
  }

  func lastKnownFix() async -> LocationFix? { cached }

  var starts: Int { state.withLock { $0.starts } }
  var isStarted: Bool { state.withLock { $0.continuation != nil } }

  func send(_ fix: LocationFix) { _ = state.withLock { $0.continuation?.yield(fix) } }
  func fail(_ error: any Error) { state.withLock { $0.continuation?.finish(throwing: error) } }
}

/// Collects what a stream yields, in a task the test cancels.
final class Collected<Value: Sendable>: Sendable {
  final class Store: Sendable {
    let values = Mutex<[Value]>([])
  }
  let store = Store()
  let task: Task<Void, Never>

  init(_ stream: AsyncStream<Value>) {
    let store = store
    task = Task {
      for await value in stream { store.values.withLock { $0.append(value) } }
    }
  }

  var all: [Value] { store.values.withLock { $0 } }
  deinit { task.cancel() }
}

func fix(_ latitude: Double, _ longitude: Double, accuracy: Double? = 5, at seconds: Double) -> LocationFix {
  LocationFix(
    coordinate: LatLng(latitude: latitude, longitude: longitude), horizontalAccuracy: accuracy,
    time: Date(timeIntervalSince1970: 1_790_000_000 + seconds))
}

struct ConditionNotMet: Error, CustomStringConvertible {
  var description: String
}

/// Polls until `condition` holds; generous, since a loaded machine may starve the test's tasks.
func eventually(
  _ what: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + timeout
  while ContinuousClock.now < deadline {
    if try await condition() { return }
    try await Task.sleep(for: .milliseconds(10))
  }
  throw ConditionNotMet(description: "timed out waiting for \(what)")
}
