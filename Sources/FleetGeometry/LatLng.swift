import Foundation

/// A WGS-84 point in degrees.
public struct LatLng: Sendable, Hashable, Codable {
  public var latitude: Double
  public var longitude: Double

  public init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }

  /// Whether both values are finite and within the globe's ranges ([-90, 90], [-180, 180]).
  public var isOnGlobe: Bool {
    latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
  }

  /// The mean Earth radius OSRM uses, so that distances agree with it to the metre.
  public static let earthRadius = 6_372_797.560856

  /// Great-circle distance in metres (haversine). Inlinable: routing calls it in hot loops.
  @inlinable public func distance(to other: LatLng) -> Double {
    let radians = Double.pi / 180
    let dLat = (other.latitude - latitude) * radians
    let dLon = (other.longitude - longitude) * radians
    let h =
      sin(dLat / 2) * sin(dLat / 2)
      + cos(latitude * radians) * cos(other.latitude * radians) * sin(dLon / 2) * sin(dLon / 2)
    return 2 * Self.earthRadius * atan2(h.squareRoot(), max(0, 1 - h).squareRoot())
  }

  /// Initial great-circle bearing towards `other`, degrees clockwise from north in [0, 360).
  public func bearing(to other: LatLng) -> Double {
    let radians = Double.pi / 180
    let phi1 = latitude * radians
    let phi2 = other.latitude * radians
    let dLon = (other.longitude - longitude) * radians
    let y = sin(dLon) * cos(phi2)
    let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLon)
    let degrees = atan2(y, x) / radians
    return degrees < 0 ? degrees + 360 : degrees
  }

  /// Where this point falls on the segment `a`→`b`: the fraction of the way along it (at least
  /// `minimumFraction`, at most 1) of the nearest point, and the metres from this point to it.
  /// Computed in a local flat frame around the point: exact enough over a street's length.
  @inlinable public func projection(onto a: LatLng, _ b: LatLng, minimumFraction: Double = 0) -> (
    fraction: Double, distance: Double
  ) {
    projection(onto: a, b, minimumFraction: minimumFraction, cosine: localCosine)
  }

  /// The cosine of this point's latitude, which `projection(onto:_:minimumFraction:cosine:)`
  /// takes when one point is projected on many segments.
  @inlinable public var localCosine: Double { cos(latitude * .pi / 180) }

  /// `projection(onto:_:minimumFraction:)` with this point's `localCosine` computed once.
  @inlinable public func projection(onto a: LatLng, _ b: LatLng, minimumFraction: Double = 0, cosine: Double) -> (
    fraction: Double, distance: Double
  ) {
    let metresPerDegree = Self.earthRadius * .pi / 180
    let ax = (a.longitude - longitude) * cosine * metresPerDegree
    let ay = (a.latitude - latitude) * metresPerDegree
    let bx = (b.longitude - longitude) * cosine * metresPerDegree
    let by = (b.latitude - latitude) * metresPerDegree
    let dx = bx - ax
    let dy = by - ay
    let lengthSquared = dx * dx + dy * dy
    let nearest = lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0
    let t = min(1, max(minimumFraction, nearest, 0))
    let px = ax + t * dx
    let py = ay + t * dy
    return (t, (px * px + py * py).squareRoot())
  }
}
