import FleetCore
import FleetGeometry
import FleetProto
import FleetRouting
import FleetTestSupport
import Foundation
import GRPCCore
import SwiftProtobuf
import Testing

/// SearchVehicles on a real fleetd over a drawn map where the straight line and the road
/// disagree: a river between two roads with one bridge far to the east, and a slow street
/// west of the pickup where the road east of it is fast.
@Suite("SearchVehicles on fleetd")
struct SearchVehiclesTests {
  /// 50 m per character. Row 0 is the north bank, row 2 the south bank (100 m apart);
  /// `5` is the pickup, `6` the drop-off.
  static let map: MapFixture = {
    var north = Array(repeating: Character(" "), count: 41)
    var south = north
    for (column, c) in [(0, "a"), (6, "1"), (20, "4"), (40, "b")] as [(Int, Character)] { north[column] = c }
    for (column, c) in [
      (0, "c"), (1, "2"), (2, "0"), (4, "6"), (6, "m"), (7, "5"), (12, "9"), (18, "3"), (25, "8"), (35, "7"),
      (40, "d"),
    ] as [(Int, Character)] {
      south[column] = c
    }
    var map = MapFixture(String(north) + "\n\n" + String(south), gridMeters: 50)
    map.way("ab", ["highway": "primary"])
    map.way("bd", ["highway": "primary"])
    map.way("cm", ["highway": "living_street"])
    map.way("md", ["highway": "primary"])
    return map
  }()
  static let engine: RoutingEngine = try! map.engine()

  var pickup: LatLng { Self.map.point("5") }
  var dropoff: LatLng { Self.map.point("6") }

  func run(_ body: (Fleetd) async throws -> Void) async throws {
    try await Fleetd.with(routing: Self.engine, body)
  }

  func addVehicle(
    _ server: Fleetd, _ id: String, at point: Character, backToBack: Bool = false
  ) async throws {
    var request = newVehicleRequest(id)
    request.vehicle.lastLocation.location = Self.map.point(point).proto
    request.vehicle.backToBackEnabled = backToBack
    try await server.withClients { _, vehicles in
      _ = try await vehicles.createVehicle(request, metadata: auth(try server.admin.token()))
    }
  }

  func addTrip(
    _ server: Fleetd, _ id: String, type: Maps_Fleetengine_V1_TripType, vehicle: String, from: LatLng, to: LatLng,
    statuses: [Maps_Fleetengine_V1_TripStatus] = []
  ) async throws {
    try await server.withClients { trips, _ in
      var request = Maps_Fleetengine_V1_CreateTripRequest()
      request.parent = "providers/acme"
      request.tripID = id
      request.trip.tripType = type
      request.trip.vehicleID = vehicle
      request.trip.pickupPoint.point = from.proto
      request.trip.dropoffPoint.point = to.proto
      _ = try await trips.createTrip(request, metadata: auth(try server.admin.token()))
      for status in statuses {
        var update = Maps_Fleetengine_V1_UpdateTripRequest()
        update.name = "providers/acme/trips/\(id)"
        update.trip.tripStatus = status
        update.updateMask.paths = ["trip_status"]
        _ = try await trips.updateTrip(update, metadata: auth(try server.admin.token()))
      }
    }
  }

  func request(_ tweak: (inout Maps_Fleetengine_V1_SearchVehiclesRequest) -> Void = { _ in })
    -> Maps_Fleetengine_V1_SearchVehiclesRequest
  {
    var r = Maps_Fleetengine_V1_SearchVehiclesRequest()
    r.parent = "providers/acme"
    r.pickupPoint.point = pickup.proto
    r.dropoffPoint.point = dropoff.proto
    r.pickupRadiusMeters = 3000
    r.count = 10
    r.minimumCapacity = 1
    r.tripTypes = [.exclusive]
    var auto = Maps_Fleetengine_V1_Vehicle.VehicleType()
    auto.category = .auto
    r.vehicleTypes = [auto]
    r.orderBy = .pickupPointEta
    tweak(&r)
    return r
  }

  func search(_ server: Fleetd, _ r: Maps_Fleetengine_V1_SearchVehiclesRequest, token: String? = nil) async throws
    -> [Maps_Fleetengine_V1_VehicleMatch]
  {
    var matches: [Maps_Fleetengine_V1_VehicleMatch] = []
    try await server.withClients { _, vehicles in
      matches = try await vehicles.searchVehicles(r, metadata: auth(try token ?? server.admin.token())).matches
    }
    return matches
  }

