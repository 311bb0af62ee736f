import Foundation

/// A WGS-84 point in degrees.
public struct LatLng: Sendable, Hashable, Codable {
  public var latitude: Double
  public var longitude: Double

  public init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }

  /// Checks the ranges Fleet Engine enforces; `field` names the field in the error.
  public func validate(_ field: String) throws(FleetError) {
    guard latitude.isFinite, (-90...90).contains(latitude) else {
      throw .invalid("\(field).latitude must be within [-90, 90], got \(latitude)")
    }
    guard longitude.isFinite, (-180...180).contains(longitude) else {
      throw .invalid("\(field).longitude must be within [-180, 180], got \(longitude)")
    }
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

/// A lat/lng rectangle; `low` is the south-west corner, `high` the north-east one. When
/// low.longitude > high.longitude the box crosses the antimeridian.
public struct Viewport: Sendable, Hashable, Codable {
  public var low: LatLng
  public var high: LatLng

  public init(low: LatLng, high: LatLng) {
    self.low = low
    self.high = high
  }

  public func contains(_ point: LatLng) -> Bool {
    guard (low.latitude...high.latitude).contains(point.latitude) else { return false }
    if low.longitude <= high.longitude {
      return (low.longitude...high.longitude).contains(point.longitude)
    }
    return point.longitude >= low.longitude || point.longitude <= high.longitude
  }

  public func validate(_ field: String) throws(FleetError) {
    try low.validate("\(field).low")
    try high.validate("\(field).high")
    guard low.latitude <= high.latitude else {
      throw .invalid("\(field).low.latitude must not exceed \(field).high.latitude")
    }
  }
}
