import FleetGeometry
import Foundation

/// A point stored as integer microdegrees, as OSRM stores it: 8 bytes, and exact to about 10 cm.
public struct FixedCoordinate: Sendable, Hashable, Codable {
  public var latitudeE6: Int32
  public var longitudeE6: Int32

  public init(latitudeE6: Int32, longitudeE6: Int32) {
    self.latitudeE6 = latitudeE6
    self.longitudeE6 = longitudeE6
  }

  public init(latitude: Double, longitude: Double) {
    latitudeE6 = Int32((latitude * 1e6).rounded())
    longitudeE6 = Int32((longitude * 1e6).rounded())
  }

  public var latitude: Double { Double(latitudeE6) / 1e6 }
  public var longitude: Double { Double(longitudeE6) / 1e6 }
  public var latLng: LatLng { LatLng(latitude: latitude, longitude: longitude) }
}

enum Geo {
  static let earthRadius = LatLng.earthRadius
  static let degreeToRadian = Double.pi / 180

  /// Metres between two points on the WGS84 ellipsoid, flat over the short distances roads are
  /// measured in (Mapbox's "cheap ruler"), with the ruler of the 0.05° band of latitude the pair's
  /// middle falls in (bands closed at their poleward end), as OSRM measures its segments: both
  /// engines then count the same metres.
  static func distance(_ a: FixedCoordinate, _ b: FixedCoordinate) -> Double {
    // OSRM averages fixed-point latitudes in integers (truncating).
    let middle = (Int64(a.latitudeE6) + Int64(b.latitudeE6)) / 2
    return distance(middleE6: middle, a.latitude, a.longitude, b.latitude, b.longitude)
  }

  /// Metres along a polyline.
  static func length(of line: [FixedCoordinate]) -> Double {
    zip(line, line.dropFirst()).reduce(0) { $0 + distance($1.0, $1.1) }
  }