  func id(_ m: Maps_Fleetengine_V1_VehicleMatch) -> String { String(m.vehicle.name.split(separator: "/").last!) }
  func seconds(_ m: Maps_Fleetengine_V1_VehicleMatch, _ eta: Google_Protobuf_Timestamp) -> Double {
    Date(eta).timeIntervalSince(Date(m.vehicleTripsWaypoints[0].eta))
  }

  @Test func eachOrderRanksAsItSaysWhereStraightLinesAndRoadsDisagree() async throws {
    try await run { server in
      for (id, point) in [("river", Character("1")), ("slow", "2"), ("fast", "3")] {
        try await addVehicle(server, id, at: point)
      }
      // What each vehicle's drive is, computed separately, one route each.
      var drive: [String: Route] = [:]
      var straight: [String: Double] = [:]
      for (id, point) in [("river", Character("1")), ("slow", "2"), ("fast", "3")] {
        drive[id] = try Self.engine.route([Self.map.point(point), pickup])
        straight[id] = Self.map.point(point).distance(to: pickup)
      }
      let onward = try Self.engine.route([pickup, dropoff]).duration
      let weights = MatchCostWeights()
      let keys: [Maps_Fleetengine_V1_SearchVehiclesRequest.VehicleMatchOrder: (String) -> Double] = [
        .pickupPointEta: { drive[$0]!.duration },
        .pickupPointDistance: { drive[$0]!.distance },
        .dropoffPointEta: { drive[$0]!.duration + onward },
        .pickupPointStraightDistance: { straight[$0]! },
        .cost: { weights.secondsOfETA * drive[$0]!.duration + weights.metresOfStraightLine * straight[$0]! },
      ]
      let ids = ["river", "slow", "fast"]
      // The map does what it is for: the orders differ.
      #expect(ids.sorted { straight[$0]! < straight[$1]! } == ["river", "slow", "fast"])
      #expect(ids.sorted { drive[$0]!.duration < drive[$1]!.duration } == ["fast", "slow", "river"])
      #expect(ids.sorted { drive[$0]!.distance < drive[$1]!.distance } == ["slow", "fast", "river"])
      for (order, key) in keys {
        let matches = try await search(server, request { $0.orderBy = order })
        #expect(matches.map(id) == ids.sorted { key($0) < key($1) }, "\(order)")
        #expect(matches.allSatisfy { $0.orderedBy == order && $0.requestedOrderedBy == order })
        for m in matches {
          let route = drive[id(m)]!
          #expect(abs(seconds(m, m.vehiclePickupEta) - route.duration) < 1, "\(order) \(id(m))")
          #expect(abs(Double(m.vehiclePickupDistanceMeters.value) - route.distance) <= 1)
          #expect(abs(Double(m.vehiclePickupStraightLineDistanceMeters.value) - straight[id(m)]!) <= 1)
          #expect(abs(seconds(m, m.vehicleDropoffEta) - route.duration - onward) < 1)
          #expect(m.vehicleMatchType == .exclusive && m.tripType == .exclusive)
          #expect(m.vehicleTripsWaypoints.count == 3)
        }
      }
      // count keeps the best.
      #expect(try await search(server, request { $0.count = 1 }).map(id) == ["fast"])
      // The radius is a straight line: 400 m keeps the vehicle across the river, however far
      // it is by road.
      let near = try await search(server, request { $0.pickupRadiusMeters = 400 })
      #expect(near.map(id) == ["slow", "river"])
    }
  }

