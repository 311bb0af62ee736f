import Foundation

/// Trips that ended (COMPLETE or CANCELED), in the order they last changed, so that the
/// retention sweep finds the ones due without scanning every trip. An entry is appended each
/// time an ended trip is put in memory; one whose trip changed again since (a later entry stands
/// for it) or is gone is skipped when it comes up. Entries put back out of order (a failed
/// commit, another instance's older change) only wait behind newer ones: deletion is late, never
/// early.
struct EndedTrips: Sendable {
  struct Entry: Sendable {
    var time: Date
    var provider: String
    var id: String
  }

  private var entries: [Entry] = []
  private var head = 0

  var first: Entry? { head < entries.count ? entries[head] : nil }

  mutating func append(_ trip: Trip) {
    entries.append(Entry(time: trip.updateTime, provider: trip.provider, id: trip.id))
  }

  mutating func removeFirst() {
    head += 1
    // The consumed front goes once it is the larger half, so the array never holds much more
    // than the trips still waiting.
    if head >= 1024, head * 2 >= entries.count {
      entries.removeFirst(head)
      head = 0
    }
  }
}
