import FleetCore
import FleetRouting
import Foundation
import Testing

@testable import FleetProgress

@Suite("Usual traffic by time of the week")
struct WeeklyTrafficTests {
  let utc = TimeZone(identifier: "UTC")!
  /// Monday 30 November 2026, 00:00 UTC.
  let monday = Date(timeIntervalSince1970: 1_795_996_800)

  @Test func binsRunFromMondayMidnightInTheTimeZone() {
    let weekly = WeeklyTraffic(roads: 10, timeZone: utc)
    #expect(weekly.bin(of: monday) == 0)
    #expect(weekly.bin(of: monday.addingTimeInterval(8 * 3600 + 14 * 60)) == 32)
    #expect(weekly.bin(of: monday.addingTimeInterval(7 * 86_400 - 60)) == WeeklyTraffic.binsPerWeek - 1)
    #expect(weekly.bin(of: monday.addingTimeInterval(7 * 86_400)) == 0)
    // In Adelaide (UTC+10:30 in summer) Monday midnight UTC is Monday 10:30.
    let adelaide = WeeklyTraffic(roads: 10, timeZone: TimeZone(identifier: "Australia/Adelaide")!)
    #expect(adelaide.bin(of: monday) == 42)
  }

  /// A slowed road is learned in its bin only; free flow on a road with nothing learned is not
  /// kept; the mean follows later observations; changes are taken once.
  @Test func slowRoadsAreKeptPerBinAndFreeFlowIsTheDefault() {
    let weekly = WeeklyTraffic(roads: 10, timeZone: utc)
    let eight = monday.addingTimeInterval(8 * 3600)
    weekly.record([3], 4, at: eight)
    weekly.record([5], 1, at: eight)
    weekly.record([3], 2, at: eight.addingTimeInterval(60))
    let bin = weekly.bin(of: eight)
    let slowdowns = weekly.slowdowns(bin: bin)
    #expect(slowdowns.factors.count == 10)
    #expect(slowdowns.factors[3] == 3)
    #expect(slowdowns.factors[5] == 1)
    #expect(weekly.slowdowns(bin: bin + 1).isFreeFlow)
    let changes = weekly.takeChanges()
    #expect(changes == [TrafficProfileEntry(road: 3, bin: bin, slowdown: 3, samples: 2)])
    #expect(weekly.takeChanges().isEmpty)
    // What the store gives back at the next start; roads this graph lacks are left out.
    let restarted = WeeklyTraffic(roads: 10, timeZone: utc)
    restarted.load(changes + [TrafficProfileEntry(road: 40, bin: bin, slowdown: 2, samples: 1)])
    #expect(restarted.slowdowns(bin: bin) == slowdowns)
    #expect(restarted.entryCount == 1)
  }
}
