import ArgumentParser
import BenchSupport
import FleetGeometry
import FleetRouting
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// FleetKit against OSRM on one extract, both over HTTP on loopback, on seeded point pairs:
/// half uniform in the extract's area, half taken on drivable roads and moved up to 30 m off
/// them (where people stand), plus any real queries given. Prints one Markdown row of the
/// agreement table, and the worst pairs to explain with `routing-diff`. Where both engines
/// drive the same route (distance within 2 %), their turn-by-turn steps (`steps=true`) are
/// compared by maneuver type and road name.
@main
struct RoutingAgreement: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "routing-agreement", abstract: "FleetKit's routes against OSRM's on one extract.")

  @Option(help: "The extract's name in the table.") var name: String
  @Option(help: "OSM PBF extract both servers serve.") var osm: String
  @Option(help: "Base URL of osrm-routed on the extract.") var osrm: String
  @Option(help: "Base URL of fleetd serving the extract's graph.") var fleetkit: String
  @Option(help: "Point pairs to draw.") var pairs = 300
  @Option var seed: UInt64 = 1
  @Option(help: "Also these queries (OSRM route URLs, one per line).") var requests: String?
  @Option(help: "Print this many of the pairs that disagree most.") var worst = 5
  @Option(help: "Print this many routes whose maneuvers differ.") var stepsShown = 0
  @Option(help: "Print the this many most frequent first differences between maneuver sequences.")
  var maneuverDiffs = 0
  @Option(help: "Print this many intersections where the two engines' lanes differ.") var laneDiffs = 0
  @Option(help: "Print this many of the slowest answers of each engine, with their place in the run.")
  var slowest = 0
  @Flag(help: "Print the table's header first.") var header = false

  func run() async throws {
    var random = Seeded(seed ^ UInt64(truncatingIfNeeded: name.hashValueStable))
    let roads = try RoadSample(osm: osm)
    var queries: [(LatLng, LatLng)] = []
    for i in 0..<pairs {
      queries.append(
        i % 2 == 0
          ? (roads.uniform(&random), roads.uniform(&random)) : (roads.nearRoad(&random), roads.nearRoad(&random)))
    }
    if let requests { queries += try Self.queries(requests) }

    // The client's own first request (URLSession setting itself up) is timed for neither.
    if let (from, to) = queries.first {
      _ = try await Self.route(fleetkit, from, to)
      _ = try await Self.route(osrm, from, to)
    }
    var results: [Comparison] = []
    for (from, to) in queries {
      // Alternately first, so that neither gains from the other's warm caches.
      let flip = results.count % 2 == 1
      let a = try await Self.route(flip ? osrm : fleetkit, from, to)
      let b = try await Self.route(flip ? fleetkit : osrm, from, to)
      results.append(Comparison(from: from, to: to, ours: flip ? b : a, theirs: flip ? a : b))
    }
    // Steps, where both drive the same route: a step sequence differs only by its guidance.
    for i in results.indices where results[i].ours.ok && results[i].theirs.ok && results[i].distanceAgrees {
      let (from, to) = (results[i].from, results[i].to)
      results[i].steps = (try await Self.steps(fleetkit, from, to), try await Self.steps(osrm, from, to))
    }
    let summary = Summary(results)
    if header { print(Summary.header) }
    print(summary.row(name: name))
    // The pairs both answer but differently, worst first; then those only one answers.
    for c in results.filter({ $0.disagrees && $0.ours.ok && $0.theirs.ok }).sorted(by: { $0.badness > $1.badness })
      .prefix(worst)
    {
      print("  \(name) differs: \(c.describe)")
    }
    for c in results.filter({ $0.ours.ok != $0.theirs.ok }).prefix(worst) { print("  \(name) one only: \(c.describe)") }
    for (engine, latency) in [("FleetKit", { (c: Comparison) in c.ours.latency }), ("OSRM", { $0.theirs.latency })] {
      for (i, c) in results.enumerated().sorted(by: { latency($0.1) > latency($1.1) }).prefix(slowest) {
        print(
          "  \(name) slow, \(engine): #\(i) \(latency(c)) (the other \(engine == "OSRM" ? c.ours.latency : c.theirs.latency)) \(c.describe)"
        )
      }
    }
    let differing = results.filter { c in c.steps.map { $0.ours.map(\.maneuver) != $0.theirs.map(\.maneuver) } ?? false
    }
    if maneuverDiffs > 0 {
      // Where each differing sequence first parts: FleetKit's maneuver against OSRM's there.
      var firsts: [String: Int] = [:]
      var places: [String: String] = [:]
      for c in differing {
        let (ours, theirs) = (c.steps!.ours, c.steps!.theirs)
        let i =
          zip(ours, theirs).enumerated().first { $0.element.0.maneuver != $0.element.1.maneuver }?.offset
          ?? min(ours.count, theirs.count)
        let mine = i < ours.count ? ours[i].maneuver : "(none)"
        let osrm = i < theirs.count ? theirs[i].maneuver : "(none)"
        let key = "FleetKit \(mine) / OSRM \(osrm)"
        firsts[key, default: 0] += 1
        // Where OSRM's step begins, the first time: a place to look.
        if places[key] == nil, i < theirs.count, let place = theirs[i].intersections.first {
          places[key] = String(
            format: "%@ on %.6f,%.6f;%.6f,%.6f", place, c.from.longitude, c.from.latitude, c.to.longitude,
            c.to.latitude)
        }
      }
      for (key, count) in firsts.sorted(by: { $0.value > $1.value }).prefix(maneuverDiffs) {
        print("  \(name) first difference ×\(count): \(key)" + (places[key].map { " (as at \($0))" } ?? ""))
      }
    }
    if laneDiffs > 0 {
      var shown = Set<String>()
      for c in results {
        guard let steps = c.steps else { continue }
        let ours = Dictionary(steps.ours.flatMap(\.lanes).map { ($0.prefix { $0 != "=" }, $0) }) { a, _ in a }
        let theirs = Dictionary(steps.theirs.flatMap(\.lanes).map { ($0.prefix { $0 != "=" }, $0) }) { a, _ in a }
        for location in Set(ours.keys).union(theirs.keys).sorted() where ours[location] != theirs[location] {
          guard shown.count < laneDiffs, shown.insert(String(location)).inserted else { continue }
          print(
            String(
              format: "  %@ lanes differ (route %.6f,%.6f;%.6f,%.6f): ", name, c.from.longitude, c.from.latitude,
              c.to.longitude, c.to.latitude) + "FleetKit \(ours[location] ?? "-") / OSRM \(theirs[location] ?? "-")")
        }
      }
    }
    for c in differing.prefix(stepsShown) {
      print(
        String(
          format: "  %@ steps differ: %.6f,%.6f → %.6f,%.6f", name, c.from.latitude, c.from.longitude, c.to.latitude,
          c.to.longitude))
      print("    FleetKit: \(c.steps!.ours.map(\.description).joined(separator: " | "))")
      print("    OSRM:     \(c.steps!.theirs.map(\.description).joined(separator: " | "))")
    }
  }

  /// One engine's steps for a route, each as `type[ modifier]: name`.
  static func steps(_ base: String, _ from: LatLng, _ to: LatLng) async throws -> [Step] {
    let coordinates = String(format: "%.6f,%.6f;%.6f,%.6f", from.longitude, from.latitude, to.longitude, to.latitude)
    let url = URL(string: "\(base)/route/v1/driving/\(coordinates)?overview=false&steps=true")!
    let (data, _) = try await URLSession.shared.data(from: url)
    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    let legs = (json["routes"] as? [[String: Any]])?.first?["legs"] as? [[String: Any]] ?? []
    return legs.flatMap { leg in
      (leg["steps"] as? [[String: Any]] ?? []).map { step in
        let maneuver = step["maneuver"] as? [String: Any] ?? [:]
        // Each intersection's lanes, where it has any, keyed by where it is.
        let lanes = (step["intersections"] as? [[String: Any]] ?? []).compactMap { intersection -> String? in
          guard let lanes = intersection["lanes"] as? [[String: Any]],
            let location = intersection["location"] as? [Double], location.count == 2
          else { return nil }
          let shown = lanes.map { lane in
            ((lane["indications"] as? [String]) ?? []).joined(separator: ";")
              + ((lane["valid"] as? Bool) == true ? "*" : "")
          }
          return String(format: "%.5f,%.5f=", location[0], location[1]) + shown.joined(separator: "|")
        }
        let intersections = (step["intersections"] as? [[String: Any]] ?? []).map { intersection in
          let location = intersection["location"] as? [Double] ?? []
          return location.count == 2 ? String(format: "%.6f,%.6f", location[0], location[1]) : "?"
        }
        return Step(
          type: maneuver["type"] as? String ?? "?", modifier: maneuver["modifier"] as? String ?? "",
          name: step["name"] as? String ?? "", lanes: lanes,
          bearings: "\(maneuver["bearing_before"] as? Int ?? -1)>\(maneuver["bearing_after"] as? Int ?? -1)",
          intersections: intersections)
      }
    }
  }

  static func queries(_ path: String) throws -> [(LatLng, LatLng)] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
      guard let start = line.range(of: "/driving/")?.upperBound else { return nil }
      let points = line[start...].prefix { $0 != "?" && $0 != "\"" }.split(separator: ";").compactMap { pair in
        let v = pair.split(separator: ",").compactMap { Double($0) }
        return v.count == 2 ? LatLng(latitude: v[1], longitude: v[0]) : nil
      }
      return points.count == 2 ? (points[0], points[1]) : nil
    }
  }

  /// One engine's answer over HTTP: OSRM's JSON, whichever engine answers.
  static func route(_ base: String, _ from: LatLng, _ to: LatLng) async throws -> Answer {
    let coordinates = String(format: "%.6f,%.6f;%.6f,%.6f", from.longitude, from.latitude, to.longitude, to.latitude)
    let url = URL(string: "\(base)/route/v1/driving/\(coordinates)?overview=false")!
    let started = ContinuousClock.now
    let (data, _) = try await URLSession.shared.data(from: url)
    let elapsed = ContinuousClock.now - started
    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    let code = json["code"] as? String ?? "?"
    let route = (json["routes"] as? [[String: Any]])?.first
    let waypoints = (json["waypoints"] as? [[String: Any]] ?? []).compactMap { w -> LatLng? in
      guard let l = w["location"] as? [Double], l.count == 2 else { return nil }
      return LatLng(latitude: l[1], longitude: l[0])
    }
    return Answer(
      code: code, distance: route?["distance"] as? Double, duration: route?["duration"] as? Double,
      snapped: waypoints, latency: elapsed)
  }
}

