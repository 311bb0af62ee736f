import FleetGeometry
import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// Recorded tracks: GPX files and NMEA 0183 logs, read into fixes in time order.
public enum TrackFile {
  /// Reads a GPX or NMEA file, told apart by its content.
  public static func read(contentsOf url: URL) throws(LocationError) -> [LocationFix] {
    let data: Data
    do { data = try Data(contentsOf: url) } catch {
      throw LocationError(.unreadableTrack, "cannot read \(url.path): \(error.localizedDescription)")
    }
    let fixes = try parse(data, name: url.lastPathComponent)
    guard !fixes.isEmpty else { throw LocationError(.emptyTrack, "\(url.lastPathComponent) holds no timed position") }
    return fixes
  }

  /// Parses GPX (XML) or NMEA (text lines starting with `$`).
  public static func parse(_ data: Data, name: String = "track") throws(LocationError) -> [LocationFix] {
    let head = String(decoding: data.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    if head.hasPrefix("<") { return try GPX.parse(data, name: name) }
    if head.hasPrefix("$") || head.hasPrefix("!") { return NMEA.parse(String(decoding: data, as: UTF8.self)) }
    throw LocationError(.unreadableTrack, "\(name) is neither GPX nor NMEA")
  }
}

/// GPX 1.0 and 1.1: track points (`trkpt`), else route points (`rtept`), with `time`, `ele`,
/// and `course`/`speed` (GPX 1.0, or in extensions) and `hdop`. Points without a time are
/// skipped: a replay needs to know when each position was.
enum GPX {
  static func parse(_ data: Data, name: String) throws(LocationError) -> [LocationFix] {
    let reader = Reader()
    let parser = XMLParser(data: data)
    parser.delegate = reader
    // Some XMLParser builds accept a document cut short: unclosed elements count as malformed.
    guard parser.parse(), reader.depth == 0, reader.sawRoot else {
      let message = parser.parserError.map { "\($0)" } ?? "the document ends inside an element"
      throw LocationError(.unreadableTrack, "\(name) is not valid GPX: \(message)")
    }
    let points = reader.trackPoints.isEmpty ? reader.routePoints : reader.trackPoints
    return points.sorted { $0.time < $1.time }
  }

  /// XMLParser's delegate; it lives only for one synchronous parse.
  final class Reader: NSObject, XMLParserDelegate {
    var trackPoints: [LocationFix] = []
    var routePoints: [LocationFix] = []
    var current: (kind: String, lat: Double, lon: Double, fields: [String: String])?
    var text = ""
    var depth = 0
    var sawRoot = false

