import FleetGeometry
import Foundation

/// One position of the device, as a location source reported it.
public struct LocationFix: Sendable, Hashable, Codable {
  /// What produced a fix; the raw values are Fleet Engine's `LocationSensor` numbers.
  public enum Sensor: Int, Sendable, Hashable, Codable {
    case unknown = 0
    case gps = 1
    case network = 2
    case passive = 3
    case roadSnapped = 4
    case customerSupplied = 5
    case fused = 100
    case coreLocation = 200
  }

  public var coordinate: LatLng
  /// Radius in metres of the 68 % confidence circle around `coordinate`.
  public var horizontalAccuracy: Double?
  /// Metres above the WGS-84 ellipsoid or mean sea level, as the source gives it.
  public var altitude: Double?
  public var verticalAccuracy: Double?
  /// Direction of travel, degrees clockwise from true north.
  public var heading: Double?
  public var headingAccuracy: Double?
  /// Metres per second.
  public var speed: Double?
  public var speedAccuracy: Double?
  /// When the position was measured (not when it was received).
  public var time: Date
  public var sensor: Sensor
  /// The measured position before it was snapped to a road; nil when it was not snapped.
  public var rawCoordinate: LatLng?
  public var rawSensor: Sensor?

  public var isRoadSnapped: Bool { rawCoordinate != nil }

  public init(
    coordinate: LatLng, horizontalAccuracy: Double? = nil, altitude: Double? = nil, verticalAccuracy: Double? = nil,
    heading: Double? = nil, headingAccuracy: Double? = nil, speed: Double? = nil, speedAccuracy: Double? = nil,
    time: Date, sensor: Sensor = .gps, rawCoordinate: LatLng? = nil, rawSensor: Sensor? = nil
  ) {
    self.coordinate = coordinate
    self.horizontalAccuracy = horizontalAccuracy
    self.altitude = altitude
    self.verticalAccuracy = verticalAccuracy
    self.heading = heading
    self.headingAccuracy = headingAccuracy
    self.speed = speed
    self.speedAccuracy = speedAccuracy
    self.time = time
    self.sensor = sensor
    self.rawCoordinate = rawCoordinate
    self.rawSensor = rawSensor
  }
}

/// Why a location source could not deliver fixes.
public struct LocationError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable, Hashable {
    /// A track file could not be read or is not GPX or NMEA.
    case unreadableTrack
    /// A track file holds no usable position.
    case emptyTrack
    /// The location daemon could not be reached or broke off.
    case sourceUnavailable
    /// The user or the system did not allow positioning.
    case denied
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code.rawValue): \(message)" }
}
