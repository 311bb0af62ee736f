import FleetCore
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
}

enum Geo {
  static let earthRadius = LatLng.earthRadius
  static let degreeToRadian = Double.pi / 180

  /// Great-circle distance in metres (haversine, OSRM's Earth radius).
  static func distance(_ a: FixedCoordinate, _ b: FixedCoordinate) -> Double {
    distance(a.latitude, a.longitude, b.latitude, b.longitude)
  }

  static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    LatLng(latitude: lat1, longitude: lon1).distance(to: LatLng(latitude: lat2, longitude: lon2))
  }

  /// Initial bearing from a to b, degrees clockwise from north in [0, 360).
  static func bearing(_ a: FixedCoordinate, _ b: FixedCoordinate) -> Double {
    let lat1 = a.latitude * degreeToRadian
    let lat2 = b.latitude * degreeToRadian
    let dLon = (b.longitude - a.longitude) * degreeToRadian
    let y = sin(dLon) * cos(lat2)
    let x = cos(lat1) * sin(lat2) - sin(lat1) * cos(lat2) * cos(dLon)
    let degrees = atan2(y, x) / degreeToRadian
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

  static func interpolate(_ a: FixedCoordinate, _ b: FixedCoordinate, _ t: Double) -> FixedCoordinate {
    FixedCoordinate(
      latitudeE6: Int32((Double(a.latitudeE6) + Double(b.latitudeE6 - a.latitudeE6) * t).rounded()),
      longitudeE6: Int32((Double(a.longitudeE6) + Double(b.longitudeE6 - a.longitudeE6) * t).rounded()))
  }
}