struct Answer {
  var code: String
  var distance: Double?
  var duration: Double?
  var snapped: [LatLng]
  var latency: Duration
  var ok: Bool { code == "Ok" && distance != nil }
}

/// A route step as compared: its maneuver and the road it names.
struct Step: Equatable, CustomStringConvertible {
  var type: String
  var modifier: String
  var name: String
  /// The lanes at the step's intersections, each as `lng,lat=lane|lane…` (a valid lane starred).
  var lanes: [String] = []
  /// The maneuver's `bearing_before>bearing_after`, and where the step's intersections are.
  var bearings = ""
  var intersections: [String] = []
  /// What the comparison counts: the maneuver's type and the road's name.
  var key: String { "\(type): \(name)" }
  /// The maneuver alone, as the guidance target compares it.
  var maneuver: String { "\(type) \(modifier)" }
  var description: String { "\(type)\(modifier.isEmpty ? "" : " " + modifier): \(name)" }

  /// How many steps of `theirs` appear in `ours` in the same order (longest common subsequence
  /// by type and name).
  static func matched(_ ours: [Step], _ theirs: [Step]) -> Int {
    var row = [Int](repeating: 0, count: theirs.count + 1)
    for a in ours {
      var diagonal = 0
      for (j, b) in theirs.enumerated() {
        let above = row[j + 1]
        row[j + 1] = a.key == b.key ? diagonal + 1 : max(row[j + 1], row[j])
        diagonal = above
      }
    }
    return row[theirs.count]
  }
}

