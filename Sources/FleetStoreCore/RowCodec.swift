import FleetCore
import FleetGeometry
import Foundation

// The binary form of every stored entity and billing report.
//
// Every location update rewrites its vehicle's row, so the row format is on the hot path: this
// one is written field by field without reflection (JSON through Codable cost a sixth of fleetd's
// CPU per update).
//
// Layout: one format byte (`RowFormat.binaryV1`), then the fields in the order the `write`
// functions below list them. Integers are LEB128 varints (signed ones zigzag-encoded), doubles
// their IEEE-754 bits little-endian, strings a length and UTF-8, optionals a presence byte, arrays
// a count, dates the double `timeIntervalSinceReferenceDate` (exact, like the domain's `Date`).
// To add a field, append it at the end of its type and read it only when `reader.hasMore` is
// true, so that older rows keep decoding. Rows written as JSON by fleetd before this format
// (they start with `{`) are converted when a store opens (`LegacyJSONRows`).

enum RowFormat {
  static let binaryV1: UInt8 = 1
  static let json: UInt8 = UInt8(ascii: "{")
}

/// A stored row that cannot be decoded: names where, so that a damaged database is diagnosable.
struct RowFormatError: Error, CustomStringConvertible {
  let offset: Int
  let reason: String
  var description: String { "stored row is damaged at byte \(offset): \(reason)" }
}

struct RowWriter {
  var bytes: [UInt8] = []

  init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }

  mutating func int(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }
  mutating func int32(_ value: Int32) { int(Int64(value)) }
  mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

  mutating func double(_ value: Double) {
    withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func string(_ value: String) {
    var value = value
    value.withUTF8 { utf8 in
      varint(UInt64(utf8.count))
      bytes.append(contentsOf: utf8)
    }
  }

  mutating func date(_ value: Date) { double(value.timeIntervalSinceReferenceDate) }

  mutating func data(_ value: Data) {
    varint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  mutating func enumValue<E: RawRepresentable<Int>>(_ value: E) { int(Int64(value.rawValue)) }

  mutating func optional<T>(_ value: T?, _ write: (inout RowWriter, T) -> Void) {
    guard let value else { return bytes.append(0) }
    bytes.append(1)
    write(&self, value)
  }

  mutating func array<T>(_ values: [T], _ write: (inout RowWriter, T) -> Void) {
    varint(UInt64(values.count))
    for value in values { write(&self, value) }
  }
}

struct RowReader {
  let bytes: [UInt8]
  var offset = 0

  init(_ bytes: [UInt8], from offset: Int = 0) {
    self.bytes = bytes
    self.offset = offset
  }

  var hasMore: Bool { offset < bytes.count }

  func damaged(_ reason: String) -> RowFormatError { RowFormatError(offset: offset, reason: reason) }

  mutating func byte() throws(RowFormatError) -> UInt8 {
    guard offset < bytes.count else { throw damaged("the row ends early") }
    defer { offset += 1 }
    return bytes[offset]
  }

  mutating func varint() throws(RowFormatError) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let b = try byte()
      guard shift < 64 else { throw damaged("varint longer than 10 bytes") }
      result |= UInt64(b & 0x7F) << shift
      if b < 0x80 { return result }
      shift += 7
    }
  }

  mutating func int() throws(RowFormatError) -> Int64 {
    let raw = try varint()
    return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
  }

  mutating func int32() throws(RowFormatError) -> Int32 {
    let value = try int()
    guard let narrow = Int32(exactly: value) else { throw damaged("\(value) does not fit a 32-bit field") }
    return narrow
  }

  mutating func bool() throws(RowFormatError) -> Bool {
    switch try byte() {
    case 0: return false
    case 1: return true
    case let b: throw damaged("boolean byte \(b)")
    }
  }

  mutating func double() throws(RowFormatError) -> Double {
    guard bytes.count - offset >= 8 else { throw damaged("the row ends inside a number") }
    var bits: UInt64 = 0
    for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
    offset += 8
    return Double(bitPattern: bits)
  }

  mutating func count() throws(RowFormatError) -> Int {
    let n = try varint()
    // Every element takes at least one byte, so a larger count is damage, not a huge allocation.
    guard n <= UInt64(bytes.count - offset) else { throw damaged("length \(n) exceeds the row") }
    return Int(n)
  }

  mutating func string() throws(RowFormatError) -> String {
    let n = try count()
    defer { offset += n }
    guard let s = String(validating: bytes[offset..<offset + n], as: UTF8.self) else {
      throw damaged("a string is not UTF-8")
    }
    return s
  }

  mutating func date() throws(RowFormatError) -> Date { Date(timeIntervalSinceReferenceDate: try double()) }

  mutating func data() throws(RowFormatError) -> Data {
    let n = try count()
    defer { offset += n }
    return Data(bytes[offset..<offset + n])
  }

  mutating func enumValue<E: RawRepresentable<Int>>(_: E.Type = E.self) throws(RowFormatError) -> E {
    let raw = try int()
    guard let value = Int(exactly: raw).flatMap(E.init(rawValue:)) else { throw damaged("unknown \(E.self) \(raw)") }
    return value
  }

  mutating func optional<T>(_ read: (inout RowReader) throws(RowFormatError) -> T) throws(RowFormatError) -> T? {
    try bool() ? try read(&self) : nil
  }

  mutating func array<T>(_ read: (inout RowReader) throws(RowFormatError) -> T) throws(RowFormatError) -> [T] {
    let n = try count()
    var values: [T] = []
    values.reserveCapacity(n)
    for _ in 0..<n { values.append(try read(&self)) }
    return values
  }
}

