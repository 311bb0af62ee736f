import FleetCore
import FleetGeometry
import Foundation
import GRDB
import Testing

@testable import FleetStoreCore
@testable import FleetStoreSQLite

@Suite("Row format")
struct RowCodecTests {
  /// A vehicle with every field set to something other than its default.
  static var fullVehicle: Vehicle {
    var v = Vehicle(provider: "prov-é", id: "veh-1")
    v.state = .online
    v.supportedTripTypes = [.exclusive, .shared]
    v.currentTrips = ["t1", "t2"]
    v.lastLocation = fullLocation
    v.maximumCapacity = 7
    v.attributes = [
      Attribute(key: "s", value: .string("x✓")), Attribute(key: "b", value: .bool(true)),
      Attribute(key: "n", value: .number(-2.25)),
    ]
    v.category = .twoWheeler
    v.licensePlate = LicensePlate(countryCode: "MC", lastCharacter: "7")
    v.currentRouteSegment = "encoded-polyline"
    v.currentRouteSegmentVersion = Date(timeIntervalSince1970: 1_700_000_001.123456)
    v.currentRouteSegmentEndPoint = TripWaypoint(
      location: TerminalLocation(point: LatLng(latitude: 43.7, longitude: 7.4)), tripID: "t1", waypointType: .dropOff)
    v.remainingDistanceMeters = -1
    v.etaToFirstWaypoint = Date(timeIntervalSince1970: 1_700_000_002)
    v.waypoints = [
      TripWaypoint(
        location: TerminalLocation(point: LatLng(latitude: 1, longitude: 2)), tripID: "t2", waypointType: .pickup),
      TripWaypoint(
        location: TerminalLocation(point: LatLng(latitude: -3, longitude: -4)), tripID: "t2",
        waypointType: .intermediateDestination),
    ]
    v.waypointsVersion = Date(timeIntervalSince1970: 1_700_000_003)
    v.backToBackEnabled = true
    v.navigationStatus = .offRoute
    v.createTime = Date(timeIntervalSince1970: 1_600_000_000.5)
    v.updateTime = Date(timeIntervalSince1970: 1_700_000_004.000001)
    v.revision = 1 << 40
    return v
  }

  static var fullLocation: VehicleLocation {
    var l = VehicleLocation(location: LatLng(latitude: 43.7384, longitude: 7.4246))
    l.latlngAccuracy = 3.5
    l.heading = 359
    l.headingAccuracy = 1.25
    l.altitude = -12.5
    l.altitudeAccuracy = 0.5
    l.speed = 13.9
    l.speedAccuracy = 0.75
    l.updateTime = Date(timeIntervalSince1970: 1_700_000_010.25)
    l.serverTime = Date(timeIntervalSince1970: 1_700_000_011)
    l.locationSensor = .gps
    l.isRoadSnapped = false
    l.isGpsSensorEnabled = true
    l.timeSinceUpdate = Int32.min
    l.rawLocation = LatLng(latitude: -90, longitude: 180)
    l.rawLocationTime = Date(timeIntervalSince1970: 1_700_000_012)
    l.rawLocationSensor = .network
    l.rawLocationAccuracy = 10
    l.flpLocation = LatLng(latitude: 90, longitude: -180)
    l.flpUpdateTime = Date(timeIntervalSince1970: 1_700_000_013)
    l.flpLatlngAccuracyMeters = 4
    l.flpHeadingDegrees = 12
    l.supplementalLocation = LatLng(latitude: 0.000001, longitude: -0.000001)
    l.supplementalLocationTime = Date(timeIntervalSince1970: 1_700_000_014)
    l.supplementalLocationSensor = .customerSuppliedLocation
    l.supplementalLocationAccuracy = 8
    return l
  }

  static var fullTrip: Trip {
    var t = Trip(provider: "prov", id: "trip-1")
    let point = { (lat: Double) in TerminalLocation(point: LatLng(latitude: lat, longitude: lat / 2)) }
    t.vehicleID = "veh-1"
    t.status = .enrouteToIntermediateDestination
    t.type = .shared
    t.pickupPoint = point(1)
    t.actualPickupPoint = StopLocation(
      point: LatLng(latitude: 2, longitude: 3), timestamp: Date(timeIntervalSince1970: 5))
    t.actualPickupArrivalPoint = StopLocation(point: LatLng(latitude: 4, longitude: 5))
    t.pickupTime = Date(timeIntervalSince1970: 6)
    t.intermediateDestinations = [point(7), point(8)]
    t.intermediateDestinationsVersion = Date(timeIntervalSince1970: 9)
    t.intermediateDestinationIndex = 1
    t.actualIntermediateDestinationArrivalPoints = [StopLocation(point: LatLng(latitude: 10, longitude: 11))]
    t.actualIntermediateDestinations = [
      StopLocation(point: LatLng(latitude: 12, longitude: 13), timestamp: Date(timeIntervalSince1970: 14))
    ]
    t.dropoffPoint = point(15)
    t.actualDropoffPoint = StopLocation(point: LatLng(latitude: 16, longitude: 17))
    t.dropoffTime = Date(timeIntervalSince1970: 18)
    t.numberOfPassengers = 3
    t.attributes = [Attribute(key: "k", value: .string(""))]
    t.remainingWaypointsVersion = Date(timeIntervalSince1970: 19)
    t.createTime = Date(timeIntervalSince1970: 20)
    t.updateTime = Date(timeIntervalSince1970: 21)
    t.revision = 22
    return t
  }