struct Comparison {
  var from: LatLng
  var to: LatLng
  var ours: Answer
  var theirs: Answer
  /// Both engines' steps, where both drive the same route.
  var steps: (ours: [Step], theirs: [Step])?

  var distanceAgrees: Bool {
    guard let a = ours.distance, let b = theirs.distance else { return false }
    return abs(a - b) <= 0.02 * max(b, 1)
  }
  var durationAgrees: Bool {
    guard let a = ours.duration, let b = theirs.duration else { return false }
    return abs(a - b) <= 0.10 * max(b, 1)
  }
  /// The start or the end snapped to places more than 10 m apart.
  var snapsDiffer: Bool {
    guard ours.snapped.count == 2, theirs.snapped.count == 2 else { return false }
    return zip(ours.snapped, theirs.snapped).contains { $0.distance(to: $1) > 10 }
  }
  var disagrees: Bool { theirs.ok && (!distanceAgrees || !durationAgrees) || (ours.ok != theirs.ok) }
  var badness: Double {
    guard let a = ours.distance, let b = theirs.distance else { return .infinity }
    return abs(a - b) / max(b, 1)
  }
  var describe: String {
    let d = { (x: Double?) in x.map { String(format: "%.0f", $0) } ?? "-" }
    return String(
      format: "%.6f,%.6f → %.6f,%.6f  FleetKit %@ %@ m %@ s, OSRM %@ %@ m %@ s%@", from.latitude, from.longitude,
      to.latitude, to.longitude, ours.code, d(ours.distance), d(ours.duration), theirs.code, d(theirs.distance),
      d(theirs.duration), snapsDiffer ? ", snapped apart" : "")
  }
}

