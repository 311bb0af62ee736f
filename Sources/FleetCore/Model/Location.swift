import FleetGeometry
import Foundation

/// Where a waypoint is.
public struct TerminalLocation: Sendable, Hashable, Codable {
  public var point: LatLng

  public init(point: LatLng) { self.point = point }
}

/// Where and when a stop actually happened (input only on trips).
public struct StopLocation: Sendable, Hashable, Codable {
  public var point: LatLng
  public var timestamp: Date?

  public init(point: LatLng, timestamp: Date? = nil) {
    self.point = point
    self.timestamp = timestamp
  }
}

/// A stop on a vehicle's route.
public struct TripWaypoint: Sendable, Hashable, Codable {
  public var location: TerminalLocation
  public var tripID: String
  public var waypointType: WaypointType

  public init(location: TerminalLocation, tripID: String, waypointType: WaypointType) {
    self.location = location
    self.tripID = tripID
    self.waypointType = waypointType
  }
}

/// A vehicle's reported position with the sensor data behind it. Optional fields mirror the
/// wrapper types of the wire format: nil means "not reported".
public struct VehicleLocation: Sendable, Hashable, Codable {
  public var location: LatLng?
  public var latlngAccuracy: Double?
  public var heading: Int32?
  public var headingAccuracy: Double?
  public var altitude: Double?
  public var altitudeAccuracy: Double?
  public var speed: Double?
  public var speedAccuracy: Double?
  public var updateTime: Date?
  /// Set by the server when it accepts the location.
  public var serverTime: Date?
  public var locationSensor: LocationSensor = .unknown
  public var isRoadSnapped: Bool?
  public var isGpsSensorEnabled: Bool?
  public var timeSinceUpdate: Int32?
  public var rawLocation: LatLng?
  public var rawLocationTime: Date?
  public var rawLocationSensor: LocationSensor = .unknown
  public var rawLocationAccuracy: Double?
  public var flpLocation: LatLng?
  public var flpUpdateTime: Date?
  public var flpLatlngAccuracyMeters: Double?
  public var flpHeadingDegrees: Int32?
  public var supplementalLocation: LatLng?
  public var supplementalLocationTime: Date?
  public var supplementalLocationSensor: LocationSensor = .unknown
  public var supplementalLocationAccuracy: Double?

  public init(location: LatLng? = nil) { self.location = location }

  /// Validates a location sent by a client; `field` names it in errors. Every report is
  /// validated: field names are built only for an error, and no list is made on the way.
  public func validate(_ field: @autoclosure () -> String) throws(FleetError) {
    guard let location else { throw .invalid("\(field()).location is required") }
    try location.validate("\(field()).location")
    try rawLocation?.validate("\(field()).raw_location")
    try flpLocation?.validate("\(field()).flp_location")
    try supplementalLocation?.validate("\(field()).supplemental_location")
    try Self.checkHeading(heading, field(), "heading")
    try Self.checkHeading(flpHeadingDegrees, field(), "flp_heading_degrees")
    try Self.checkNonNegative(latlngAccuracy, field(), "latlng_accuracy")
    try Self.checkNonNegative(headingAccuracy, field(), "heading_accuracy")
    try Self.checkNonNegative(altitudeAccuracy, field(), "altitude_accuracy")
    try Self.checkNonNegative(speedAccuracy, field(), "speed_accuracy")
    try Self.checkNonNegative(rawLocationAccuracy, field(), "raw_location_accuracy")
    try Self.checkFinite(speed, field(), "speed")
    try Self.checkFinite(altitude, field(), "altitude")
    try Self.checkFinite(flpLatlngAccuracyMeters, field(), "flp_latlng_accuracy_meters")
    try Self.checkFinite(supplementalLocationAccuracy, field(), "supplemental_location_accuracy")
    // Fleet Engine: FLEET_ENGINE_LOCATION is output only and rejected on input.
    try Self.checkInputSensor(locationSensor, field(), "location_sensor")
    try Self.checkInputSensor(rawLocationSensor, field(), "raw_location_sensor")
    try Self.checkInputSensor(supplementalLocationSensor, field(), "supplemental_location_sensor")
  }

  static func checkHeading(_ value: Int32?, _ field: @autoclosure () -> String, _ name: StaticString)
    throws(FleetError)
  {
    if let value, !(0..<360).contains(value) {
      throw .invalid("\(field()).\(name) must be within [0, 360), got \(value)")
    }
  }

  static func checkNonNegative(_ value: Double?, _ field: @autoclosure () -> String, _ name: StaticString)
    throws(FleetError)
  {
    if let value, !(value.isFinite && value >= 0) {
      throw .invalid("\(field()).\(name) must be a non-negative number, got \(value)")
    }
  }

  static func checkFinite(_ value: Double?, _ field: @autoclosure () -> String, _ name: StaticString) throws(FleetError)
  {
    if let value, !value.isFinite { throw .invalid("\(field()).\(name) must be a finite number, got \(value)") }
  }

  static func checkInputSensor(_ sensor: LocationSensor, _ field: @autoclosure () -> String, _ name: StaticString)
    throws(FleetError)
  {
    if sensor == .fleetEngineLocation {
      throw .invalid("\(field()).\(name) must not be FLEET_ENGINE_LOCATION (output only)")
    }
  }
}

/// A typed attribute value (Fleet Engine's string/bool/number oneof).
public enum AttributeValue: Sendable, Hashable, Codable, CustomStringConvertible {
  case string(String)
  case bool(Bool)
  case number(Double)

  /// The textual form used by `key:value` filters.
  public var description: String {
    switch self {
    case .string(let s): s
    case .bool(let b): b ? "true" : "false"
    case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
    }
  }
}

/// A key/value attribute of a trip or a vehicle.
public struct Attribute: Sendable, Hashable, Codable {
  public var key: String
  public var value: AttributeValue

  public init(key: String, value: AttributeValue) {
    self.key = key
    self.value = value
  }

  /// Fleet Engine: at most 100 attributes, unique keys, no ':' in a key, "key:value" ≤ 256.
  public static func validate(_ attributes: [Attribute], field: String) throws(FleetError) {
    guard attributes.count <= 100 else {
      throw .invalid("\(field) may hold at most 100 attributes, got \(attributes.count)")
    }
    var seen = Set<String>()
    for (i, attribute) in attributes.enumerated() {
      guard !attribute.key.isEmpty else { throw .invalid("\(field)[\(i)].key is required") }
      guard !attribute.key.contains(":") else { throw .invalid("\(field)[\(i)].key must not contain ':'") }
      if case .number(let n) = attribute.value, !n.isFinite {
        throw .invalid("\(field)[\(i)].number_value must be a finite number")
      }
      guard "\(attribute.key):\(attribute.value)".count <= 256 else {
        throw .invalid("\(field)[\(i)]: \"key:value\" must be at most 256 characters")
      }
      guard seen.insert(attribute.key).inserted else {
        throw .invalid("\(field) has duplicate key '\(attribute.key)'")
      }
    }
  }
}

/// The only parts of a licence plate Fleet Engine keeps.
public struct LicensePlate: Sendable, Hashable, Codable {
  public var countryCode: String
  public var lastCharacter: String

  public init(countryCode: String, lastCharacter: String) {
    self.countryCode = countryCode
    self.lastCharacter = lastCharacter
  }
}
