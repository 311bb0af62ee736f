import FleetAuth
import FleetClient
import FleetCore
import FleetDispatch
import FleetGeometry
import FleetRouting
import FleetTestSupport
import Foundation
import Synchronization
import Testing

@testable import FleetSimulator

@Suite("Demand models")
struct DemandModelTests {
  /// `fleet simulate` and `fleetd demo` check their shared flags with these rules, each message
  /// naming the flag.
  @Test func theSharedRunFlagsNameTheFlagThatBreaksItsRule() {
    func settings(
      interval: Double? = 5, speedup: Double = 1, perMinute: Double = 60, profile: String = "flat",
      clock: String = "08:00"
    ) -> CityRunSettings {
      CityRunSettings(interval: interval, speedup: speedup, ridersPerMinute: perMinute, profile: profile, clock: clock)
    }
    #expect(settings().problem == nil)
    #expect(settings(interval: nil).problem == nil, "no interval: the command's default")
    #expect(settings(interval: 0.5).problem?.hasPrefix("--interval") == true)
    #expect(settings(speedup: 0).problem?.hasPrefix("--speedup") == true)
    #expect(settings(perMinute: -1).problem?.hasPrefix("--riders-per-minute") == true)
    #expect(settings(profile: "rush").problem?.hasPrefix("--profile") == true)
    #expect(settings(clock: "25:00").problem?.hasPrefix("--clock") == true)
    #expect(settings(clock: "07:30").startOfDay == 27_000)
  }