struct Summary {
  var pairs = 0
  var osrmOk = 0
  var distance = 0
  var duration = 0
  var bothOk = 0
  var snapsDiffer = 0
  var onlyOsrm: [String: Int] = [:]
  var onlyOurs: [String: Int] = [:]
  var latencyRatio = 0.0
  var p99Ratio = 0.0
  /// Routes with steps compared; of those, the ones whose steps all match by type and name;
  /// OSRM's steps over all of them, and how many of those FleetKit gives in the same order.
  var stepRoutes = 0
  var stepRoutesMatching = 0
  /// Routes whose maneuvers all match by (type, modifier): the issue's guidance target.
  var maneuverRoutesMatching = 0
  var osrmSteps = 0
  var stepsMatched = 0
  /// Intersections OSRM gives lanes at, those FleetKit gives the same lanes at, and those only
  /// FleetKit gives lanes at.
  var osrmLanes = 0
  var lanesMatched = 0
  var lanesOnlyOurs = 0
  /// On routes with the same maneuvers: the maneuvers, those with OSRM's bearings, and the
  /// routes listing OSRM's intersections (the same places, step by step).
  var sameManeuvers = 0
  var bearingsMatched = 0
  var intersectionRoutesMatching = 0

  init(_ results: [Comparison]) {
    pairs = results.count
    for c in results {
      if c.theirs.ok {
        osrmOk += 1
        if c.distanceAgrees { distance += 1 }
        if c.durationAgrees { duration += 1 }
      }
      if c.theirs.ok && c.ours.ok {
        bothOk += 1
        if c.snapsDiffer { snapsDiffer += 1 }
      }
      if c.theirs.ok && !c.ours.ok { onlyOsrm[c.ours.code, default: 0] += 1 }
      if c.ours.ok && !c.theirs.ok { onlyOurs[c.theirs.code, default: 0] += 1 }
      if let steps = c.steps {
        stepRoutes += 1
        if steps.ours.map(\.key) == steps.theirs.map(\.key) { stepRoutesMatching += 1 }
        if steps.ours.map(\.maneuver) == steps.theirs.map(\.maneuver) {
          maneuverRoutesMatching += 1
          sameManeuvers += steps.theirs.count
          bearingsMatched += zip(steps.ours, steps.theirs).filter { $0.bearings == $1.bearings }.count
          if steps.ours.map(\.intersections) == steps.theirs.map(\.intersections) { intersectionRoutesMatching += 1 }
        }
        osrmSteps += steps.theirs.count
        stepsMatched += Step.matched(steps.ours, steps.theirs)
        let (ours, theirs) = (Set(steps.ours.flatMap(\.lanes)), Set(steps.theirs.flatMap(\.lanes)))
        let locations = { (lanes: Set<String>) in Set(lanes.map { $0.prefix { $0 != "=" } }) }
        osrmLanes += theirs.count
        lanesMatched += ours.intersection(theirs).count
        lanesOnlyOurs += locations(ours).subtracting(locations(theirs)).count
      }
    }
    let ours = results.map(\.ours.latency).sorted()
    let theirs = results.map(\.theirs.latency).sorted()
    if !ours.isEmpty {
      latencyRatio = Self.seconds(ours[ours.count / 2]) / Self.seconds(theirs[theirs.count / 2])
      p99Ratio = Self.seconds(ours[ours.count * 99 / 100]) / Self.seconds(theirs[theirs.count * 99 / 100])
    }
  }