  static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    distance(middleE6: Int64(((lat1 + lat2) / 2 * 1e6).rounded()), lat1, lon1, lat2, lon2)
  }

  private static func distance(
    middleE6: Int64, _ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double
  ) -> Double {
    let ruler = ruler(middleE6: middleE6)
    let dx = remainder(lon1 - lon2, 360) * ruler.kx
    let dy = (lat1 - lat2) * ruler.ky
    return (dx * dx + dy * dy).squareRoot()
  }

  /// The ruler of the band a pair's middle latitude (microdegrees) falls in.
  static func ruler(middleE6: Int64) -> (kx: Double, ky: Double) {
    rulers[min(Int(max(abs(middleE6) - 1, 0) / rulerBandE6), rulers.count - 1)]
  }

  static let rulerBandE6: Int64 = 50_000
  static let rulerBand = 0.05
  /// Metres per degree of longitude (kx) and latitude (ky) at the middle of each band.
  static let rulers: [(kx: Double, ky: Double)] = (0..<1800).map { n in
    let equatorial = 6_378_137.0
    let flattening = 1 / 298.257223563
    let e2 = flattening * (2 - flattening)
    let metresPerDegree = degreeToRadian * equatorial
    let cosLatitude = cos((Double(n) + 0.5) * rulerBand * degreeToRadian)
    let w2 = 1 / (1 - e2 * (1 - cosLatitude * cosLatitude))
    let w = w2.squareRoot()
    return (metresPerDegree * w * cosLatitude, metresPerDegree * w * w2 * (1 - e2))
  }

  /// Initial bearing from a to b, degrees clockwise from north in [0, 360), on the ruler
  /// `distance` uses, as OSRM's `coordinate_calculation::bearing` takes it. Guidance compares
  /// angles with thresholds, and the sphere's great-circle bearing differed from OSRM's by up to
  /// a tenth of a degree (the ellipsoid's east-west scale): enough to put a turn on Monaco's
  /// Moyenne Corniche at 160.03°, straight on, where OSRM has it just under 160°, slight right.
  static func bearing(_ a: FixedCoordinate, _ b: FixedCoordinate) -> Double {
    let ruler = ruler(middleE6: (Int64(a.latitudeE6) + Int64(b.latitudeE6)) / 2)
    let dx = remainder(b.longitude - a.longitude, 360) * ruler.kx
    let dy = (b.latitude - a.latitude) * ruler.ky
    let degrees = atan2(dx, dy) / degreeToRadian
    return degrees < 0 ? degrees + 360 : degrees
  }

  /// The closest point to p on segment a–b, as the fraction along it, in a local flat projection
  /// (exact enough over a road segment).
  static func projection(of p: FixedCoordinate, onto a: FixedCoordinate, _ b: FixedCoordinate) -> Double {
    let scale = cos(Double(a.latitudeE6 + b.latitudeE6) / 2e6 * degreeToRadian)
    let ax = Double(a.longitudeE6) * scale
    let ay = Double(a.latitudeE6)
    let dx = Double(b.longitudeE6) * scale - ax
    let dy = Double(b.latitudeE6) - ay
    let length2 = dx * dx + dy * dy
    guard length2 > 0 else { return 0 }
    let t = ((Double(p.longitudeE6) * scale - ax) * dx + (Double(p.latitudeE6) - ay) * dy) / length2
    return min(max(t, 0), 1)
  }

  /// The angle at `b` from a→b to b→c as OSRM's `computeAngle` takes it: 180 straight on, below
  /// 180 to the right. Planar, on web-Mercator coordinates, with OSRM's table arctangent
  /// (`atan2_lookup`), not from bearings: the two differ by a few hundredths of a degree, which
  /// decides a turn sitting on a bound (Square Lamark's loop in Monaco leaves at 210.04° this way,
  /// outside a segregated crossing's straight band, and at 209.997° from bearings).
  static func turnAngle(_ a: FixedCoordinate, _ b: FixedCoordinate, _ c: FixedCoordinate) -> Double {
    if a == b || b == c { return 180 }
    let v1x = Double(a.longitudeE6 - b.longitudeE6) / 1e6
    let v1y = mercatorY(a.latitude) - mercatorY(b.latitude)
    let v2x = Double(c.longitudeE6 - b.longitudeE6) / 1e6
    let v2y = mercatorY(c.latitude) - mercatorY(b.latitude)
    var angle = (tableArctangent(v2y, v2x) - tableArctangent(v1y, v1x)) * 180 / Double.pi
    while angle < 0 { angle += 360 }
    return angle
  }

  /// OSRM's `web_mercator::latToY`, in degrees.
  static func mercatorY(_ latitude: Double) -> Double {
    let clamped = min(max(latitude, -85.051128779806592378), 85.051128779806592378)
    let f = sin(clamped * degreeToRadian)
    return 0.5 * log((1 + f) / (1 - f)) / degreeToRadian
  }

  /// OSRM's `atan_table`: the arctangent of i/4095 in 65,535ths of 45°, rounded down.
  static let arctangentTable: [UInt16] = (0..<4096).map {
    UInt16((atan(Double($0) / 4095) * 4 / Double.pi * 0xFFFF).rounded(.down))
  }

  /// OSRM's `atan2_lookup`: by octant, the table entry below the ratio, not interpolated.
  static func tableArctangent(_ y: Double, _ x: Double) -> Double {
    if abs(x) < .ulpOfOne { return y >= 0 ? Double.pi / 2 : -Double.pi / 2 }
    var octant = 0
    var (x, y) = (x, y)
    if x < 0 {
      octant = 1
      x = -x
    }
    if y < 0 {
      octant |= 2
      y = -y
    }
    var t = y / x
    if t > 1 {
      octant |= 4
      t = 1 / t
    }
    let angle = Double(arctangentTable[Int(t * 4095)]) / (4 / Double.pi * 0xFFFF)
    switch octant {
    case 1: return Double.pi - angle
    case 2: return -angle
    case 3: return -Double.pi + angle
    case 4: return Double.pi / 2 - angle
    case 5: return Double.pi / 2 + angle
    case 6: return -Double.pi / 2 + angle
    case 7: return -Double.pi / 2 - angle
    default: return angle
    }
  }

  static func interpolate(_ a: FixedCoordinate, _ b: FixedCoordinate, _ t: Double) -> FixedCoordinate {
    FixedCoordinate(
      latitudeE6: Int32((Double(a.latitudeE6) + Double(b.latitudeE6 - a.latitudeE6) * t).rounded()),
      longitudeE6: Int32((Double(a.longitudeE6) + Double(b.longitudeE6 - a.longitudeE6) * t).rounded()))
  }
}