    func parser(
      _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
      attributes: [String: String] = [:]
    ) {
      let local = element.split(separator: ":").last.map(String.init) ?? element
      if depth == 0 { sawRoot = local == "gpx" }
      depth += 1
      if local == "trkpt" || local == "rtept", let lat = attributes["lat"].flatMap(Double.init),
        let lon = attributes["lon"].flatMap(Double.init)
      {
        current = (local, lat, lon, [:])
      }
      text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
      depth -= 1
      let local = element.split(separator: ":").last.map(String.init) ?? element
      guard var point = current else { return }
      if local == point.kind {
        current = nil
        guard let time = point.fields["time"].flatMap(Timestamps.parse) else { return }
        let coordinate = LatLng(latitude: point.lat, longitude: point.lon)
        guard coordinate.isOnGlobe else { return }
        let fix = LocationFix(
          coordinate: coordinate,
          // A receiver's HDOP times a typical 5 m range error: the usual rough conversion.
          horizontalAccuracy: point.fields["hdop"].flatMap(Double.init).map { $0 * 5 },
          altitude: point.fields["ele"].flatMap(Double.init),
          heading: (point.fields["course"] ?? point.fields["heading"]).flatMap(Double.init),
          speed: point.fields["speed"].flatMap(Double.init), time: time, sensor: .gps)
        if point.kind == "trkpt" { trackPoints.append(fix) } else { routePoints.append(fix) }
      } else {
        point.fields[local] = text.trimmingCharacters(in: .whitespacesAndNewlines)
        current = point
      }
    }
  }
}

/// NMEA 0183: RMC sentences (time, date, position, speed, course) give the fixes; GGA
/// sentences at the same time add HDOP and altitude. Sentences with a wrong checksum, and RMC
/// marked void (status V), are skipped — as receivers' own consumers do.
enum NMEA {
  static func parse(_ text: String) -> [LocationFix] {
    var fixes: [LocationFix] = []
    var quality: [String: (hdop: Double?, altitude: Double?)] = [:]
    var rmcs: [(time: String, fix: LocationFix)] = []
    for line in text.split(whereSeparator: \.isNewline) {
      guard let fields = sentence(String(line)) else { continue }
      let type = fields[0].suffix(3)
      if type == "GGA", fields.count > 9, !fields[1].isEmpty {
        quality[String(fields[1])] = (Double(fields[8]), Double(fields[9]))
      } else if type == "RMC", fields.count > 9, fields[2] == "A",
        let lat = coordinate(fields[3], fields[4], degreeDigits: 2),
        let lon = coordinate(fields[5], fields[6], degreeDigits: 3),
        let time = date(time: fields[1], date: fields[9])
      {
        let knots = Double(fields[7])
        rmcs.append(
          (
            String(fields[1]),
            LocationFix(
              coordinate: LatLng(latitude: lat, longitude: lon), heading: Double(fields[8]),
              speed: knots.map { $0 * 1852 / 3600 },
              time: time, sensor: .gps)
          ))
      }
    }
    for (time, var fix) in rmcs {
      if let q = quality[time] {
        fix.horizontalAccuracy = q.hdop.map { $0 * 5 }
        fix.altitude = q.altitude
      }
      fixes.append(fix)
    }
    return fixes.sorted { $0.time < $1.time }
  }

  /// The fields of a sentence whose checksum (XOR of the bytes between `$` and `*`) holds.
  static func sentence(_ line: String) -> [Substring]? {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    guard trimmed.hasPrefix("$"), let star = trimmed.lastIndex(of: "*") else { return nil }
    let body = trimmed[trimmed.index(after: trimmed.startIndex)..<star]
    guard let expected = UInt8(trimmed[trimmed.index(after: star)...].prefix(2), radix: 16) else { return nil }
    guard body.utf8.reduce(0, ^) == expected else { return nil }
    return body.split(separator: ",", omittingEmptySubsequences: false)
  }

  /// `ddmm.mmmm` (or `dddmm.mmmm`) and a hemisphere letter, in signed degrees.
  static func coordinate(_ value: Substring, _ hemisphere: Substring, degreeDigits: Int) -> Double? {
    guard value.count > degreeDigits, let degrees = Double(value.prefix(degreeDigits)),
      let minutes = Double(value.dropFirst(degreeDigits)), minutes < 60
    else { return nil }
    let magnitude = degrees + minutes / 60
    switch hemisphere {
    case "N", "E": return magnitude
    case "S", "W": return -magnitude
    default: return nil
    }
  }

  /// `hhmmss.ss` and `ddmmyy` in UTC (two-digit years are 2000–2099).
  static func date(time: Substring, date: Substring) -> Date? {
    guard time.count >= 6, date.count == 6, let hh = Int(time.prefix(2)), let mm = Int(time.dropFirst(2).prefix(2)),
      let ss = Double(time.dropFirst(4)), let day = Int(date.prefix(2)), let month = Int(date.dropFirst(2).prefix(2)),
      let year = Int(date.suffix(2))
    else { return nil }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let components = DateComponents(year: 2000 + year, month: month, day: day, hour: hh, minute: mm, second: 0)
    guard let midnight = calendar.date(from: components), (0..<24).contains(hh), (0..<60).contains(mm), ss < 61 else {
      return nil
    }
    return midnight.addingTimeInterval(ss)
  }
}

/// RFC 3339 times as GPX and gpsd write them, with or without fractional seconds.
enum Timestamps {
  static func parse(_ text: String) -> Date? {
    if let date = try? Date(text, strategy: .iso8601) { return date }
    return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
  }
}