  @Test func backToBackAndCarpoolEstimatesFollowTheirWaypoints() async throws {
    try await run { server in
      try await addVehicle(server, "b2b", at: "4", backToBack: true)
      try await addTrip(
        server, "current", type: .exclusive, vehicle: "b2b", from: Self.map.point("4"), to: Self.map.point("8"),
        statuses: [.enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff])
      try await addVehicle(server, "pool", at: "7")
      try await addTrip(
        server, "rider", type: .shared, vehicle: "pool", from: Self.map.point("9"), to: Self.map.point("0"))

      let b2b = try #require(
        try await search(server, request { $0.includeBackToBack = true }).first { id($0) == "b2b" })
      #expect(b2b.vehicleMatchType == .backToBack)
      let points = ["4", "8", "5", "6"].map { Self.map.point(Character($0)) }
      #expect(b2b.vehicleTripsWaypoints.map { LatLng($0.latLng) }.map(rounded) == points.map(rounded))
      let legs = try Self.engine.route(points).legs
      // Finishing the current trip, then on to the pickup: its ETA counts both.
      #expect(abs(seconds(b2b, b2b.vehiclePickupEta) - legs[0].duration - legs[1].duration) < 1.5)
      #expect(abs(Double(b2b.vehiclePickupDistanceMeters.value) - legs[0].distance - legs[1].distance) <= 2)

      let shared = request { r in
        r.tripTypes = [.shared]
        r.currentTripsPresent = .any
      }
      let pool = try #require(try await search(server, shared).first { id($0) == "pool" })
      #expect(pool.vehicleMatchType == .carpool)
      // On its way west to its rider's pickup and drop-off: the new rider is picked up after
      // its rider and dropped before it.
      let order = ["7", "9", "5", "6"].map { Self.map.point(Character($0)) }
      #expect(pool.vehicleTripsWaypoints.map { LatLng($0.latLng) }.map(rounded) == order.map(rounded))
      let through = try Self.engine.route(order).legs
      var elapsed = 0.0
      for (waypoint, leg) in zip(pool.vehicleTripsWaypoints.dropFirst(), through) {
        elapsed += leg.duration
        #expect(abs(seconds(pool, waypoint.eta) - elapsed) < 1.5)
      }
      #expect(abs(seconds(pool, pool.vehicleDropoffEta) - elapsed) < 1.5)
      #expect(pool.vehiclePickupToDropoffDistanceMeters.value == Int32(through[2].distance.rounded()))
    }
  }

  @Test func ridersSearchNearbyCarsDriversMayNotAndRESTAnswersTheSame() async throws {
    try await run { server in
      try await addVehicle(server, "fast", at: "3")
      let rider = try await server.signer(role: .consumer).token()
      let seen = try await search(server, request(), token: rider)
      #expect(seen.map(id) == ["fast"])
      #expect(seen[0].vehicle.currentTrips.isEmpty && seen[0].vehicle.hasLastLocation)
      let driver = try await server.signer(role: .driver).token(vehicleID: "fast")
      #expect(await rpcCode { _ = try await search(server, request(), token: driver) } == .permissionDenied)

      let body = """
        {"pickupPoint":{"point":{"latitude":\(pickup.latitude),"longitude":\(pickup.longitude)}},
         "pickupRadiusMeters":3000,"count":5,"minimumCapacity":1,"tripTypes":["EXCLUSIVE"],
         "vehicleTypes":[{"category":"AUTO"}],"orderBy":"PICKUP_POINT_ETA"}
        """
      let (status, json, _) = try await server.http(
        "POST", "/v1/providers/acme/vehicles:search", token: try server.admin.token(), body: body)
      #expect(status == 200)
      let match = try #require((json["matches"] as? [[String: Any]])?.first)
      #expect((match["vehicle"] as? [String: Any])?["name"] as? String == "providers/acme/vehicles/fast")
      #expect(match["orderedBy"] as? String == "PICKUP_POINT_ETA")
      #expect(match["vehicleMatchType"] as? String == "EXCLUSIVE")
      let (badStatus, badJSON, _) = try await server.http(
        "POST", "/v1/providers/acme/vehicles:search", token: try server.admin.token(),
        body: body.replacingOccurrences(of: "3000", with: "100"))
      let error = badJSON["error"] as? [String: Any]
      #expect(badStatus == 400 && error?["status"] as? String == "INVALID_ARGUMENT")
      #expect((error?["message"] as? String)?.contains("pickup_radius_meters") == true)
    }
  }

  func rounded(_ p: LatLng) -> String { String(format: "%.5f,%.5f", p.latitude, p.longitude) }
}

extension LatLng {
  var proto: Google_Type_LatLng {
    var p = Google_Type_LatLng()
    p.latitude = latitude
    p.longitude = longitude
    return p
  }

  init(_ p: Google_Type_LatLng) { self.init(latitude: p.latitude, longitude: p.longitude) }
}

extension Date {
  init(_ t: Google_Protobuf_Timestamp) { self.init(timeIntervalSince1970: Double(t.seconds) + Double(t.nanos) / 1e9) }
}
