import Foundation
import Synchronization

/// Any provider, remembering its newest fix — in memory, and in `file` when one is given, so
/// that the next start of the app has a position before the first new fix arrives (what Core
/// Location's cached `location` gives on Apple platforms).
///
/// The file is JSON, rewritten atomically at most once per `writeInterval` of fix time, and
/// on the last fix of a sequence; a missing or unreadable file means no cached fix.
public final class CachingLocationProvider: LocationProvider {
  public let base: any LocationProvider
  public let file: URL?
  public let writeInterval: TimeInterval
  let state = Mutex<(newest: LocationFix?, written: Date?)>((nil, nil))

  public init(_ base: any LocationProvider, file: URL? = nil, writeInterval: TimeInterval = 30) {
    self.base = base
    self.file = file
    self.writeInterval = writeInterval
  }

  public func lastKnownFix() async -> LocationFix? {
    if let newest = state.withLock({ $0.newest }) { return newest }
    if let fromBase = await base.lastKnownFix() { return fromBase }
    guard let file, let data = try? Data(contentsOf: file) else { return nil }
    return try? JSONDecoder().decode(LocationFix.self, from: data)
  }

  public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    let upstream = base.fixes()
    let cache = self
    let iterator = UpstreamIterator(upstream.makeAsyncIterator())
    return AsyncThrowingStream {
      guard let fix = try await iterator.next() else {
        cache.persist(force: true)
        return nil
      }
      cache.remember(fix)
      return fix
    }
  }

  func remember(_ fix: LocationFix) {
    let due = state.withLock { s -> Bool in
      if let newest = s.newest, newest.time > fix.time { return false }
      s.newest = fix
      guard let written = s.written else { return true }
      return fix.time.timeIntervalSince(written) >= writeInterval
    }
    if due { persist(force: false) }
  }

  func persist(force: Bool) {
    guard let file, let fix = state.withLock({ $0.newest }) else { return }
    guard let data = try? JSONEncoder().encode(fix) else { return }
    // A cache: failing to write it costs only the head start of the next launch.
    if (try? data.write(to: file, options: .atomic)) != nil {
      state.withLock { $0.written = fix.time }
    }
  }
}

/// The upstream iterator of one cached sequence.
// @unchecked: an AsyncThrowingStream is consumed by one task, one `next()` at a time, so the
// iterator is never used concurrently.
final class UpstreamIterator: @unchecked Sendable {
  var base: AsyncThrowingStream<LocationFix, any Error>.AsyncIterator
  init(_ base: AsyncThrowingStream<LocationFix, any Error>.AsyncIterator) { self.base = base }
  func next() async throws -> LocationFix? { try await base.next() }
}
