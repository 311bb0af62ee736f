import FleetCore
import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Testing

/// The fleet's traffic in fleetd's road choices: a car reporting a drive at a fifth of the
/// speed slows `/route` after the next customization, `traffic=false` keeps free flow, and what
/// was learned about that time of the week outlives a restart, for `depart_at` a week later.
@Suite("Learned traffic in routing")
struct TrafficRoutingTests {
  static let from = LatLng(latitude: 43.7300, longitude: 7.4200)
  static let to = LatLng(latitude: 43.7395, longitude: 7.4280)
  static var path: String { "/route/v1/driving/\(from.longitude),\(from.latitude);\(to.longitude),\(to.latitude)" }

  func duration(_ server: Fleetd, _ query: String = "") async throws -> Double {
    let (status, json, _) = try await server.http("GET", Self.path + query, token: nil)
    #expect(status == 200, "\(json)")
    let routes = try #require(json["routes"] as? [[String: Any]])
    return try #require(routes.first?["duration"] as? Double)
  }

  static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

  @Test func learnedTrafficReachesRoutesAndTheUsualTrafficOutlivesARestart() async throws {
    let graph = try await monacoGraph()
    var options = Fleetd.Options()
    options.graph = graph
    // An engine of its own: this fleetd customizes it.
    options.routing = try await RoutingEngine.load(graph: graph)
    options.trafficInterval = .milliseconds(200)
    let server = Fleetd(options)
    try await server.start()
    let freeFlow = try await duration(server)

    // A car on a trip drives the route at a fifth of its speed, reporting every 5 s; its last
    // report is now.
    let fleet = try server.daemon.fleet
    let admin = Caller.admin(of: "acme")
    var vehicle = Vehicle(provider: "acme", id: "slow")
    vehicle.state = .online
    vehicle.supportedTripTypes = [.exclusive]
    vehicle.maximumCapacity = 4
    vehicle.category = .auto
    let drive = SimulatedDrive(route: try #require(options.routing).route([Self.from, Self.to])) { _, _ in 0.2 }
    let start = Date().addingTimeInterval(-drive.duration)
    var created = VehicleLocation(location: Self.from)
    created.updateTime = start.addingTimeInterval(-5)
    vehicle.lastLocation = created
    _ = try await fleet.createVehicle(
      caller: admin, provider: "acme", vehicleID: "slow", vehicle: VehicleInput(vehicle: vehicle))
    var trip = Trip(provider: "acme", id: "crawl")
    trip.type = .exclusive
    trip.vehicleID = "slow"
    trip.pickupPoint = TerminalLocation(point: Self.to)
    trip.dropoffPoint = TerminalLocation(point: Self.from)
    _ = try await fleet.createTrip(caller: admin, provider: "acme", tripID: "crawl", trip: trip)
    var t = 0.0
    while t < drive.duration {
      var report = Vehicle(provider: "acme", id: "slow")
      var location = VehicleLocation(location: drive.position(after: t))
      location.updateTime = start.addingTimeInterval(t)
      report.lastLocation = location
      _ = try await fleet.updateVehicle(
        caller: admin, name: ResourceName(provider: "acme", kind: .vehicles, id: "slow"),
        vehicle: VehicleInput(vehicle: report), mask: ["last_location"])
      t += 5
    }

    // Within a few customizations the route takes the learned traffic; free flow on request.
    var slowed = freeFlow
    for _ in 0..<50 where slowed < 2 * freeFlow {
      try await Task.sleep(for: .milliseconds(200))
      slowed = try await duration(server)
    }
    #expect(slowed >= 2 * freeFlow, "free flow \(freeFlow) s, with traffic \(slowed) s")
    #expect(try await duration(server, "?traffic=false") == freeFlow)
    let metrics = try await server.metrics()
    #expect((metrics["fleetd_traffic_customization_seconds_count"] ?? 0) >= 1)
    #expect((metrics["fleetd_traffic_slowed_roads"] ?? 0) >= 1)
    try await server.stop()

    // fleetd again on the same store, its engine back at free flow: now is free flow, but a
    // week later at this time the usual traffic is what was learned (read back from the
    // store); six hours on it is not.
    let engine = try #require(options.routing)
    engine.customize(.freeFlow)
    try await server.start()
    #expect(try await duration(server) == freeFlow)
    let nextWeek = start.addingTimeInterval(7 * 86_400 + drive.duration / 2)
    let usual = try await duration(server, "?depart_at=\(Self.iso(nextWeek))")
    // The drive spans two 15-minute bins: the one asked for holds about half of it.
    #expect(usual >= 1.5 * freeFlow, "usual \(usual) s against free flow \(freeFlow) s")
    let later = try await duration(server, "?depart_at=\(Self.iso(nextWeek.addingTimeInterval(6 * 3600)))")
    #expect(later == freeFlow)
    try await server.stop()
  }

  @Test func badTrafficOptionsNameTheOptionAndTheRule() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      for (query, code, words) in [
        ("?traffic=maybe", "InvalidQuery", "traffic must be true or false"),
        ("?depart_at=tomorrow", "InvalidValue", "depart_at must be an ISO 8601 time"),
        ("?depart_at=2026-11-30T08:00", "InvalidValue", "with its offset"),
        ("?traffic=false&depart_at=2026-11-30T08:00Z", "InvalidOptions", "leave out traffic=false"),
      ] {
        let (status, json, _) = try await server.http("GET", Self.path + query, token: nil)
        #expect(status == 400, "\(query)")
        #expect(json["code"] as? String == code, "\(query): \(json)")
        #expect((json["message"] as? String)?.contains(words) == true, "\(query): \(json)")
      }
      // Mapbox's forms: minutes only, seconds, an offset.
      for time in ["2026-11-30T08:00Z", "2026-11-30T08:00:30Z", "2026-11-30T09:00+01:00"] {
        let (status, _, _) = try await server.http("GET", Self.path + "?depart_at=\(time)", token: nil)
        #expect(status == 200, "\(time)")
      }
      for service in ["table", "match"] {
        let (status, json, _) = try await server.http(
          "GET", Self.path.replacingOccurrences(of: "/route/", with: "/\(service)/") + "?traffic=sometimes", token: nil)
        #expect(status == 400 && json["code"] as? String == "InvalidQuery", "\(service)")
      }
    }
  }
}
