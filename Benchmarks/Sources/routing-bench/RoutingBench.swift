import ArgumentParser
import FleetCore
import FleetRouting
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Replays OSRM-style route queries against FleetKit's routing engine and against an OSRM server
/// on the same data, and reports how often they agree and how fast each answers.
@main
struct RoutingBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "routing-bench", abstract: "FleetKit routing against OSRM on the same OSM extract.")

  @Option(help: "OSM PBF extract.")
  var osm: String
  @Option(help: "File of OSRM route URLs, one per line (only the coordinates are used).")
  var requests: String
  @Option(help: "Base URL of an osrm-routed serving the same extract.")
  var osrm = "http://127.0.0.1:5000"
  @Option(help: "Print the queries that disagree most (count).")
  var worst = 10

  func run() async throws {
    let queries = try Self.queries(requests)
    let started = ContinuousClock.now
    let engine = try RoutingEngine(osm: osm)
    print("FleetKit: extracted and prepared \(osm) in \(ContinuousClock.now - started)")

    var rows: [(index: Int, ours: Route?, theirs: (distance: Double, duration: Double)?)] = []
    for (i, query) in queries.enumerated() {
      var ours: Route?
      do { ours = try engine.route(query) } catch { if i < 400 && ProcessInfo.processInfo.environment["DEBUG_FAIL"] != nil { print("fail #\(i): \(error) \(query)") } }
      let theirs = try await Self.osrmRoute(osrm, query)
      rows.append((i, ours, theirs))
    }
    // In-process query time, all queries, three rounds (the first warms caches).
    var times: [Duration] = []
    for _ in 0..<3 {
      times = []
      for query in queries {
        let t0 = ContinuousClock.now
        _ = try? engine.route(query)
        times.append(ContinuousClock.now - t0)
      }
    }
    times.sort()
    print("FleetKit in-process route: median \(times[times.count / 2]), p99 \(times[times.count * 99 / 100])")
    var compared = 0
    var distanceAgree = 0
    var durationAgree = 0
    var onlyOurs = 0
    var onlyTheirs = 0
    var disagreements: [(Double, String)] = []
    for row in rows {
      switch (row.ours, row.theirs) {
      case (let ours?, let theirs?):
        compared += 1
        let dd = abs(ours.distance - theirs.distance) / max(theirs.distance, 1)
        let td = abs(ours.duration - theirs.duration) / max(theirs.duration, 1)
        if dd <= 0.02 { distanceAgree += 1 }
        if td <= 0.10 { durationAgree += 1 }
        disagreements.append(
          (dd, String(format: "#%d distance %.0f vs %.0f m, duration %.0f vs %.0f s  %@", row.index, ours.distance,
                      theirs.distance, ours.duration, theirs.duration, "\(queries[row.index])")))
      case (.some, nil): onlyOurs += 1
      case (nil, .some): onlyTheirs += 1
      case (nil, nil): break
      }
    }
    let pct = { (n: Int) in String(format: "%.1f%%", 100 * Double(n) / Double(max(compared, 1))) }
    print("queries: \(queries.count), both answered: \(compared), only FleetKit: \(onlyOurs), only OSRM: \(onlyTheirs)")
    print("distance within 2% of OSRM: \(distanceAgree) (\(pct(distanceAgree)))")
    print("duration within 10% of OSRM: \(durationAgree) (\(pct(durationAgree)))")
    for (_, line) in disagreements.sorted(by: { $0.0 > $1.0 }).prefix(worst) { print("  " + line) }
    if ProcessInfo.processInfo.environment["SHOW_FIRST"] != nil { for (_, line) in disagreements.prefix(12) { print("  first: " + line) } }
  }

  static func queries(_ path: String) throws -> [[LatLng]] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
      guard let start = line.range(of: "/driving/")?.upperBound else { return nil }
      let coordinates = line[start...].prefix { $0 != "?" && $0 != "\"" }
      return coordinates.split(separator: ";").compactMap { pair in
        let parts = pair.split(separator: ",").compactMap { Double($0) }
        return parts.count == 2 ? LatLng(latitude: parts[1], longitude: parts[0]) : nil
      }
    }
  }

  static func osrmRoute(_ base: String, _ query: [LatLng]) async throws -> (distance: Double, duration: Double)? {
    let coordinates = query.map { "\($0.longitude),\($0.latitude)" }.joined(separator: ";")
    let url = URL(string: "\(base)/route/v1/driving/\(coordinates)?overview=false&steps=false")!
    let (data, _) = try await URLSession.shared.data(from: url)
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], object["code"] as? String == "Ok",
      let route = (object["routes"] as? [[String: Any]])?.first,
      let distance = route["distance"] as? Double, let duration = route["duration"] as? Double
    else { return nil }
    return (distance, duration)
  }
}
