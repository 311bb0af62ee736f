import FleetCore
import FleetRouting
import Foundation
import Synchronization

/// The traffic usually seen at each time of the week: per directed road edge and 15-minute bin
/// of the week (in `timeZone`), the mean slowdown observed there. A ride booked for 8:00
/// tomorrow is timed with what was learned at 8:00 on that weekday. Kept in the store
/// (`TrafficProfileStore`), so that it outlives restarts.
public final class WeeklyTraffic: TrafficProfiles {
  public static let binSeconds = 15 * 60
  public static let binsPerWeek = 7 * 24 * 3600 / binSeconds
  /// Observations a bin's mean is taken over before newer ones count more than older ones: the
  /// usual traffic follows changes (a road works, a new junction) within weeks.
  public static let memory: Float = 50

  /// The number of directed road edges (`TurnGraph.directed` order).
  public let roads: Int
  public let timeZone: TimeZone
  let calendar: Calendar

  struct Entry: Sendable {
    var slowdown: Float
    var samples: UInt32
  }

  struct State: Sendable {
    /// By bin, then directed road edge.
    var bins: [Int: [Int64: Entry]] = [:]
    /// Entries changed since the store last took them.
    var changed: Set<Key> = []
  }

  struct Key: Hashable, Sendable {
    var bin: Int
    var road: Int64
  }

  let state = Mutex(State())

  public init(roads: Int, timeZone: TimeZone = .current) {
    self.roads = roads
    self.timeZone = timeZone
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    self.calendar = calendar
  }

  /// Monday 00:00–00:15 is bin 0, Sunday 23:45–24:00 the last, in `timeZone`.
  public func bin(of date: Date) -> Int {
    let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
    // Calendar's weekday: 1 is Sunday.
    let day = ((parts.weekday ?? 2) + 5) % 7
    return (day * 24 * 3600 + (parts.hour ?? 0) * 3600 + (parts.minute ?? 0) * 60) / Self.binSeconds
  }

  /// Records that each of `roads` was driven at `slowdown` times its free-flow time at `time`.
  /// A road with nothing learned in that bin that drove at free flow stays unrecorded: free
  /// flow is what an absent entry means.
  func record(_ roads: [Int64], _ slowdown: Double, at time: Date) {
    guard !roads.isEmpty, slowdown.isFinite else { return }
    let bin = bin(of: time)
    let value = Float(slowdown)
    state.withLock { state in
      for road in roads where road >= 0 && road < self.roads {
        var entry = state.bins[bin]?[road]
        guard entry != nil || value > 1 + RoadSlowdowns.resolution else { continue }
        var known = entry ?? Entry(slowdown: 1, samples: 0)
        known.samples += 1
        known.slowdown += (value - known.slowdown) / min(Float(known.samples), Self.memory)
        entry = known
        state.bins[bin, default: [:]][road] = entry
        state.changed.insert(Key(bin: bin, road: road))
      }
    }
  }

  public func slowdowns(bin: Int) -> RoadSlowdowns {
    let entries = state.withLock { $0.bins[bin] ?? [:] }
    return RoadSlowdowns(roads: roads, slowed: entries.lazy.map { (Int($0.key), $0.value.slowdown) })
  }

  /// Entries learned, over every bin.
  public var entryCount: Int { state.withLock { $0.bins.values.reduce(0) { $0 + $1.count } } }

  /// The entries changed since the last call, for the store.
  public func takeChanges() -> [TrafficProfileEntry] {
    state.withLock { state in
      let changed = state.changed.compactMap { key -> TrafficProfileEntry? in
        guard let entry = state.bins[key.bin]?[key.road] else { return nil }
        return TrafficProfileEntry(
          road: key.road, bin: key.bin, slowdown: Double(entry.slowdown), samples: Int(entry.samples))
      }
      state.changed = []
      return changed
    }
  }

  /// Puts back changes the store could not take, to be saved with the next ones.
  public func keepChanges(_ entries: [TrafficProfileEntry]) {
    state.withLock { state in
      for entry in entries { state.changed.insert(Key(bin: entry.bin, road: entry.road)) }
    }
  }

  /// Takes in what the store kept (at start); entries for roads or bins this graph does not have
  /// are left out.
  public func load(_ entries: [TrafficProfileEntry]) {
    state.withLock { state in
      for entry in entries
      where entry.road >= 0 && entry.road < roads && (0..<Self.binsPerWeek).contains(entry.bin)
        && entry.slowdown.isFinite && entry.slowdown >= 1
      {
        state.bins[entry.bin, default: [:]][entry.road] = Entry(
          slowdown: Float(entry.slowdown), samples: UInt32(clamping: max(entry.samples, 1)))
      }
    }
  }
}
