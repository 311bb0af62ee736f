import ArgumentParser
import FleetGeometry
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
  var requests = "data/monaco.requests"
  @Option(help: "Base URL of an osrm-routed serving the same extract.")
  var osrm = "http://127.0.0.1:5000"
  @Option(help: "Base URL of a fleetd started with --graph on the same extract (HTTP latency and /table).")
  var fleetkit: String?
  @Option(help: "Print the queries that disagree most (count).")
  var worst = 10
  @Option(help: "Only write every turn and its cost to this file (lon,lat of from, via, to; seconds), then stop.")
  var turnsOut: String?

  func run() async throws {
    let started = ContinuousClock.now
    let engine = try RoutingEngine(osm: osm)
    print("FleetKit: extracted and prepared \(osm) in \(ContinuousClock.now - started)")
    if let turnsOut {
      let lines = engine.turnTable().map { turn in
        [turn.from, turn.via, turn.to].map { "\($0.longitudeE6),\($0.latitudeE6)" }.joined(separator: " ")
          + " \(turn.seconds)"
      }
      try (lines.joined(separator: "\n") + "\n").write(toFile: turnsOut, atomically: true, encoding: .utf8)
      print("wrote \(lines.count) turns to \(turnsOut)")
      return
    }
    let queries = try Self.queries(requests)

    var rows: [(index: Int, ours: Route?, theirs: (distance: Double, duration: Double)?)] = []
    for (i, query) in queries.enumerated() {
      let ours = try? engine.route(query)
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
          (
            dd,
            String(
              format: "#%d distance %.0f vs %.0f m, duration %.0f vs %.0f s  %@", row.index, ours.distance,
              theirs.distance, ours.duration, theirs.duration, "\(queries[row.index])")
          ))
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
    try await Self.matrixTimes(engine, queries)
    try await Self.matching(engine, queries, fleetkit: fleetkit, osrm: osrm)
    if let fleetkit { try await Self.httpComparison(queries, fleetkit: fleetkit, osrm: osrm) }
  }

  /// Map matching: noisy traces (a point every 25 m, up to 8 m off) along the first 50 routes,
  /// at most 100 points each (OSRM's default limit), matched in process and over HTTP by both.
  static func matching(_ engine: RoutingEngine, _ queries: [[LatLng]], fleetkit: String?, osrm: String) async throws {
    var random: UInt64 = 42
    func noise() -> Double {
      random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(random >> 11) / Double(1 << 53) * 2 - 1
    }
    var traces: [[LatLng]] = []
    for query in queries.prefix(50) {
      guard let route = try? engine.route(query) else { continue }
      var trace: [LatLng] = []
      var carried = 0.0
      for (a, b) in zip(route.geometry, route.geometry.dropFirst()) {
        let dy = (b.latitude - a.latitude) * 111_195
        let dx = (b.longitude - a.longitude) * 111_195 * cos(a.latitude * .pi / 180)
        let length = (dx * dx + dy * dy).squareRoot()
        var at = carried
        while at < length, trace.count < 100 {
          let t = at / length
          trace.append(
            LatLng(
              latitude: a.latitude + (b.latitude - a.latitude) * t + noise() * 8 / 111_195,
              longitude: a.longitude + (b.longitude - a.longitude) * t + noise() * 8 / 111_195
                / cos(a.latitude * .pi / 180)))
          at += 25
        }
        carried = at - length
      }
      if trace.count >= 2 { traces.append(trace) }
    }
    let points = traces.reduce(0) { $0 + $1.count }
    let t0 = ContinuousClock.now
    for trace in traces { _ = try? engine.match(trace) }
    let inProcess = ContinuousClock.now - t0
    let seconds = { (d: Duration) in Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    print(
      String(
        format: "map matching: %d traces, %d points; FleetKit in-process %.0f points/s", traces.count, points,
        Double(points) / seconds(inProcess)))
    /// One trace's /match from `base`: milliseconds from asking to the whole answer.
    func matchOverHTTP(_ base: String, _ trace: [LatLng]) async throws -> Double {
      let coordinates = trace.map { "\($0.longitude),\($0.latitude)" }.joined(separator: ";")
      let radiuses = Array(repeating: "10", count: trace.count).joined(separator: ";")
      let start = ContinuousClock.now
      _ = try await URLSession.shared.data(
        from: URL(string: "\(base)/match/v1/driving/\(coordinates)?overview=full&radiuses=\(radiuses)")!)
      return seconds(ContinuousClock.now - start) * 1000
    }
    func percentile(_ sorted: [Double], _ p: Double) -> Double {
      sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }
    guard let first = traces.first else { return }
    guard let fleetkit else {
      var latencies: [Double] = []
      for trace in traces { latencies.append(try await matchOverHTTP(osrm, trace)) }
      print(String(format: "HTTP /match: OSRM %.0f points/s", Double(points) / (latencies.reduce(0, +) / 1000)))
      return
    }
    // One untimed request to each first (the client's own setup and each server's first
    // connection), then every trace to both servers in turn, which first alternating, in three
    // rounds: of at most 50 traces a single round's p99 is its slowest answer, which one stall of
    // the machine decides.
    _ = try await matchOverHTTP(fleetkit, first)
    _ = try await matchOverHTTP(osrm, first)
    var ours: [Double] = []
    var theirs: [Double] = []
    for round in 0..<3 {
      for (i, trace) in traces.enumerated() {
        if (i + round) % 2 == 0 {
          ours.append(try await matchOverHTTP(fleetkit, trace))
          theirs.append(try await matchOverHTTP(osrm, trace))
        } else {
          theirs.append(try await matchOverHTTP(osrm, trace))
          ours.append(try await matchOverHTTP(fleetkit, trace))
        }
      }
    }
    // Points per second: every round's points over the time spent waiting for that server.
    let throughput = { (latencies: [Double]) in Double(3 * points) / (latencies.reduce(0, +) / 1000) }
    ours.sort()
    theirs.sort()
    print(
      String(
        format: "HTTP /match: FleetKit %.0f points/s, OSRM %.0f points/s (ratio %.2fx)", throughput(ours),
        throughput(theirs), throughput(ours) / throughput(theirs)))
    let (m, mo) = (percentile(ours, 0.5), percentile(theirs, 0.5))
    let (p, po) = (percentile(ours, 0.99), percentile(theirs, 0.99))
    print(
      String(
        format: "HTTP /match per trace (%d requests each): FleetKit median %.1f ms, p99 %.1f ms; OSRM median %.1f ms, "
          + "p99 %.1f ms; ratio median %.2fx, p99 %.2fx", ours.count, m, p, mo, po, m / mo, p / po))
  }

  /// 100×100 matrix over the queries' first 100 start points, in process (median of 5 runs).
  static func matrixTimes(_ engine: RoutingEngine, _ queries: [[LatLng]]) async throws {
    let points = Array(queries.prefix(100).map { $0[0] })
    var times: [Duration] = []
    for _ in 0..<5 {
      let t0 = ContinuousClock.now
      _ = try engine.matrix(sources: points, destinations: points)
      times.append(ContinuousClock.now - t0)
    }
    print("FleetKit in-process 100x100 matrix: median \(times.sorted()[2])")
  }

  /// The same client (URLSession, one request at a time) against both servers: /route for every
  /// query, then /table with 100 coordinates.
  static func httpComparison(_ queries: [[LatLng]], fleetkit: String, osrm: String) async throws {
    func path(_ points: [LatLng]) -> String { points.map { "\($0.longitude),\($0.latitude)" }.joined(separator: ";") }
    /// Each request timed alone; `closing` asks the server to close the connection after it, so
    /// that every request opens a new one (as clients without a connection pool do: urllib, curl).
    func timeAll(_ base: String, _ suffix: String, _ paths: [String], closing: Bool = false) async throws -> [Double] {
      var times: [Double] = []
      for p in paths {
        var request = URLRequest(url: URL(string: "\(base)\(p)\(suffix)")!)
        if closing { request.setValue("close", forHTTPHeaderField: "Connection") }
        let t0 = ContinuousClock.now
        let (_, response) = try await URLSession.shared.data(for: request)
        let elapsed = ContinuousClock.now - t0
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { continue }
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
      }
      return times.sorted()
    }
    let routes = queries.map { "/route/v1/driving/" + path($0) }
    // Warm both, then measure alternately in two rounds to even out the machine's noise.
    _ = try await timeAll(fleetkit, "?overview=false", Array(routes.prefix(100)))
    _ = try await timeAll(osrm, "?overview=false", Array(routes.prefix(100)))
    var ours: [Double] = []
    var theirs: [Double] = []
    for round in 0..<2 {
      let half = round == 0 ? Array(routes.prefix(500)) : Array(routes.suffix(500))
      ours += try await timeAll(fleetkit, "?overview=full", half)
      theirs += try await timeAll(osrm, "?overview=full", half)
    }
    ours.sort()
    theirs.sort()
    let median = { (t: [Double]) in t[t.count / 2] }
    let p99 = { (t: [Double]) in t[t.count * 99 / 100] }
    print(
      String(
        format:
          "HTTP /route (%d queries, overview=full): FleetKit median %.3f ms, p99 %.3f ms; OSRM median %.3f ms, p99 %.3f ms; ratio median %.2fx, p99 %.2fx",
        ours.count, median(ours), p99(ours), median(theirs), p99(theirs), median(ours) / median(theirs),
        p99(ours) / p99(theirs)))
    // A new connection for every request: the server's cost of accepting and closing one counts.
    // The first 300 queries three times over, 50 to one server then the same 50 to the other, so
    // that a drift of the machine's speed hits both; three passes, so that the p99 is not decided
    // by the few requests one stall of the machine holds (as with the lean client below).
    var oursFresh: [Double] = []
    var theirsFresh: [Double] = []
    for round in 0..<18 where round % 6 * 50 < routes.count {
      let start = round % 6 * 50
      let part = Array(routes[start..<min(routes.count, start + 50)])
      oursFresh += try await timeAll(fleetkit, "?overview=full", part, closing: true)
      theirsFresh += try await timeAll(osrm, "?overview=full", part, closing: true)
    }
    oursFresh.sort()
    theirsFresh.sort()
    print(
      String(
        format:
          "HTTP /route, a new connection each (%d requests): FleetKit median %.3f ms, p99 %.3f ms; OSRM median %.3f ms, p99 %.3f ms; ratio median %.2fx, p99 %.2fx",
        oursFresh.count, median(oursFresh), p99(oursFresh), median(theirsFresh), p99(theirsFresh),
        median(oursFresh) / median(theirsFresh), p99(oursFresh) / p99(theirsFresh)))
    // The lean client, each query to both servers in turn (which first alternating), on a
    // kept connection and on a new connection each, over the first 500 queries three times: a
    // stall of this machine holds a few consecutive requests of either server, and in one pass
    // those few are the p99.
    var fleetkitClient = LeanClient(base: fleetkit)
    var osrmClient = LeanClient(base: osrm)
    for newConnection in [false, true] {
      var leanOurs: [Double] = []
      var leanTheirs: [Double] = []
      for pass in 0..<3 {
        for (i, route) in routes.prefix(500).enumerated() {
          let p = route + "?overview=full"
          if (i + pass) % 2 == 0 {
            if let t = try fleetkitClient.get(p, newConnection: newConnection) { leanOurs.append(t) }
            if let t = try osrmClient.get(p, newConnection: newConnection) { leanTheirs.append(t) }
          } else {
            if let t = try osrmClient.get(p, newConnection: newConnection) { leanTheirs.append(t) }
            if let t = try fleetkitClient.get(p, newConnection: newConnection) { leanOurs.append(t) }
          }
        }
      }
      leanOurs.sort()
      leanTheirs.sort()
      let label = newConnection ? "a new connection each" : "kept connection"
      print(
        "HTTP /route, lean client, \(label) "
          + String(
            format:
              "(%d requests): FleetKit median %.3f ms, p99 %.3f ms; OSRM median %.3f ms, p99 %.3f ms; ratio median %.2fx, p99 %.2fx",
            leanOurs.count, median(leanOurs), p99(leanOurs), median(leanTheirs), p99(leanTheirs),
            median(leanOurs) / median(leanTheirs), p99(leanOurs) / p99(leanTheirs)))
    }
    // 40 tables of 100 points each, drawn from every query's points in a different order, to both
    // servers: a median and a tail (the p99 of 40 is the slowest).
    let points = queries.flatMap { $0 }
    let tables = (0..<40).map { k in
      "/table/v1/driving/" + path((0..<100).map { points[(k * 37 + $0 * (2 * k + 1)) % points.count] })
    }
    let ourTable = try await timeAll(fleetkit, "", tables)
    let theirTable = try await timeAll(osrm, "", tables)
    print(
      String(
        format:
          "HTTP /table 100x100 (%d tables): FleetKit median %.1f ms, p99 %.1f ms; OSRM median %.1f ms, p99 %.1f ms; ratio median %.2fx, p99 %.2fx",
        ourTable.count, median(ourTable), p99(ourTable), median(theirTable), p99(theirTable),
        median(ourTable) / median(theirTable), p99(ourTable) / p99(theirTable)))
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
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      object["code"] as? String == "Ok",
      let route = (object["routes"] as? [[String: Any]])?.first,
      let distance = route["distance"] as? Double, let duration = route["duration"] as? Double
    else { return nil }
    return (distance, duration)
  }
}
