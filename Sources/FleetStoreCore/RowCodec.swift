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
// functions below list them, in FleetCore's binary fields (`RowWriter`). To add a field, append
// it at the end of its type and read it only when `reader.hasMore` is true, so that older rows
// keep decoding. Rows written as JSON by fleetd before this format (they start with `{`) are
// converted when a store opens (`LegacyJSONRows`).

enum RowFormat {
  static let binaryV1: UInt8 = 1
  static let json: UInt8 = UInt8(ascii: "{")
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
    row.optional(odometer) { row, odometer in
      row.double(odometer.meters)
      odometer.anchor.write(to: &row)
    }
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
    if row.hasMore {
      odometer = try row.optional { r throws(RowFormatError) in
        Odometer(meters: try r.double(), anchor: try LatLng(row: &r))
      }
    }
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
    // The ride service's fields (the request's last three among them), after the rest.
    row.optional(request.pickupTime) { $0.date($1) }
    row.optional(request.quoteID) { $0.string($1) }
    row.optional(request.product) { $0.string($1) }
    row.optional(product) { $0.string($1) }
    row.optional(pricing) { $0.string($1.rawValue) }
    row.optional(vehicleCategory) { $0.enumValue($1) }
    row.optional(fare, Fare.write)
    row.optional(finalFare, Fare.write)
    row.optional(meterStart) { row, reading in
      row.double(reading.meters)
      row.date(reading.time)
    }
    row.optional(route) { row, route in
      row.array(route.points) { row, point in point.write(to: &row) }
      row.double(route.metres)
      row.double(route.seconds)
    }
    row.optional(finalFareReason) { $0.string($1) }
    // Pooling's bounds (after the ride service's fields).
    row.optional(latestPickup) { $0.date($1) }
    row.optional(latestDropoff) { $0.date($1) }
    row.optional(directSeconds) { $0.double($1) }
    // The ride's own pooling bounds, its product's (after the plan's).
    row.optional(pooling) { row, bounds in
      let (seconds, attoseconds) = bounds.maximumWait.components
      row.int(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
      row.double(bounds.maximumDetour)
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let date = { (r: inout RowReader) throws(RowFormatError) in try r.date() }
    let string = { (r: inout RowReader) throws(RowFormatError) in try r.string() }
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
    guard row.hasMore else { return }
    request.pickupTime = try row.optional(date)
    request.quoteID = try row.optional(string)
    request.product = try row.optional(string)
    product = try row.optional(string)
    pricing = try row.optional { r throws(RowFormatError) in
      let name = try r.string()
      guard let pricing = Product.Pricing(rawValue: name) else { throw r.damaged("pricing '\(name)'") }
      return pricing
    }
    vehicleCategory = try row.optional { r throws(RowFormatError) in try r.enumValue() }
    fare = try row.optional(Fare.read)
    finalFare = try row.optional(Fare.read)
    meterStart = try row.optional { r throws(RowFormatError) in
      MeterReading(meters: try r.double(), time: try r.date())
    }
    route = try row.optional { r throws(RowFormatError) in
      PlannedRoute(
        points: try r.array { r throws(RowFormatError) in try LatLng(row: &r) }, metres: try r.double(),
        seconds: try r.double())
    }
    finalFareReason = try row.optional(string)
    guard row.hasMore else { return }
    latestPickup = try row.optional(date)
    latestDropoff = try row.optional(date)
    directSeconds = try row.optional { r throws(RowFormatError) in try r.double() }
    guard row.hasMore else { return }
    pooling = try row.optional { r throws(RowFormatError) in
      PoolingBounds(maximumWait: .milliseconds(try r.int()), maximumDetour: try r.double())
    }
  }
}

extension Fare: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(currency.code)
    row.int(Int64(currency.digits))
    row.int(surge.micros)
    row.array(items) { row, item in
      row.string(item.kind.rawValue)
      row.int(item.amount.minorUnits)
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let currency = Currency(code: try row.string(), digits: Int(try row.int()))
    let surge = Decimal6(micros: try row.int())
    let items = try row.array { r throws(RowFormatError) in
      let name = try r.string()
      guard let kind = Fare.Kind(rawValue: name) else { throw r.damaged("fare item kind '\(name)'") }
      return Fare.Item(kind, Money(try r.int(), currency))
    }
    self.init(items: items, currency: currency, surge: surge)
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

extension FleetEvent: RowCodable {
  // The ride or vehicle is nested as its own whole row, length first, so that fields appended
  // to it later keep older events decodable.
  func write(to row: inout RowWriter) {
    row.string(id)
    row.string(type.rawValue)
    row.string(provider)
    row.string(subject.kind.rawValue)
    row.string(subject.id)
    row.varint(revision)
    row.varint(UInt64(position))
    row.date(time)
    switch payload {
    case .ride(let view):
      row.varint(0)
      row.data(Data(view.ride.rowBytes))
      row.enumValue(view.state)
      row.string(view.vehicleID)
    case .vehicle(let vehicle, let zone):
      row.varint(1)
      row.data(Data(vehicle.rowBytes))
      row.optional(zone) { $0.string($1) }
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let id = try row.string()
    let typeName = try row.string()
    guard let type = FleetEventType(rawValue: typeName) else { throw row.damaged("event type '\(typeName)'") }
    let provider = try row.string()
    let kindName = try row.string()
    guard let kind = EntityKind(rawValue: kindName) else { throw row.damaged("entity kind '\(kindName)'") }
    let subject = EntityKey(kind, provider: provider, id: try row.string())
    let revision = try row.varint()
    let position = Int(try row.varint())
    let time = try row.date()
    let payload: Payload
    switch try row.varint() {
    case 0:
      let ride: Ride = try Self.nested(try row.data(), in: row)
      payload = .ride(RideView(ride: ride, state: try row.enumValue(), vehicleID: try row.string()))
    case 1:
      let vehicle: Vehicle = try Self.nested(try row.data(), in: row)
      payload = .vehicle(vehicle, zone: try row.optional { r throws(RowFormatError) in try r.string() })
    case let tag:
      throw row.damaged("event payload \(tag)")
    }
    self.init(
      id: id, type: type, provider: provider, subject: subject, revision: revision, position: position, time: time,
      payload: payload)
  }

  static func nested<T: RowCodable>(_ bytes: Data, in row: RowReader) throws(RowFormatError) -> T {
    guard bytes.first == RowFormat.binaryV1 else { throw row.damaged("a nested row of unknown format") }
    var reader = RowReader([UInt8](bytes), from: 1)
    return try T(row: &reader)
  }
}

extension TimeWindow: RowCodable {
  func write(to row: inout RowWriter) {
    row.date(start)
    row.date(end)
  }

  init(row: inout RowReader) throws(RowFormatError) { self.init(start: try row.date(), end: try row.date()) }
}

extension Visibility: RowCodable {
  func write(to row: inout RowWriter) {
    switch self {
    case .remainingStopCountAtMost(let n):
      row.varint(1)
      row.int32(n)
    case .durationUntilArrivalAtMost(let seconds):
      row.varint(2)
      row.double(seconds)
    case .remainingDrivingDistanceAtMost(let metres):
      row.varint(3)
      row.int32(metres)
    case .always: row.varint(4)
    case .never: row.varint(5)
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    switch try row.varint() {
    case 1: self = .remainingStopCountAtMost(try row.int32())
    case 2: self = .durationUntilArrivalAtMost(try row.double())
    case 3: self = .remainingDrivingDistanceAtMost(try row.int32())
    case 4: self = .always
    case 5: self = .never
    case let other: throw row.damaged("unknown visibility option \(other)")
    }
  }
}

extension TaskTrackingViewConfig: RowCodable {
  func write(to row: inout RowWriter) {
    for option in [
      routePolylinePoints, estimatedArrivalTime, estimatedTaskCompletionTime, remainingDrivingDistance,
      remainingStopCount, vehicleLocation,
    ] {
      row.optional(option, Visibility.write)
    }
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init()
    routePolylinePoints = try row.optional(Visibility.read)
    estimatedArrivalTime = try row.optional(Visibility.read)
    estimatedTaskCompletionTime = try row.optional(Visibility.read)
    remainingDrivingDistance = try row.optional(Visibility.read)
    remainingStopCount = try row.optional(Visibility.read)
    vehicleLocation = try row.optional(Visibility.read)
  }
}

extension JourneySegment: RowCodable {
  func write(to row: inout RowWriter) {
    stop.plannedLocation.write(to: &row)
    row.array(stop.tasks) { $0.string($1.taskID) }
    row.enumValue(stop.state)
    row.optional(drivingDistanceMeters) { $0.int32($1) }
    row.optional(drivingDuration) { $0.double($1) }
    row.array(path, LatLng.write)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    let planned = try LatLng(row: &row)
    let tasks = try row.array { r throws(RowFormatError) in VehicleStop.TaskInfo(taskID: try r.string()) }
    self.init(stop: VehicleStop(plannedLocation: planned, tasks: tasks, state: try row.enumValue()))
    drivingDistanceMeters = try row.optional { r throws(RowFormatError) in try r.int32() }
    drivingDuration = try row.optional { r throws(RowFormatError) in try r.double() }
    path = try row.array(LatLng.read)
  }
}

extension DeliveryVehicle: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(id)
    row.optional(lastLocation, VehicleLocation.write)
    row.enumValue(navigationStatus)
    row.array(currentRouteSegment) { $0.varint(UInt64($1)) }
    row.optional(currentRouteSegmentEndPoint, LatLng.write)
    row.optional(remainingDistanceMeters) { $0.int32($1) }
    row.optional(remainingDuration) { $0.double($1) }
    row.array(journey, JourneySegment.write)
    row.array(attributes, Attribute.write)
    row.enumValue(type)
    row.date(createTime)
    row.date(updateTime)
    row.varint(revision)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(provider: try row.string(), id: try row.string())
    lastLocation = try row.optional(VehicleLocation.read)
    navigationStatus = try row.enumValue()
    currentRouteSegment = try row.array { r throws(RowFormatError) in UInt8(truncatingIfNeeded: try r.varint()) }
    currentRouteSegmentEndPoint = try row.optional(LatLng.read)
    remainingDistanceMeters = try row.optional { r throws(RowFormatError) in try r.int32() }
    remainingDuration = try row.optional { r throws(RowFormatError) in try r.double() }
    journey = try row.array(JourneySegment.read)
    attributes = try row.array(Attribute.read)
    type = try row.enumValue()
    createTime = try row.date()
    updateTime = try row.date()
    revision = try row.varint()
  }
}

extension DeliveryTask: RowCodable {
  func write(to row: inout RowWriter) {
    row.string(provider)
    row.string(id)
    row.enumValue(type)
    row.enumValue(state)
    row.enumValue(outcome)
    row.optional(outcomeTime) { $0.date($1) }
    row.optional(outcomeLocation, LatLng.write)
    row.enumValue(outcomeLocationSource)
    row.string(trackingID)
    row.string(deliveryVehicleID)
    row.optional(plannedLocation, LatLng.write)
    row.double(duration)
    row.optional(targetTimeWindow, TimeWindow.write)
    row.optional(trackingViewConfig, TaskTrackingViewConfig.write)
    row.array(attributes, Attribute.write)
    row.date(createTime)
    row.date(updateTime)
    row.varint(revision)
  }

  init(row: inout RowReader) throws(RowFormatError) {
    self.init(provider: try row.string(), id: try row.string())
    type = try row.enumValue()
    state = try row.enumValue()
    outcome = try row.enumValue()
    outcomeTime = try row.optional { r throws(RowFormatError) in try r.date() }
    outcomeLocation = try row.optional(LatLng.read)
    outcomeLocationSource = try row.enumValue()
    trackingID = try row.string()
    deliveryVehicleID = try row.string()
    plannedLocation = try row.optional(LatLng.read)
    duration = try row.double()
    targetTimeWindow = try row.optional(TimeWindow.read)
    trackingViewConfig = try row.optional(TaskTrackingViewConfig.read)
    attributes = try row.array(Attribute.read)
    createTime = try row.date()
    updateTime = try row.date()
    revision = try row.varint()
  }
}