/// A domain value with a row form.
protocol RowCodable {
  func write(to row: inout RowWriter)
  init(row: inout RowReader) throws(RowFormatError)
}

extension RowCodable {
  /// The whole row: format byte and fields.
  var rowBytes: [UInt8] {
    var writer = RowWriter()
    writer.bytes.append(RowFormat.binaryV1)
    write(to: &writer)
    return writer.bytes
  }

  static func write(_ row: inout RowWriter, _ value: Self) { value.write(to: &row) }
  static func read(_ row: inout RowReader) throws(RowFormatError) -> Self { try Self(row: &row) }
}

extension LatLng: RowCodable {
  func write(to row: inout RowWriter) {
    row.double(latitude)
    row.double(longitude)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(latitude: try row.double(), longitude: try row.double())
  }
}

extension TerminalLocation: RowCodable {
  func write(to row: inout RowWriter) { point.write(to: &row) }
  init(row: inout RowReader) throws(RowFormatError) { self.init(point: try LatLng(row: &row)) }
}

extension StopLocation: RowCodable {
  func write(to row: inout RowWriter) {
    point.write(to: &row)
    row.optional(timestamp) { $0.date($1) }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(point: try LatLng(row: &row), timestamp: try row.optional { r throws(RowFormatError) in try r.date() })
  }
}

extension TripWaypoint: RowCodable {
  func write(to row: inout RowWriter) {
    location.write(to: &row)
    row.string(tripID)
    row.enumValue(waypointType)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(location: try TerminalLocation(row: &row), tripID: try row.string(), waypointType: try row.enumValue())
  }
}

extension Attribute: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(key)
    switch value {
    case .string(let s):
      row.bytes.append(0)
      row.string(s)
    case .bool(let b):
      row.bytes.append(1)
      row.bool(b)
    case .number(let n):
      row.bytes.append(2)
      row.double(n)
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let key = try row.string()
    switch try row.byte() {
    case 0: self.init(key: key, value: .string(try row.string()))
    case 1: self.init(key: key, value: .bool(try row.bool()))
    case 2: self.init(key: key, value: .number(try row.double()))
    case let kind: throw row.damaged("attribute value kind \(kind)")
    }
  }
}

extension LicensePlate: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(countryCode)
    row.string(lastCharacter)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(countryCode: try row.string(), lastCharacter: try row.string())
  }
}

