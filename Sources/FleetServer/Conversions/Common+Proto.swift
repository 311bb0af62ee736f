import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import SwiftProtobuf

// Conversions between the wire types and the domain. Decoding validates enum values and names the
// field of any that the domain does not know.

extension LatLng {
  init(_ proto: Google_Type_LatLng) { self.init(latitude: proto.latitude, longitude: proto.longitude) }
  var proto: Google_Type_LatLng {
    var p = Google_Type_LatLng()
    p.latitude = latitude
    p.longitude = longitude
    return p
  }
}

extension Date {
  /// Timestamp's valid range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
  static let protoRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

  init(_ timestamp: Google_Protobuf_Timestamp) {
    // Clamped so that a hostile value can never overflow on the way back out.
    let seconds = min(max(Double(timestamp.seconds), Self.protoRange.lowerBound), Self.protoRange.upperBound)
    self.init(timeIntervalSince1970: seconds + Double(min(max(timestamp.nanos, 0), 999_999_999)) / 1e9)
  }
  var proto: Google_Protobuf_Timestamp {
    // Round to the microsecond: fleetd's versions are kept to the microsecond.
    let clamped = min(max(timeIntervalSince1970, Self.protoRange.lowerBound), Self.protoRange.upperBound)
    let micros = (clamped * 1_000_000).rounded()
    let seconds = (micros / 1_000_000).rounded(.down)
    return Google_Protobuf_Timestamp(seconds: Int64(seconds), nanos: Int32((micros - seconds * 1_000_000) * 1000))
  }
}

extension Swift.Duration {
  init(_ proto: Google_Protobuf_Duration) {
    self = .seconds(proto.seconds) + .nanoseconds(Int64(proto.nanos))
  }
  var proto: Google_Protobuf_Duration {
    let (seconds, attoseconds) = components
    return Google_Protobuf_Duration(seconds: seconds, nanos: Int32(attoseconds / 1_000_000_000))
  }
}

/// Maps a wire enum to the domain enum with the same number, or fails naming the field.
func domainEnum<P: SwiftProtobuf.Enum, D: RawRepresentable<Int>>(_ value: P, _ field: @autoclosure () -> String)
  throws(FleetError) -> D
{
  // The field's name is built only for the error: every report converts three enums.
  guard let domain = D(rawValue: value.rawValue) else {
    throw .invalid("\(field()) has unknown enum value \(value.rawValue)")
  }
  return domain
}

func wireEnum<P: SwiftProtobuf.Enum, D: RawRepresentable<Int>>(_ value: D) -> P {
  P(rawValue: value.rawValue) ?? P()
}

extension TerminalLocation {
  init(_ proto: Maps_Fleetengine_V1_TerminalLocation, field: String) throws(FleetError) {
    guard proto.hasPoint else { throw .invalid("\(field).point is required") }
    self.init(point: LatLng(proto.point))
  }
  var proto: Maps_Fleetengine_V1_TerminalLocation {
    var p = Maps_Fleetengine_V1_TerminalLocation()
    p.point = point.proto
    return p
  }
}

extension StopLocation {
  init(_ proto: Maps_Fleetengine_V1_StopLocation, field: String) throws(FleetError) {
    guard proto.hasPoint else { throw .invalid("\(field).point is required") }
    let time = proto.hasTimestamp ? proto.timestamp : (proto.hasStopTime ? proto.stopTime : nil)
    self.init(point: LatLng(proto.point), timestamp: time.map(Date.init))
  }
}

extension TripWaypoint {
  init(_ proto: Maps_Fleetengine_V1_TripWaypoint, field: String) throws(FleetError) {
    guard proto.hasLocation else { throw .invalid("\(field).location is required") }
    self.init(
      location: try TerminalLocation(proto.location, field: "\(field).location"), tripID: proto.tripID,
      waypointType: try domainEnum(proto.waypointType, "\(field).waypoint_type"))
  }
  var proto: Maps_Fleetengine_V1_TripWaypoint {
    var p = Maps_Fleetengine_V1_TripWaypoint()
    p.location = location.proto
    p.tripID = tripID
    p.waypointType = wireEnum(waypointType)
    return p
  }
}