  static func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
  }

  static let header = """
    | extract | pairs | OSRM Ok | distance within 2 % | duration within 10 % | start or end snapped > 10 m apart | OSRM Ok, FleetKit not | FleetKit Ok, OSRM not | median /route latency vs OSRM (p99) | routes with the same (type, modifier) sequence | routes with the same steps | OSRM's steps matched | OSRM's lanes matched (FleetKit's alone) | same maneuvers: OSRM's bearings / OSRM's intersections |
    | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
    """

  func row(name: String) -> String {
    let share = { (n: Int, of: Int) in of == 0 ? "-" : String(format: "%.1f %%", 100 * Double(n) / Double(of)) }
    let codes = { (counts: [String: Int]) in
      counts.isEmpty ? "0" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
    return
      "| \(name) | \(pairs) | \(osrmOk) | \(share(distance, osrmOk)) | \(share(duration, osrmOk)) | \(share(snapsDiffer, bothOk)) | \(codes(onlyOsrm)) | \(codes(onlyOurs)) | \(String(format: "%.2f× (%.2f×)", latencyRatio, p99Ratio)) | \(share(maneuverRoutesMatching, stepRoutes)) | \(share(stepRoutesMatching, stepRoutes)) | \(share(stepsMatched, osrmSteps)) | \(share(lanesMatched, osrmLanes)) of \(osrmLanes) (\(lanesOnlyOurs)) | \(share(bearingsMatched, sameManeuvers)) / \(share(intersectionRoutesMatching, maneuverRoutesMatching)) |"
  }
}

/// Where to draw points: the extract's area, and the nodes of its drivable roads as OSM tags
/// them (not as either engine reads them).
struct RoadSample {
  var segments: [(LatLng, LatLng)] = []
  var south = 90.0, north = -90.0, west = 180.0, east = -180.0

  static let drivable: Set<String> = [
    "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary", "secondary_link",
    "tertiary", "tertiary_link", "unclassified", "residential", "living_street", "service",
  ]

  init(osm: String) throws {
    let reader = PBFReader(path: osm)
    var wayNodes: [[Int64]] = []
    var wanted = Set<Int64>()
    try reader.read(
      [.ways], node: { _ in },
      way: { way in
        guard let highway = way.tags["highway"], Self.drivable.contains(highway), way.tags["area"] != "yes",
          !["no", "private"].contains(way.tags["access"] ?? ""), way.tags["motor_vehicle"] != "no"
        else { return }
        wayNodes.append(way.nodeIDs)
        wanted.formUnion(way.nodeIDs)
      }, relation: { _ in })
    var coordinates: [Int64: LatLng] = [:]
    try reader.read(
      [.nodes],
      node: { node in
        guard wanted.contains(node.id) else { return }
        coordinates[node.id] = LatLng(latitude: node.latitude, longitude: node.longitude)
      }, way: { _ in }, relation: { _ in })
    for nodes in wayNodes {
      for (a, b) in zip(nodes, nodes.dropFirst()) {
        guard let p = coordinates[a], let q = coordinates[b] else { continue }
        segments.append((p, q))
      }
    }
    for p in coordinates.values {
      south = min(south, p.latitude)
      north = max(north, p.latitude)
      west = min(west, p.longitude)
      east = max(east, p.longitude)
    }
  }

  func uniform(_ random: inout Seeded) -> LatLng {
    LatLng(latitude: south + random.next() * (north - south), longitude: west + random.next() * (east - west))
  }

  /// A point on a random road segment (segments weighted alike), moved up to 30 m in a random
  /// direction.
  func nearRoad(_ random: inout Seeded) -> LatLng {
    let (a, b) = segments[Int(random.next() * Double(segments.count)) % segments.count]
    let t = random.next()
    let on = LatLng(
      latitude: a.latitude + (b.latitude - a.latitude) * t, longitude: a.longitude + (b.longitude - a.longitude) * t)
    let metres = random.next() * 30
    let angle = random.next() * 2 * .pi
    let metresPerDegree = LatLng.earthRadius * .pi / 180
    return LatLng(
      latitude: on.latitude + metres * cos(angle) / metresPerDegree,
      longitude: on.longitude + metres * sin(angle) / (metresPerDegree * cos(on.latitude * .pi / 180)))
  }
}

extension String {
  /// FNV-1a: stable across processes.
  var hashValueStable: UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
  }
}