  @Test func profilesByNameAndTheirErrors() throws {
    #expect(try DemandProfile.named("flat").level(atSecondOfDay: 3 * 3600) == 1)
    let commute = try DemandProfile.named("commute")
    #expect(commute.level(atSecondOfDay: 8 * 3600) == 1, "the busiest hour is 1")
    #expect(commute.level(atSecondOfDay: 3 * 3600) < 0.1)
    // Between hours, linearly; past midnight, the next day.
    let custom = try DemandProfile.named((0..<24).map { $0 == 10 ? "4" : $0 == 11 ? "2" : "0" }.joined(separator: ","))
    #expect(abs(custom.level(atSecondOfDay: 10.5 * 3600) - 0.75) < 1e-9)
    #expect(custom.level(atSecondOfDay: (24 + 10) * 3600) == 1)
    #expect(throws: FleetError.self) { try DemandProfile.named("rush") }
    #expect(DemandProfile.secondOfDay("08:30") == 30_600)
    #expect(DemandProfile.secondOfDay("23:59") == 86_340)
    for bad in ["8", "24:00", "07:60", "7:", ":30", "07:30:00"] {
      #expect(DemandProfile.secondOfDay(bad) == nil, "\(bad)")
    }
    let short = #expect(throws: FleetError.self) { try DemandProfile.named("1,2,3") }
    #expect(short?.message.contains("24 hourly values") == true)
    let zero = #expect(throws: FleetError.self) {
      try DemandProfile.named(Array(repeating: "0", count: 24).joined(separator: ","))
    }
    #expect(zero?.message.contains("at least one above 0") == true)
  }

  @Test func poissonArrivalsFollowTheRateAndTheProfile() throws {
    let places = CityPlaces(points: [LatLng(latitude: 0, longitude: 0), LatLng(latitude: 0.02, longitude: 0.02)])
    var flat = PoissonDemand(perMinute: 120, profile: .flat, startOfDay: 0, places: places, seed: 3)
    var count = 0
    var last = 0.0
    while let request = flat.next(), request.time < 3600 {
      #expect(request.time >= last, "in time order")
      last = request.time
      count += 1
    }
    // 7,200 expected; a Poisson count's standard deviation is √7200 ≈ 85.
    #expect(abs(count - 7200) < 400, "\(count)")
    // Quiet hours thin the stream: 3–4 am of the commute profile is under a tenth of the peak.
    var night = PoissonDemand(perMinute: 120, profile: .commute, startOfDay: 3 * 3600, places: places, seed: 3)
    var quiet = 0
    while let request = night.next(), request.time < 3600 { quiet += 1 }
    #expect(quiet > 200 && quiet < 900, "\(quiet)")
    // The day's clock runs with the speedup: an hour at 60× covers the whole day.
    var fast = PoissonDemand(perMinute: 120, profile: .commute, startOfDay: 0, speedup: 24, places: places, seed: 3)
    var day = 0
    while let request = fast.next(), request.time < 3600 { day += 1 }
    let mean = DemandProfile.commute.hourly.reduce(0, +) / 24
    #expect(abs(Double(day) - 7200 * mean) < 7200 * mean * 0.1, "\(day) against \(7200 * mean)")
  }

  @Test func aReplayReadsTheCSVAndNamesTheLineAndFieldOfAnError() throws {
    let csv = """
      time,pickup_lat,pickup_lng,dropoff_lat,dropoff_lng,passengers
      0,-34.92,138.60,-34.93,138.61,1
      # a comment
      30.5,-34.90,138.58,-34.95,138.62,3
      """
    var replay = try ReplayDemand(csv: csv, source: "rides.csv")
    replay.speedup = 2
    #expect(
      replay.next()
        == RideRequest(
          time: 0, pickup: LatLng(latitude: -34.92, longitude: 138.60),
          dropoff: LatLng(latitude: -34.93, longitude: 138.61),
          passengers: 1))
    #expect(replay.next()?.time == 15.25, "played twice as fast")
    #expect(replay.next() == nil)

    let dated = try ReplayDemand(
      csv: "2026-11-26T08:00:00Z,1,2,3,4,1\n2026-11-26T08:01:30Z,1,2,3,4,2\n", source: "d.csv")
    #expect(dated.requests.map(\.time) == [0, 90])

    func failure(_ text: String) -> String? {
      (#expect(throws: FleetError.self) { try ReplayDemand(csv: text, source: "r.csv") })?.message
    }
    #expect(failure("0,1,2,3,4,1\n0,95,2,3,4,1") == "r.csv line 2: pickup_lat must be a latitude in -90…90, got '95'")
    #expect(failure("0,1,2,3,400,1") == "r.csv line 1: dropoff_lng must be a longitude in -180…180, got '400'")
    #expect(failure("0,1,2,3,4,0") == "r.csv line 1: passengers must be a whole number in 1…20, got '0'")
    #expect(failure("5,1,2,3,4,1\n4,1,2,3,4,1")?.contains("line 2: time 4 is before the row above") == true)
    #expect(failure("soon,1,2,3,4,1")?.contains("time must be seconds from the start") == true)
    #expect(failure("0,1,2,3,4")?.contains("6 fields") == true)
    #expect(failure("time,lat,lng\n")?.contains("the header must be") == true)
    #expect(failure("\n# nothing\n") == "r.csv has no requests")
  }
}

@Suite("City places")
struct CityPlacesTests {
  /// A hand-made extract: tagged nodes only.
  struct Nodes: OSMElementSource {
    let nodes: [OSMNode]
    func read(
      _ kinds: OSMElementKinds, node: (OSMNode) throws -> Void, way: (OSMWay) throws -> Void,
      relation: (OSMRelation) throws -> Void
    ) throws { for n in nodes { try node(n) } }
  }

