import ArgumentParser
import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import Foundation

/// Does learned traffic make ETAs better? A simulated congested scenario on Monaco's roads:
/// every road within `radius` of the casino moves at `congestion` of its free-flow speed. A
/// fleet drives real route queries through it, reporting every 5 s; the first vehicles only
/// teach the traffic model, the later ones are measured: at each report, the ETA to their
/// destination from the engine with learned traffic and from a free-flow engine, against when
/// the simulated car really arrives.
@main
struct ProgressBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "progress-bench", abstract: "ETA accuracy with learned traffic against free flow.")

  @Option(help: "OpenStreetMap extract.") var osm: String
  @Option(help: "Route queries (OSRM URLs), e.g. monaco.requests.") var requests: String
  @Option(help: "Congested area centre, lat,lng (default: the casino).") var centre = "43.7395,7.4280"
  @Option(help: "Congested area radius, metres.") var radius = 500.0
  @Option(help: "Share of free-flow speed inside the area.") var congestion = 0.3
  @Option(help: "Vehicles that only teach the model before measuring starts.") var teachers = 150
  @Option(help: "Vehicles measured.") var measured = 150
  @Option(help: "Seconds between a vehicle's reports.") var interval = 5.0

  func run() throws {
    let routing = try RoutingEngine(osm: osm)
    let parts = centre.split(separator: ",").compactMap { Double($0) }
    let centrePoint = LatLng(latitude: parts[0], longitude: parts[1])
    let slowed = { (span: RouteSpan, leg: RouteLeg) -> Bool in
      leg.geometry[span.firstPoint].distance(to: centrePoint) < radius
    }
    // Routes through the congested area, each driven once.
    var drives: [(route: Route, drive: SimulatedDrive)] = []
    for line in try String(contentsOfFile: requests, encoding: .utf8).split(separator: "\n") {
      guard drives.count < teachers + measured,
        let coordinates = line.split(separator: "/").last?.split(separator: "?").first
      else { continue }
      let points = coordinates.split(separator: ";").map { pair -> LatLng in
        let v = pair.split(separator: ",").compactMap { Double($0) }
        return LatLng(latitude: v[1], longitude: v[0])
      }
      guard let route = try? routing.route(points), route.duration > 60 else { continue }
      let drive = SimulatedDrive(route: route) { span, leg in slowed(span, leg) ? congestion : 1 }
      guard drive.duration > route.duration * 1.2 else { continue }
      drives.append((route, drive))
    }
    print(
      "\(drives.count) drives through the area (\(Int(radius)) m around \(centre), \(Int(congestion * 100)) % of free-flow speed)"
    )

    let learned = ProgressEngine(routing: routing)
    var freeFlowConfiguration = ProgressEngine.Configuration()
    freeFlowConfiguration.learnsTraffic = false
    let freeFlow = ProgressEngine(routing: routing, configuration: freeFlowConfiguration)
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    // Teachers set off 4 s apart; measured vehicles start once the teachers have been driving.
    let starts = drives.indices.map { i in
      i < teachers ? Double(i) * 4 : Double(teachers) * 4 + Double(i - teachers) * 4
    }
    var errors: [(learned: Double, freeFlow: Double)] = []
    var firstErrors: [(learned: Double, freeFlow: Double)] = []
    var departed = Set<Int>()
    let end = zip(starts, drives).map { $0 + $1.drive.duration }.max() ?? 0
    var t = 0.0
    while t <= end + interval {
      for (i, (route, drive)) in drives.enumerated() where t >= starts[i] && t - starts[i] <= drive.duration + interval
      {
        let elapsed = min(t - starts[i], drive.duration)
        let now = t0.addingTimeInterval(t)
        let name = ResourceName(provider: "bench", kind: .vehicles, id: "v\(i)")
        var vehicle = Vehicle(provider: "bench", id: "v\(i)")
        let destination = route.waypoints.last!.location
        vehicle.waypoints = [
          TripWaypoint(location: TerminalLocation(point: destination), tripID: "t\(i)", waypointType: .dropOff)
        ]
        var fix = VehicleLocation(location: drive.position(after: elapsed))
        fix.updateTime = now
        var etas: [Date] = []
        for engine in [learned, freeFlow] {
          vehicle.lastLocation = engine.locate(name, fixes: [fix]).last
          etas.append(engine.progress(of: vehicle, now: now)?.legs.first?.eta ?? now)
        }
        let actual = drive.duration - elapsed
        if i >= teachers, actual >= 30 {
          let error = (
            abs(etas[0].timeIntervalSince(now) - actual) / actual, abs(etas[1].timeIntervalSince(now) - actual) / actual
          )
          errors.append(error)
          if departed.insert(i).inserted { firstErrors.append(error) }
        }
      }
      t += interval
    }
    func summary(_ values: [Double]) -> String {
      let sorted = values.sorted()
      guard !sorted.isEmpty else { return "-" }
      let mean = sorted.reduce(0, +) / Double(sorted.count)
      return String(
        format: "mean %.1f %%, median %.1f %%, p90 %.1f %%", mean * 100, sorted[sorted.count / 2] * 100,
        sorted[sorted.count * 9 / 10] * 100)
    }
    print(
      "ETA error against the simulated arrival, \(errors.count) reports of \(drives.count - teachers) measured vehicles:"
    )
    print("  learned traffic: \(summary(errors.map(\.learned)))")
    print("  free flow:       \(summary(errors.map(\.freeFlow)))")
    print("at departure (\(firstErrors.count) trips):")
    print("  learned traffic: \(summary(firstErrors.map(\.learned)))")
    print("  free flow:       \(summary(firstErrors.map(\.freeFlow)))")
    print("roads with a learned speed: \(learned.traffic.learnedRoads)")
  }
}
