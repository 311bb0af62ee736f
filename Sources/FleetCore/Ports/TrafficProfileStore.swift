import Foundation

/// One road direction's usual slowdown in one time-of-week bin, as the store keeps it.
public struct TrafficProfileEntry: Sendable, Hashable {
  /// The directed road edge: its index in the road graph, times two, plus one when driven
  /// against the way's direction.
  public var road: Int64
  /// The 15-minute bin of the week, 0 on Monday at midnight.
  public var bin: Int
  /// How many times its free-flow time the road takes then (1 or more).
  public var slowdown: Double
  /// How many observations the mean is over.
  public var samples: Int

  public init(road: Int64, bin: Int, slowdown: Double, samples: Int) {
    self.road = road
    self.bin = bin
    self.slowdown = slowdown
    self.samples = samples
  }
}

/// The store port of the usual traffic by time of the week. Entries belong to one road graph
/// (`graph`: a fingerprint of its road numbering), so that a new extract starts afresh.
public protocol TrafficProfileStore: Sendable {
  func trafficProfile(graph: String) async throws -> [TrafficProfileEntry]
  /// Inserts or replaces `entries` (by graph, road and bin).
  func saveTrafficProfile(graph: String, _ entries: [TrafficProfileEntry]) async throws
}
