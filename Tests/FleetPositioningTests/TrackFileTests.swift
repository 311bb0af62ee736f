import FleetPositioning
import FleetTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Track files and replay")
struct TrackFileTests {
  static let gpx = """
    <?xml version="1.0" encoding="UTF-8"?>
    <gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
      <trk><name>Monaco</name><trkseg>
        <trkpt lat="43.7300" lon="7.4200"><ele>12.5</ele><time>2026-11-22T10:00:00Z</time><hdop>1.2</hdop></trkpt>
        <trkpt lat="43.7310" lon="7.4210"><time>2026-11-22T10:00:05.500Z</time><course>45</course><speed>8.5</speed></trkpt>
        <trkpt lat="43.7320" lon="7.4220"></trkpt>
        <trkpt lat="43.7305" lon="7.4205"><time>2026-11-22T10:00:02Z</time></trkpt>
      </trkseg></trk>
    </gpx>
    """

  @Test func gpxTrackPointsInTimeOrder() throws {
    let fixes = try TrackFile.parse(Data(Self.gpx.utf8))
    #expect(fixes.count == 3, "the point without a time is skipped")
    #expect(fixes.map(\.coordinate.latitude) == [43.7300, 43.7305, 43.7310])
    #expect(fixes[0].altitude == 12.5)
    #expect(fixes[0].horizontalAccuracy == 6)
    #expect(fixes[2].heading == 45)
    #expect(fixes[2].speed == 8.5)
    #expect(fixes[2].time.timeIntervalSince(fixes[0].time) == 5.5)
  }

  /// Real receiver output (u-blox style): RMC with GGA at the same instant, one bad checksum,
  /// one void RMC.
  static let nmea = """
    $GPGGA,100000.00,4343.8000,N,00725.2000,E,1,08,0.9,15.0,M,47.0,M,,*51
    $GPRMC,100000.00,A,4343.8000,N,00725.2000,E,10.0,90.0,221126,,,A*59
    $GPRMC,100001.00,A,4343.8100,N,00725.2100,E,10.0,90.0,221126,,,A*00
    $GPRMC,100002.00,V,4343.8200,N,00725.2200,E,10.0,90.0,221126,,,N*43
    $GNRMC,100003.00,A,4343.8300,S,00725.2300,W,0.0,,221126,,,A*6D
    """

  @Test func nmeaSentencesWithChecksums() throws {
    let fixes = try TrackFile.parse(Data(Self.nmea.utf8))
    #expect(fixes.count == 2, "bad checksum and void fixes are skipped")
    #expect(abs(fixes[0].coordinate.latitude - (43 + 43.8 / 60)) < 1e-9)
    #expect(abs(fixes[0].coordinate.longitude - (7 + 25.2 / 60)) < 1e-9)
    #expect(abs(fixes[0].speed! - 10 * 1852 / 3600) < 1e-9)
    #expect(fixes[0].heading == 90)
    #expect(abs(fixes[0].horizontalAccuracy! - 4.5) < 1e-9)
    #expect(fixes[0].altitude == 15)
    #expect(fixes[1].coordinate.latitude < 0 && fixes[1].coordinate.longitude < 0, "S and W are negative")
    #expect(fixes[1].time.timeIntervalSince(fixes[0].time) == 3)
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    #expect(
      calendar.dateComponents([.year, .month, .day, .hour], from: fixes[0].time)
        == DateComponents(year: 2026, month: 11, day: 22, hour: 10))
  }

  @Test func unreadableAndEmptyTracksFailClearly() throws {
    #expect(throws: LocationError.self) { try TrackFile.parse(Data("hello".utf8)) }
    #expect(throws: LocationError.self) { try TrackFile.parse(Data("<gpx><trk><trkpt".utf8)) }
    let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString).gpx")
    try Data("<gpx></gpx>".utf8).write(to: empty)
    defer { try? FileManager.default.removeItem(at: empty) }
    let error = #expect(throws: LocationError.self) { try TrackFile.read(contentsOf: empty) }
    #expect(error?.code == .emptyTrack)
  }

  @Test func replayKeepsTheRecordedSpacingDividedBySpeedup() async throws {
    let time = TestTime()
    let waited = Mutex<[Duration]>([])
    let clock = PositioningClock(
      now: { time.now },
      sleep: { duration in
        waited.withLock { $0.append(duration) }
        time.advance(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
      })
    let track = try TrackFile.parse(Data(Self.gpx.utf8))
    let replay = ReplayLocationProvider(track: track, speedup: 2, clock: clock)
    var fixes: [LocationFix] = []
    for try await fix in replay.fixes() { fixes.append(fix) }
    #expect(fixes.map(\.coordinate) == track.map(\.coordinate))
    // Recorded 0, 2, 5.5 s apart; at double speed 1 and 1.75 s of waiting.
    #expect(waited.withLock { $0 } == [.milliseconds(1000), .milliseconds(1750)])
    // Re-stamped as live: the first fix is now, the rest follow at the replay's pace.
    #expect(fixes[0].time == Date(timeIntervalSince1970: 1_800_000_000))
    #expect(fixes[2].time.timeIntervalSince(fixes[0].time) == 2.75)
  }
}