extension VehicleLocation: RowCodable {
  func write(to row: inout RowWriter) {
    row.optional(location, LatLng.write)
    row.optional(latlngAccuracy) { $0.double($1) }
    row.optional(heading) { $0.int32($1) }
    row.optional(headingAccuracy) { $0.double($1) }
    row.optional(altitude) { $0.double($1) }
    row.optional(altitudeAccuracy) { $0.double($1) }
    row.optional(speed) { $0.double($1) }
    row.optional(speedAccuracy) { $0.double($1) }
    row.optional(updateTime) { $0.date($1) }
    row.optional(serverTime) { $0.date($1) }
    row.enumValue(locationSensor)
    row.optional(isRoadSnapped) { $0.bool($1) }
    row.optional(isGpsSensorEnabled) { $0.bool($1) }
    row.optional(timeSinceUpdate) { $0.int32($1) }
    row.optional(rawLocation, LatLng.write)
    row.optional(rawLocationTime) { $0.date($1) }
    row.enumValue(rawLocationSensor)
    row.optional(rawLocationAccuracy) { $0.double($1) }
    row.optional(flpLocation, LatLng.write)
    row.optional(flpUpdateTime) { $0.date($1) }
    row.optional(flpLatlngAccuracyMeters) { $0.double($1) }
    row.optional(flpHeadingDegrees) { $0.int32($1) }
    row.optional(supplementalLocation, LatLng.write)
    row.optional(supplementalLocationTime) { $0.date($1) }
    row.enumValue(supplementalLocationSensor)
    row.optional(supplementalLocationAccuracy) { $0.double($1) }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let double = { (r: inout RowReader) throws(RowFormatError) in try r.double() }
    let int32 = { (r: inout RowReader) throws(RowFormatError) in try r.int32() }
    let date = { (r: inout RowReader) throws(RowFormatError) in try r.date() }
    let bool = { (r: inout RowReader) throws(RowFormatError) in try r.bool() }
    self.init(location: try row.optional(LatLng.read))
    latlngAccuracy = try row.optional(double)
    heading = try row.optional(int32)
    headingAccuracy = try row.optional(double)
    altitude = try row.optional(double)
    altitudeAccuracy = try row.optional(double)
    speed = try row.optional(double)
    speedAccuracy = try row.optional(double)
    updateTime = try row.optional(date)
    serverTime = try row.optional(date)
    locationSensor = try row.enumValue()
    isRoadSnapped = try row.optional(bool)
    isGpsSensorEnabled = try row.optional(bool)
    timeSinceUpdate = try row.optional(int32)
    rawLocation = try row.optional(LatLng.read)
    rawLocationTime = try row.optional(date)
    rawLocationSensor = try row.enumValue()
    rawLocationAccuracy = try row.optional(double)
    flpLocation = try row.optional(LatLng.read)
    flpUpdateTime = try row.optional(date)
    flpLatlngAccuracyMeters = try row.optional(double)
    flpHeadingDegrees = try row.optional(int32)
    supplementalLocation = try row.optional(LatLng.read)
    supplementalLocationTime = try row.optional(date)
    supplementalLocationSensor = try row.enumValue()
    supplementalLocationAccuracy = try row.optional(double)
  }
}

extension Vehicle: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(id)
    row.enumValue(state)
    row.array(supportedTripTypes) { $0.enumValue($1) }
    row.array(currentTrips) { $0.string($1) }
    row.optional(lastLocation, VehicleLocation.write)
    row.int32(maximumCapacity)
    row.array(attributes, Attribute.write)
    row.enumValue(category)
    row.optional(licensePlate, LicensePlate.write)
    row.string(currentRouteSegment)
    row.optional(currentRouteSegmentVersion) { $0.date($1) }
    row.optional(currentRouteSegmentEndPoint, TripWaypoint.write)
    row.optional(remainingDistanceMeters) { $0.int32($1) }
    row.optional(etaToFirstWaypoint) { $0.date($1) }
    row.array(waypoints, TripWaypoint.write)
    row.optional(waypointsVersion) { $0.date($1) }
    row.bool(backToBackEnabled)
    row.enumValue(navigationStatus)
    row.date(createTime)
    row.date(updateTime)
    row.varint(revision)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let date = { (r: inout RowReader) throws(RowFormatError) in try r.date() }
    self.init(provider: try row.string(), id: try row.string())
    state = try row.enumValue()
    supportedTripTypes = try row.array { r throws(RowFormatError) in try r.enumValue() }
    currentTrips = try row.array { r throws(RowFormatError) in try r.string() }
    lastLocation = try row.optional(VehicleLocation.read)
    maximumCapacity = try row.int32()
    attributes = try row.array(Attribute.read)
    category = try row.enumValue()
    licensePlate = try row.optional(LicensePlate.read)
    currentRouteSegment = try row.string()
    currentRouteSegmentVersion = try row.optional(date)
    currentRouteSegmentEndPoint = try row.optional(TripWaypoint.read)
    remainingDistanceMeters = try row.optional { r throws(RowFormatError) in try r.int32() }
    etaToFirstWaypoint = try row.optional(date)
    waypoints = try row.array(TripWaypoint.read)
    waypointsVersion = try row.optional(date)
    backToBackEnabled = try row.bool()
    navigationStatus = try row.enumValue()
    createTime = try row.date()
    updateTime = try row.date()
    revision = try row.varint()
  }
}

