import FleetGeometry
import Foundation

/// The coordinate systems maps use in mainland China, beside the WGS-84 of GPS and Fleet Engine.
///
/// - `wgs84`: GPS, OpenStreetMap, Fleet Engine, and maps outside China.
/// - `gcj02`: China's official obfuscated datum ("Mars coordinates"), used by most Chinese
///   map services (AMap/Gaode, Tencent, Google Maps in China).
/// - `bd09`: Baidu's further offset of GCJ-02.
///
/// The GCJ-02 offset is the standard published transform, applied only inside the rectangle
/// that the reference implementations use for mainland China (longitude 72.004…137.8347,
/// latitude 0.8293…55.8271); outside it GCJ-02 is WGS-84, unchanged. The rectangle is coarse:
/// it also covers Taiwan, Hong Kong, Macau and parts of neighbouring countries, which
/// Chinese map services treat the same way.
///
/// Legal note: in mainland China, publishing maps or converting coordinates between GCJ-02
/// and WGS-84 is regulated (Surveying and Mapping Law of the PRC); GCJ-02 → WGS-84 in
/// particular is not sanctioned there. Apps serving China should keep positions in the system
/// their map provider expects and check what their licence allows.
public enum CoordinateSystem: String, Sendable, Hashable, CaseIterable, Codable {
  case wgs84
  case gcj02
  case bd09
}

extension LatLng {
  /// This point, given in `source`, expressed in `target`. Forward transforms are the
  /// published closed forms; the inverses are solved by iteration to well under a centimetre,
  /// not the usual one-step approximation that is off by metres.
  public func converted(from source: CoordinateSystem, to target: CoordinateSystem) -> LatLng {
    switch (source, target) {
    case (.wgs84, .wgs84), (.gcj02, .gcj02), (.bd09, .bd09): self
    case (.wgs84, .gcj02): ChinaOffset.gcj02(fromWGS84: self)
    case (.gcj02, .wgs84): ChinaOffset.wgs84(fromGCJ02: self)
    case (.gcj02, .bd09): ChinaOffset.bd09(fromGCJ02: self)
    case (.bd09, .gcj02): ChinaOffset.gcj02(fromBD09: self)
    case (.wgs84, .bd09): ChinaOffset.bd09(fromGCJ02: ChinaOffset.gcj02(fromWGS84: self))
    case (.bd09, .wgs84): ChinaOffset.wgs84(fromGCJ02: ChinaOffset.gcj02(fromBD09: self))
    }
  }
}

/// The GCJ-02 and BD-09 transforms.
public enum ChinaOffset {
  /// Krasovsky 1940, the ellipsoid the GCJ-02 transform is defined on.
  static let semiMajorAxis = 6_378_245.0
  static let eccentricitySquared = 0.006_693_421_622_965_943_23
  static let bdFactor = Double.pi * 3000 / 180

  /// Whether the GCJ-02 offset applies: the reference implementations' rectangle around
  /// mainland China.
  @inlinable public static func isInChina(_ p: LatLng) -> Bool {
    p.longitude >= 72.004 && p.longitude <= 137.8347 && p.latitude >= 0.8293 && p.latitude <= 55.8271
  }

  public static func gcj02(fromWGS84 p: LatLng) -> LatLng {
    isInChina(p) ? shifted(p) : p
  }

  /// The published GCJ-02 formula, wherever `p` is.
  static func shifted(_ p: LatLng) -> LatLng {
    let x = p.longitude - 105
    let y = p.latitude - 35
    var dLat = offsetLatitude(x, y)
    var dLng = offsetLongitude(x, y)
    let radLat = p.latitude / 180 * .pi
    var magic = sin(radLat)
    magic = 1 - eccentricitySquared * magic * magic
    let sqrtMagic = magic.squareRoot()
    dLat = (dLat * 180) / ((semiMajorAxis * (1 - eccentricitySquared)) / (magic * sqrtMagic) * .pi)
    dLng = (dLng * 180) / (semiMajorAxis / sqrtMagic * cos(radLat) * .pi)
    return LatLng(latitude: p.latitude + dLat, longitude: p.longitude + dLng)
  }