  @Test func hotspotsAreWeightedByWhatDrawsRidersAndSnappedToAStreet() throws {
    #expect(CityPlaces.weight(of: OSMTags([("railway", "station")]))?.weight == 12)
    #expect(CityPlaces.weight(of: OSMTags([("amenity", "hospital")]))?.weight == 10)
    #expect(CityPlaces.weight(of: OSMTags([("shop", "bakery")]))?.weight == 0.5)
    #expect(CityPlaces.weight(of: OSMTags([("amenity", "bench")])) == nil)
    #expect(CityPlaces.weight(of: OSMTags([("highway", "traffic_signals")])) == nil)
    // In an extract of roads alone, what lies on them.
    #expect(CityPlaces.weight(of: OSMTags([("public_transport", "stop_position")]))?.weight == 1)
    #expect(CityPlaces.weight(of: OSMTags([("highway", "crossing")]))?.weight == 0.2)

    let street = LatLng(latitude: 43.7300, longitude: 7.4200)
    let streets = CityPlaces(points: [street, LatLng(latitude: 43.7400, longitude: 7.4300)])
    let found = try streets.hotspots(
      in: Nodes(nodes: [
        // 100 m from the first street point: snapped to it.
        OSMNode(id: 1, latitude: 43.7309, longitude: 7.4200, tags: OSMTags([("railway", "station")])),
        // Far from every street: no place a car stops.
        OSMNode(id: 2, latitude: 43.7600, longitude: 7.4600, tags: OSMTags([("amenity", "hospital")])),
        OSMNode(id: 3, latitude: 43.7301, longitude: 7.4201, tags: OSMTags([("name", "untagged for riders")])),
      ]))
    #expect(found.count == 1)
    #expect(found.first?.point == street)
    #expect(found.first?.kind == "station")
  }

  /// Every place is a junction a car from elsewhere drives to: none on a road cut off at the
  /// extract's border, where a route ends at the nearest road routes reach instead (as OSRM's
  /// do; Monaco's Route de la Revere, 323 m away).
  @Test func everyPlaceIsWhereARouteFromAnotherEnds() async throws {
    let routing = try await sharedRoutingEngine(graph: try await monacoGraph())
    let places = CityPlaces(routing: routing)
    #expect(places.points.count > 100)
    for place in places.points {
      let route = try routing.route([places.points[0], place])
      let end = try #require(route.waypoints.last)
      #expect(end.distance < 5, "a route to \(place) ends \(end.distance) m from it")
    }
  }

  @Test func tripsFitTheCityAndStartAtItsPlaces() async throws {
    let places = try CityPlaces.load(
      routing: try await sharedRoutingEngine(graph: try await monacoGraph()), osmPath: monacoOSM)
    #expect(places.hotspots.count > 50, "Monaco's stations, shops and hotels")
    // Trips fit the city: an eighth of its extent, at most 4 km (a town's are short).
    let town = CityPlaces(points: [LatLng(latitude: 0, longitude: 0), LatLng(latitude: 0.0254, longitude: 0.0254)])
    #expect(abs(town.medianTripMetres - 500) < 5)
    #expect(town.tripMetres.lowerBound < 450)
    let metro = CityPlaces(points: [LatLng(latitude: 0, longitude: 0), LatLng(latitude: 0.4, longitude: 0.4)])
    #expect(metro.medianTripMetres == 4000)
    #expect(metro.tripMetres == 800...25_000)
    var demand = PoissonDemand(perMinute: 60, profile: .flat, startOfDay: 0, places: places, seed: 9)
    let streets = Set(places.points.map { "\($0.latitude),\($0.longitude)" })
    var lengths: [Double] = []
    for _ in 0..<300 {
      let next = demand.next()
      let request = try #require(next)
      #expect(streets.contains("\(request.pickup.latitude),\(request.pickup.longitude)"))
      #expect((1...4).contains(request.passengers))
      lengths.append(request.pickup.distance(to: request.dropoff))
    }
    lengths.sort()
    #expect(
      lengths[150] > places.medianTripMetres * 0.6 && lengths[150] < places.medianTripMetres * 1.6, "\(lengths[150])")
  }
}

@Suite("Latency histogram")
struct LatencyHistogramTests {
  @Test func percentilesWithinTheBucketWidth() {
    var histogram = LatencyHistogram()
    for i in 1...1000 { histogram.record(Double(i) / 1000) }
    #expect(abs(histogram.percentile(0.5) - 0.5) < 0.5 * 0.05)
    #expect(abs(histogram.percentile(0.99) - 0.99) < 0.99 * 0.05)
    #expect(abs(histogram.mean - 0.5005) < 1e-9)
    #expect(LatencyHistogram().percentile(0.5) == 0)
  }
}