extension VehicleLocation {
  init(_ p: Maps_Fleetengine_V1_VehicleLocation, field: String) throws(FleetError) {
    self.init(location: p.hasLocation ? LatLng(p.location) : nil)
    // The deprecated fields fill their replacements when only they are sent.
    latlngAccuracy =
      p.hasLatlngAccuracy ? p.latlngAccuracy.value : (p.hasHorizontalAccuracy ? p.horizontalAccuracy.value : nil)
    heading = p.hasHeading ? p.heading.value : nil
    headingAccuracy =
      p.hasHeadingAccuracy ? p.headingAccuracy.value : (p.hasBearingAccuracy ? p.bearingAccuracy.value : nil)
    altitude = p.hasAltitude ? p.altitude.value : nil
    altitudeAccuracy =
      p.hasAltitudeAccuracy ? p.altitudeAccuracy.value : (p.hasVerticalAccuracy ? p.verticalAccuracy.value : nil)
    speed = p.hasSpeed ? p.speed.value : (p.hasSpeedKmph ? Double(p.speedKmph.value) / 3.6 : nil)
    speedAccuracy = p.hasSpeedAccuracy ? p.speedAccuracy.value : nil
    updateTime = p.hasUpdateTime ? Date(p.updateTime) : nil
    locationSensor = try domainEnum(p.locationSensor, "\(field).location_sensor")
    isRoadSnapped = p.hasIsRoadSnapped ? p.isRoadSnapped.value : (p.roadSnapped ? true : nil)
    isGpsSensorEnabled = p.hasIsGpsSensorEnabled ? p.isGpsSensorEnabled.value : nil
    timeSinceUpdate = p.hasTimeSinceUpdate ? p.timeSinceUpdate.value : nil
    rawLocation = p.hasRawLocation ? LatLng(p.rawLocation) : nil
    rawLocationTime = p.hasRawLocationTime ? Date(p.rawLocationTime) : nil
    rawLocationSensor = try domainEnum(p.rawLocationSensor, "\(field).raw_location_sensor")
    rawLocationAccuracy = p.hasRawLocationAccuracy ? p.rawLocationAccuracy.value : nil
    flpLocation = p.hasFlpLocation ? LatLng(p.flpLocation) : nil
    flpUpdateTime = p.hasFlpUpdateTime ? Date(p.flpUpdateTime) : nil
    flpLatlngAccuracyMeters = p.hasFlpLatlngAccuracyMeters ? p.flpLatlngAccuracyMeters.value : nil
    flpHeadingDegrees = p.hasFlpHeadingDegrees ? p.flpHeadingDegrees.value : nil
    supplementalLocation = p.hasSupplementalLocation ? LatLng(p.supplementalLocation) : nil
    supplementalLocationTime = p.hasSupplementalLocationTime ? Date(p.supplementalLocationTime) : nil
    supplementalLocationSensor = try domainEnum(p.supplementalLocationSensor, "\(field).supplemental_location_sensor")
    supplementalLocationAccuracy = p.hasSupplementalLocationAccuracy ? p.supplementalLocationAccuracy.value : nil
  }

  var proto: Maps_Fleetengine_V1_VehicleLocation {
    var p = Maps_Fleetengine_V1_VehicleLocation()
    if let location { p.location = location.proto }
    if let latlngAccuracy { p.latlngAccuracy = .init(latlngAccuracy) }
    if let heading { p.heading = .init(heading) }
    if let headingAccuracy { p.headingAccuracy = .init(headingAccuracy) }
    if let altitude { p.altitude = .init(altitude) }
    if let altitudeAccuracy { p.altitudeAccuracy = .init(altitudeAccuracy) }
    if let speed { p.speed = .init(speed) }
    if let speedAccuracy { p.speedAccuracy = .init(speedAccuracy) }
    if let updateTime { p.updateTime = updateTime.proto }
    if let serverTime { p.serverTime = serverTime.proto }
    p.locationSensor = wireEnum(locationSensor)
    if let isRoadSnapped { p.isRoadSnapped = .init(isRoadSnapped) }
    if let rawLocation { p.rawLocation = rawLocation.proto }
    if let rawLocationTime { p.rawLocationTime = rawLocationTime.proto }
    p.rawLocationSensor = wireEnum(rawLocationSensor)
    if let rawLocationAccuracy { p.rawLocationAccuracy = .init(rawLocationAccuracy) }
    if let flpLocation { p.flpLocation = flpLocation.proto }
    if let flpUpdateTime { p.flpUpdateTime = flpUpdateTime.proto }
    if let flpLatlngAccuracyMeters { p.flpLatlngAccuracyMeters = .init(flpLatlngAccuracyMeters) }
    if let flpHeadingDegrees { p.flpHeadingDegrees = .init(flpHeadingDegrees) }
    if let supplementalLocation { p.supplementalLocation = supplementalLocation.proto }
    if let supplementalLocationTime { p.supplementalLocationTime = supplementalLocationTime.proto }
    p.supplementalLocationSensor = wireEnum(supplementalLocationSensor)
    if let supplementalLocationAccuracy { p.supplementalLocationAccuracy = .init(supplementalLocationAccuracy) }
    return p
  }
}

extension Attribute {
  init(_ p: Maps_Fleetengine_V1_VehicleAttribute, field: String) throws(FleetError) {
    let value: AttributeValue
    switch p.vehicleAttributeValue {
    case .stringValue(let s)?:
      // Fleet Engine: when both are set, value and string_value must be identical.
      if !p.value.isEmpty && p.value != s {
        throw .invalid("\(field): value and string_value are both set and differ")
      }
      value = .string(s)
    case .boolValue(let b)?: value = .bool(b)
    case .numberValue(let n)?: value = .number(n)
    case nil: value = .string(p.value)
    }
    self.init(key: p.key, value: value)
  }

  init(_ p: Maps_Fleetengine_V1_TripAttribute, field: String) throws(FleetError) {
    let value: AttributeValue
    switch p.tripAttributeValue {
    case .stringValue(let s)?: value = .string(s)
    case .boolValue(let b)?: value = .bool(b)
    case .numberValue(let n)?: value = .number(n)
    case nil: value = .string("")
    }
    self.init(key: p.key, value: value)
  }

  var vehicleProto: Maps_Fleetengine_V1_VehicleAttribute {
    var p = Maps_Fleetengine_V1_VehicleAttribute()
    p.key = key
    switch value {
    case .string(let s):
      p.value = s
      p.stringValue = s
    case .bool(let b): p.boolValue = b
    case .number(let n): p.numberValue = n
    }
    return p
  }

  var tripProto: Maps_Fleetengine_V1_TripAttribute {
    var p = Maps_Fleetengine_V1_TripAttribute()
    p.key = key
    switch value {
    case .string(let s): p.stringValue = s
    case .bool(let b): p.boolValue = b
    case .number(let n): p.numberValue = n
    }
    return p
  }
}