  /// The WGS-84 point whose GCJ-02 image is `p`. Outside the rectangle that is `p` itself.
  /// (Within a kilometre of the rectangle's edges, none of which crosses mainland China, the
  /// transform is not one-to-one: a point just inside may be moved out, onto a point that is
  /// also its own image. Either answer maps back to `p`; this one keeps it.)
  public static func wgs84(fromGCJ02 p: LatLng) -> LatLng {
    guard isInChina(p) else { return p }
    // Solved on the formula itself, not the bounded transform: near an edge the iteration may
    // step outside the rectangle on its way, where the bounded one would stall it.
    let solved = invert(p, start: p, forward: shifted)
    // A solution on an edge may fall a rounding error outside it, where the bounded transform
    // would not shift it: put it back on the edge.
    let snapped = LatLng(
      latitude: min(max(solved.latitude, 0.8293), 55.8271), longitude: min(max(solved.longitude, 72.004), 137.8347))
    return abs(snapped.latitude - solved.latitude) < 1e-9 && abs(snapped.longitude - solved.longitude) < 1e-9
      ? snapped : solved
  }

  public static func bd09(fromGCJ02 p: LatLng) -> LatLng {
    let x = p.longitude
    let y = p.latitude
    let z = (x * x + y * y).squareRoot() + 0.000_02 * sin(y * bdFactor)
    let theta = atan2(y, x) + 0.000_003 * cos(x * bdFactor)
    return LatLng(latitude: z * sin(theta) + 0.006, longitude: z * cos(theta) + 0.0065)
  }

  /// The GCJ-02 point whose BD-09 image is `p`, starting from the published one-step inverse.
  public static func gcj02(fromBD09 p: LatLng) -> LatLng {
    let x = p.longitude - 0.0065
    let y = p.latitude - 0.006
    let z = (x * x + y * y).squareRoot() - 0.000_02 * sin(y * bdFactor)
    let theta = atan2(y, x) - 0.000_003 * cos(x * bdFactor)
    let guess = LatLng(latitude: z * sin(theta), longitude: z * cos(theta))
    return invert(p, start: guess, forward: bd09(fromGCJ02:))
  }

  /// Solves `forward(q) == target` by fixed-point iteration: the offsets change so slowly
  /// with position that each step gains several digits. Stops below 1e-9° (about 0.1 mm).
  static func invert(_ target: LatLng, start: LatLng, forward: (LatLng) -> LatLng) -> LatLng {
    var q = start
    for _ in 0..<20 {
      let image = forward(q)
      let dLat = image.latitude - target.latitude
      let dLng = image.longitude - target.longitude
      q = LatLng(latitude: q.latitude - dLat, longitude: q.longitude - dLng)
      if abs(dLat) < 1e-9 && abs(dLng) < 1e-9 { break }
    }
    return q
  }

  static func offsetLatitude(_ x: Double, _ y: Double) -> Double {
    var r = -100 + 2 * x + 3 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * abs(x).squareRoot()
    r += (20 * sin(6 * x * .pi) + 20 * sin(2 * x * .pi)) * 2 / 3
    r += (20 * sin(y * .pi) + 40 * sin(y / 3 * .pi)) * 2 / 3
    r += (160 * sin(y / 12 * .pi) + 320 * sin(y * .pi / 30)) * 2 / 3
    return r
  }

  static func offsetLongitude(_ x: Double, _ y: Double) -> Double {
    var r = 300 + x + 2 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * abs(x).squareRoot()
    r += (20 * sin(6 * x * .pi) + 20 * sin(2 * x * .pi)) * 2 / 3
    r += (20 * sin(x * .pi) + 40 * sin(x / 3 * .pi)) * 2 / 3
    r += (150 * sin(x / 12 * .pi) + 300 * sin(x / 30 * .pi)) * 2 / 3
    return r
  }
}