  func roundTrip<T: RowCodable & Decodable>(_ value: T) throws -> T {
    try StoredRows.decode(Data(value.rowBytes))
  }

  @Test func everyFieldSurvivesTheRowFormat() throws {
    #expect(try roundTrip(Self.fullVehicle) == Self.fullVehicle)
    #expect(try roundTrip(Self.fullTrip) == Self.fullTrip)
    // And the defaults (empty optionals and arrays) too.
    #expect(try roundTrip(Vehicle(provider: "p", id: "v")) == Vehicle(provider: "p", id: "v"))
    #expect(try roundTrip(Trip(provider: "p", id: "t")) == Trip(provider: "p", id: "t"))
  }

  @Test func rowsAreStoredInTheBinaryFormatAndSurviveReopening() async throws {
    let dir = NSTemporaryDirectory() + "fleetkit-rows-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    do {
      let store = try SQLiteStore(directory: dir)
      try await store.commit([.putVehicle(Self.fullVehicle), .putTrip(Self.fullTrip)])
      let first = try await store.pool.read { db in try Data.fetchOne(db, sql: "SELECT body FROM vehicles") }
      #expect(first?.first == RowFormat.binaryV1)
    }
    let reopened = try SQLiteStore(directory: dir)
    #expect(try await reopened.loadVehicles() == [Self.fullVehicle])
    #expect(try await reopened.loadTrips() == [Self.fullTrip])
  }

  @Test func aDamagedRowIsReportedWithItsName() async throws {
    let dir = NSTemporaryDirectory() + "fleetkit-rows-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try SQLiteStore(directory: dir)
    let bytes = Self.fullVehicle.rowBytes
    for damaged in [Array(bytes.dropLast(3)), bytes + [0], [RowFormat.binaryV1, 0xFF, 0xFF], [9, 1, 2]] {
      try await store.pool.write { db in
        try db.execute(
          sql: "INSERT OR REPLACE INTO vehicles (provider, id, revision, body) VALUES ('p', 'broken', 1, ?)",
          arguments: [Data(damaged)])
      }
      await #expect(throws: StoreError.self) { try await store.loadVehicles() }
      do {
        _ = try await store.loadVehicles()
      } catch {
        #expect("\(error)".contains("providers/p/broken"))
      }
    }
  }

  @Test func lengthsBeyondTheRowAreDamageNotAllocations() throws {
    var reader = RowReader([0xFF, 0xFF, 0xFF, 0x7F])
    #expect(throws: RowFormatError.self) { try reader.string() }
    var long = RowReader(Array(repeating: 0xFF, count: 11) + [0])
    #expect(throws: RowFormatError.self) { try long.varint() }
    var writer = RowWriter()
    for value in [Int64.min, -1, 0, 1, Int64.max] { writer.int(value) }
    var back = RowReader(writer.bytes)
    var decoded: [Int64] = []
    for _ in 0..<5 { decoded.append(try back.int()) }
    #expect(decoded == [Int64.min, -1, 0, 1, Int64.max])
  }

  /// Every field of a logged write, the progress with its route and traffic included.
  @Test func theChangeLogFormatKeepsEveryField() throws {
    let waypoint = TripWaypoint(
      location: TerminalLocation(point: LatLng(latitude: 43.7, longitude: 7.4)), tripID: "t1", waypointType: .pickup)
    let path = [LatLng(latitude: 43.70001, longitude: 7.40002), LatLng(latitude: 43.7, longitude: 7.4)]
    let progress = VehicleRouteProgress(
      legs: [
        WaypointProgress(
          waypoint: waypoint, path: path, traffic: [SpeedInterval(start: 0, end: 1, speed: .trafficJam)],
          distanceMeters: 3.25, duration: 1.5, eta: Date(timeIntervalSince1970: 1_700_000_000.123456))
      ], navigationStatus: .enrouteToDestination, isLocationSnappable: true,
      computedAt: Date(timeIntervalSince1970: 1), routeVersion: Date(timeIntervalSince1970: 2),
      trafficVersion: Date(timeIntervalSince1970: 3))
    let writes = [
      LoggedWrite(
        rows: [
          StoredRow(
            table: .vehicles, provider: "prov-é", id: "veh-1", revision: 1 << 40 | 7,
            body: Data(Self.fullVehicle.rowBytes)),
          StoredRow(table: .trips, provider: "p", id: "gone", revision: 3, body: nil),
        ],
        progress: [
          VehicleProgressRecord(provider: "prov-é", vehicleID: "veh-1", revision: 1 << 40 | 7, progress: progress),
          VehicleProgressRecord(provider: "p", vehicleID: "still", revision: 2, progress: nil),
        ]),
      LoggedWrite(rows: [], progress: []),
    ]
    let bytes = ChangeLogFormat.encode(writes)
    #expect(try ChangeLogFormat.decode(bytes) == writes)
    #expect(throws: RowFormatError.self) { try ChangeLogFormat.decode(Array(bytes.dropLast(2))) }
    #expect(throws: RowFormatError.self) { try ChangeLogFormat.decode([9] + bytes.dropFirst()) }
  }
}