/// `fleet simulate`'s engine against a real fleetd with its dispatcher on Monaco: drivers on the
/// report stream and riders replayed through the booking API; every ride is picked up and
/// completed, by a driver that learnt of it from its reports' answers alone; riders' apps follow
/// each ride over WatchTrip until it ends, receiving the drivers' reports.
@Suite("City simulation end to end")
struct CitySimulationEndToEndTests {
  @Test(.timeLimit(.minutes(5))) func replayedRidesAreAllDrivenToTheirEnd() async throws {
    var dispatch = DispatchConfiguration()
    dispatch.interval = .milliseconds(500)
    let routing = try await sharedRoutingEngine(graph: try await monacoGraph())
    try await Fleetd.with(graph: try await monacoGraph(), dispatch: dispatch) { fleetd in
      let places = CityPlaces(routing: routing)
      let csv = """
        time,pickup_lat,pickup_lng,dropoff_lat,dropoff_lng,passengers
        0,43.7384,7.4246,43.7396,7.4275,1
        1,43.7330,7.4250,43.7360,7.4230,2
        2,43.7389,7.4224,43.7360,7.4389,1
        3,43.7295,7.4284,43.7442,7.4441,1
        """
      var fleet = SimulatedFleet.Configuration(provider: "acme", vehicles: 6)
      fleet.reportInterval = .milliseconds(500)
      fleet.speedup = 20
      var configuration = CitySimulation.Configuration(
        fleet: fleet, riders: SimulatedRiders.Configuration(provider: "acme", prefix: "replayed"))
      configuration.printEvery = .seconds(1)
      configuration.watchers.perRide = 2
      configuration.watchers.streamsPerConnection = 3  // eight streams: a third connection is opened
      let lines = Lines()
      let simulation = try CitySimulation(
        configuration: configuration, routing: routing, places: places,
        demand: .replay(try ReplayDemand(csv: csv, source: "test")), key: try await fleetd.key(role: .server),
        print: { lines.append($0) })
      let summary = try await withThrowingTaskGroup(of: CitySimulation.Summary?.self) { group in
        group.addTask { try await simulation.run(endpoint: FleetEndpoint(host: "127.0.0.1", port: fleetd.grpcPort)) }
        group.addTask {
          try await eventually("every replayed ride completed", timeout: .seconds(180)) {
            var done = 0
            for n in 1...4 where (try? await fleetd.trip("replayed-\(n)").tripStatus) == .complete { done += 1 }
            // A finished trip's last state ends its watchers' streams.
            return done == 4 && simulation.stats.watching.load(ordering: .relaxed) == 0
          }
          return nil
        }
        // Once the rides are done, the simulation is stopped and hands in its summary.
        _ = try await group.next()
        group.cancelAll()
        return try await group.next() ?? nil
      }
      let figures = try #require(summary)
      #expect(figures.vehicles == 6)
      #expect(figures.vehiclesOnline == 6)
      #expect(figures.ridesRequested == 4)
      #expect(figures.ridesBooked == 4)
      #expect(figures.ridesAssigned == 4)
      #expect(figures.ridesPickedUp == 4)
      #expect(figures.ridesCompleted >= 3, "the fourth may complete just as the run stops")
      #expect(figures.reportsFailed == 0)
      #expect(figures.kilometresDriven > 1)
      #expect(figures.meanWaitSeconds > 0)
      #expect(figures.watchersOpened == 8)
      #expect(figures.watchFailures.isEmpty, "\(figures.watchFailures)")
      #expect(figures.pushP99Milliseconds > 0, "no watcher received a driver's report")
      #expect(lines.all.contains { $0.contains("watching") && $0.contains("push p50") }, "\(lines.all)")
      #expect(lines.all.contains { $0.contains("6 vehicles ready") })
      #expect(lines.all.contains { $0.contains("reports") && $0.contains("simulator") }, "\(lines.all)")
      // Each vehicle is online at its last report's position, and no ride waits.
      for n in 1...4 { #expect(try await fleetd.trip("replayed-\(n)").tripStatus == .complete) }
    }
  }
}

final class Lines: Sendable {
  let kept = Mutex<[String]>([])
  func append(_ line: String) { kept.withLock { $0.append(line) } }
  var all: [String] { kept.withLock { $0 } }
}