extension Trip: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(id)
    row.string(vehicleID)
    row.enumValue(status)
    row.enumValue(type)
    row.optional(pickupPoint, TerminalLocation.write)
    row.optional(actualPickupPoint, StopLocation.write)
    row.optional(actualPickupArrivalPoint, StopLocation.write)
    row.optional(pickupTime) { $0.date($1) }
    row.array(intermediateDestinations, TerminalLocation.write)
    row.optional(intermediateDestinationsVersion) { $0.date($1) }
    row.int32(intermediateDestinationIndex)
    row.array(actualIntermediateDestinationArrivalPoints, StopLocation.write)
    row.array(actualIntermediateDestinations, StopLocation.write)
    row.optional(dropoffPoint, TerminalLocation.write)
    row.optional(actualDropoffPoint, StopLocation.write)
    row.optional(dropoffTime) { $0.date($1) }
    row.int32(numberOfPassengers)
    row.array(attributes, Attribute.write)
    row.optional(remainingWaypointsVersion) { $0.date($1) }
    row.date(createTime)
    row.date(updateTime)
    row.varint(revision)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let date = { (r: inout RowReader) throws(RowFormatError) in try r.date() }
    self.init(provider: try row.string(), id: try row.string())
    vehicleID = try row.string()
    status = try row.enumValue()
    type = try row.enumValue()
    pickupPoint = try row.optional(TerminalLocation.read)
    actualPickupPoint = try row.optional(StopLocation.read)
    actualPickupArrivalPoint = try row.optional(StopLocation.read)
    pickupTime = try row.optional(date)
    intermediateDestinations = try row.array(TerminalLocation.read)
    intermediateDestinationsVersion = try row.optional(date)
    intermediateDestinationIndex = try row.int32()
    actualIntermediateDestinationArrivalPoints = try row.array(StopLocation.read)
    actualIntermediateDestinations = try row.array(StopLocation.read)
    dropoffPoint = try row.optional(TerminalLocation.read)
    actualDropoffPoint = try row.optional(StopLocation.read)
    dropoffTime = try row.optional(date)
    numberOfPassengers = try row.int32()
    attributes = try row.array(Attribute.read)
    remainingWaypointsVersion = try row.optional(date)
    createTime = try row.date()
    updateTime = try row.date()
    revision = try row.varint()
  }
}

extension RideRequest: RowCodable {
  func write(to row: inout RowWriter) {
    row.optional(pickupPoint, TerminalLocation.write)
    row.optional(dropoffPoint, TerminalLocation.write)
    row.array(intermediateDestinations, TerminalLocation.write)
    row.int32(numberOfPassengers)
    row.enumValue(tripType)
    row.array(requiredAttributes, Attribute.write)
    row.string(filter)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init()
    pickupPoint = try row.optional(TerminalLocation.read)
    dropoffPoint = try row.optional(TerminalLocation.read)
    intermediateDestinations = try row.array(TerminalLocation.read)
    numberOfPassengers = try row.int32()
    tripType = try row.enumValue()
    requiredAttributes = try row.array(Attribute.read)
    filter = try row.string()
  }
}

extension Ride: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(id)
    request.write(to: &row)
    row.enumValue(dispatchState)
    row.string(vehicleID)
    row.string(releasedFrom)
    row.date(waitingSince)
    row.optional(assignTime) { $0.date($1) }
    row.optional(assignedPickupETA) { $0.date($1) }
    row.int(Int64(assignments))
    row.date(createTime)
    row.date(updateTime)
    row.varint(revision)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let date = { (r: inout RowReader) throws(RowFormatError) in try r.date() }
    self.init(provider: try row.string(), id: try row.string(), request: try RideRequest(row: &row))
    dispatchState = try row.enumValue()
    vehicleID = try row.string()
    releasedFrom = try row.string()
    waitingSince = try row.date()
    assignTime = try row.optional(date)
    assignedPickupETA = try row.optional(date)
    assignments = Int(try row.int())
    createTime = try row.date()
    updateTime = try row.date()
    revision = try row.varint()
  }
}

extension BillableTripReport: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(billableTripID)
    row.string(countryCode)
    row.int(Int64(platform))
    row.array(relatedIDs) { $0.string($1) }
    row.int(Int64(solutionType))
    row.date(reportTime)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(
      provider: try row.string(), billableTripID: try row.string(), countryCode: try row.string(),
      platform: Int(try row.int()), relatedIDs: try row.array { r throws(RowFormatError) in try r.string() },
      solutionType: Int(try row.int()), reportTime: try row.date())
  }
}
