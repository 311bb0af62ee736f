import FleetCore
import FleetPositioning
import Testing

@testable import FleetLocation

/// The filters on the recorded drive: every count here is what an app would receive.
@Suite struct LocationFilterTests {
  let drive = RecordedDrive.fixes

  func delivered(_ options: LocationOptions) -> (fixes: [LocationFix], transitions: [(LocationFilter.Transition, Int)])
  {
    var filter = LocationFilter(options: options)
    var fixes: [LocationFix] = []
    var transitions: [(LocationFilter.Transition, Int)] = []
    for (index, fix) in drive.enumerated() {
      let (verdict, transition) = filter.consider(fix)
      if let transition { transitions.append((transition, index)) }
      if verdict == .deliver { fixes.append(fix) }
    }
    return (fixes, transitions)
  }

  @Test func withoutOptionsEveryFixIsDelivered() {
    #expect(drive.count == 1_024)
    #expect(delivered(LocationOptions()).fixes.count == drive.count)
  }

  @Test func theAccuracyFilterDropsExactlyTheWorseFixes() {
    let kept = delivered(LocationOptions(desiredAccuracy: 50)).fixes
    let expected = drive.filter { ($0.horizontalAccuracy ?? 0) <= 50 }
    #expect(kept == expected)
    #expect(kept.count == 1_024 - 51)  // every 20th fix is a 150 m outlier
  }

  @Test(arguments: [10.0, 50.0])
  func theDistanceFilterKeepsDeliveriesApartAndDropsOnlyWhatIsClose(metres: Double) {
    let kept = delivered(LocationOptions(desiredAccuracy: 50, distanceFilter: metres)).fixes
    for (a, b) in zip(kept, kept.dropFirst()) { #expect(a.coordinate.distance(to: b.coordinate) >= metres) }
    // And nothing was dropped that was far enough: replay it by hand.
    var last: LocationFix?
    var expected = 0
    for fix in drive where (fix.horizontalAccuracy ?? 0) <= 50 {
      if let previous = last, previous.coordinate.distance(to: fix.coordinate) < metres { continue }
      last = fix
      expected += 1
    }
    #expect(kept.count == expected)
    #expect(kept.count < drive.count / 2)
  }

  @Test(arguments: [ActivityType.other, .fitness])
  func updatesPauseDuringTheLongStopOnlyAndResumeOnMovement(activity: ActivityType) {
    let options = LocationOptions(desiredAccuracy: 50, activityType: activity, pausesWhenStationary: true)
    let (fixes, transitions) = delivered(options)
    // One pause (the 5-minute stop at the port), none at the 90-second stop, one resume.
    #expect(transitions.map(\.0) == [.paused, .resumed])
    guard transitions.count == 2 else { return }
    let pausedAt = drive[transitions[0].1].time
    let resumedAt = drive[transitions[1].1].time
    let pause = resumedAt.timeIntervalSince(pausedAt)
    #expect(pause > 100 && pause < 300 - activity.stationaryDuration.seconds + 30)
    #expect(!fixes.contains { $0.time > pausedAt && $0.time < resumedAt })
    #expect(fixes.count < delivered(LocationOptions(desiredAccuracy: 50)).fixes.count)
  }

  @Test func automotiveWaitsLongerBeforePausing() {
    let other = delivered(LocationOptions(desiredAccuracy: 50, activityType: .other, pausesWhenStationary: true))
    let car = delivered(LocationOptions(desiredAccuracy: 50, activityType: .automotive, pausesWhenStationary: true))
    #expect(car.transitions.map(\.0) == [.paused, .resumed])
    #expect(car.fixes.count > other.fixes.count)
  }

  @Test func turningPauseOffResumesAtOnce() {
    var filter = LocationFilter(options: LocationOptions(pausesWhenStationary: true))
    for second in 0...200 { _ = filter.consider(fix(43.73, 7.42, at: Double(second))) }
    #expect(filter.isPaused)
    filter.options.pausesWhenStationary = false
    let (verdict, transition) = filter.consider(fix(43.73, 7.42, at: 201))
    #expect(transition == .resumed)
    #expect(verdict == .deliver)
  }

  @Test func aFixWithoutAStatedAccuracyIsKept() {
    var filter = LocationFilter(options: LocationOptions(desiredAccuracy: 10))
    #expect(filter.consider(fix(43.73, 7.42, accuracy: nil, at: 0)).verdict == .deliver)
    #expect(filter.consider(fix(43.74, 7.42, accuracy: 11, at: 1)).verdict == .dropInaccurate)
  }
}

extension Duration {
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
