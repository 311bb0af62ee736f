import ArgumentParser
import FleetGeometry
import FleetRouting
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Why FleetKit's route and OSRM's differ for one pair of points: where each snapped the
/// start and the end (the OSM way and its tags), both routes as sequences of OSM ways, where
/// they part and meet again, and for every way involved FleetKit's profile decision (drivable
/// each way, speeds, access, oneway, barriers on its nodes, component size) next to the speed
/// OSRM drove it at.
@main
struct RoutingDiff: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "routing-diff", abstract: "Explain a route where FleetKit and OSRM disagree.")

  @Option(help: "OSM PBF extract OSRM serves.") var osm: String
  @Option(help: "Base URL of osrm-routed on the extract.") var osrm: String
  @Option(parsing: .unconditional, help: "Start, LAT,LNG.") var from: String
  @Option(parsing: .unconditional, help: "End, LAT,LNG.") var to: String

  func run() async throws {
    guard let start = Self.point(from), let end = Self.point(to) else {
      throw ValidationError("--from and --to must be LAT,LNG")
    }
    let map = try OSMWays(path: osm)
    let engine = try RoutingEngine(osm: osm)
    let profile = engine.profile

    // FleetKit.
    var ours: [WayRun] = []
    var oursTotal = "no route"
    do {
      let route = try engine.route([start, end])
      oursTotal = String(format: "%.0f m, %.0f s", route.distance, route.duration)
      for span in route.legs.flatMap(\.spans) {
        let way = engine.wayID(ofEdge: span.edge)
        if let last = ours.last, last.wayID == way, last.forward == !span.reversed {
          ours[ours.count - 1].metres += span.distance
          ours[ours.count - 1].seconds += span.duration
        } else {
          ours.append(WayRun(wayID: way, metres: span.distance, seconds: span.duration, forward: !span.reversed))
        }
      }
      print("FleetKit: \(oursTotal)")
      for (label, w) in zip(["start", "end"], route.waypoints) {
        let way = label == "start" ? ours.first?.wayID : ours.last?.wayID
        print(
          "  \(label) snapped to \(Self.format(w.location)) (\(String(format: "%.1f", w.distance)) m off), way \(way.map(String.init) ?? "?") \(way.flatMap { map.describe($0) } ?? "")"
        )
      }
    } catch {
      print("FleetKit: \(error)")
    }

    // OSRM.
    var theirs: [WayRun] = []
    let coordinates = String(
      format: "%.6f,%.6f;%.6f,%.6f", start.longitude, start.latitude, end.longitude, end.latitude)
    let json = try await Self.get(
      "\(osrm)/route/v1/driving/\(coordinates)?overview=false&annotations=nodes,distance,duration")
    if let route = (json["routes"] as? [[String: Any]])?.first {
      print(
        String(format: "OSRM: %.0f m, %.0f s", route["distance"] as? Double ?? 0, route["duration"] as? Double ?? 0))
      for leg in route["legs"] as? [[String: Any]] ?? [] {
        let annotation = leg["annotation"] as? [String: Any] ?? [:]
        let nodes = (annotation["nodes"] as? [NSNumber] ?? []).map(\.int64Value)
        let metres = annotation["distance"] as? [Double] ?? []
        let seconds = annotation["duration"] as? [Double] ?? []
        for (i, (a, b)) in zip(nodes, nodes.dropFirst()).enumerated() {
          guard let (way, forward) = map.way(between: a, and: b) else { continue }
          let m = i < metres.count ? metres[i] : 0
          let s = i < seconds.count ? seconds[i] : 0
          if let last = theirs.last, last.wayID == way, last.forward == forward {
            theirs[theirs.count - 1].metres += m
            theirs[theirs.count - 1].seconds += s
          } else {
            theirs.append(WayRun(wayID: way, metres: m, seconds: s, forward: forward))
          }
        }
      }
    } else {
      print("OSRM: \(json["code"] as? String ?? "?"): \(json["message"] as? String ?? "")")
    }
    for (label, point) in [("start", start), ("end", end)] {
      let near = try await Self.get(
        "\(osrm)/nearest/v1/driving/\(String(format: "%.6f,%.6f", point.longitude, point.latitude))?number=1")
      guard let w = (near["waypoints"] as? [[String: Any]])?.first, let l = w["location"] as? [Double] else { continue }
      let nodes = (w["nodes"] as? [NSNumber] ?? []).map(\.int64Value)
      let way = nodes.count == 2 ? map.way(between: nodes[0], and: nodes[1])?.0 : nil
      print(
        "  \(label) snapped to \(Self.format(LatLng(latitude: l[1], longitude: l[0]))) (\(String(format: "%.1f", w["distance"] as? Double ?? 0)) m off), way \(way.map(String.init) ?? "?") \(way.flatMap { map.describe($0) } ?? "")"
      )
    }

    // The two routes side by side, and where they part.
    let a = ours.map(\.wayID)
    let b = theirs.map(\.wayID)
    let prefix = zip(a, b).prefix { $0 == $1 }.count
    let suffix = zip(a.reversed(), b.reversed()).prefix { $0 == $1 }.count
    print("\nroutes as OSM ways (FleetKit | OSRM); they share the first \(prefix) and the last \(suffix)")
    for i in 0..<max(ours.count, theirs.count) {
      let left = i < ours.count ? ours[i].text(map) : ""
      let right = i < theirs.count ? theirs[i].text(map) : ""
      let mark = i >= prefix && i < max(a.count, b.count) - suffix ? "≠" : " "
      print("\(mark) \(left.padding(toLength: 58, withPad: " ", startingAt: 0)) | \(right)")
    }

    // Every way on one route only: what FleetKit's profile makes of it.
    let involved = Array(Set(a).symmetricDifference(Set(b))).sorted()
    print("\nways on one route only: FleetKit's profile decision, and OSRM's speed where OSRM drove it")
    for way in involved {
      guard let tags = map.tags[way] else { continue }
      let decision: String
      if let attributes = profile.way(tags) {
        let dir = { (d: WayDirection?) in
          d.map { String(format: "%.0f km/h%@", $0.speed, $0.restricted ? " (start/end only)" : "") } ?? "no"
        }
        decision = "forward \(dir(attributes.forward)), backward \(dir(attributes.backward))"
      } else {
        decision = "not drivable"
      }
      let facts = engine.facts(ofWay: way)
      let component = facts.map { " component \($0.smallestComponent)" } ?? " (not in the graph)"
      let driven = theirs.filter { $0.wayID == way }
      let osrmSpeed =
        driven.isEmpty
        ? ""
        : String(
          format: ", OSRM %.0f km/h",
          3.6 * driven.reduce(0) { $0 + $1.metres } / max(0.1, driven.reduce(0) { $0 + $1.seconds }))
      print("  way \(way) \(map.describe(way) ?? ""): \(decision);\(component)\(osrmSpeed)")
      for node in map.nodes[way] ?? [] {
        guard let nodeTags = map.nodeTags[node] else { continue }
        let attributes = profile.node(nodeTags)
        let delay = attributes.obstacles.reduce(0) { $0 + $1.seconds }
        if attributes.blocks || delay > 0 {
          print(
            "    node \(node) \(nodeTags.pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " ")): \(attributes.blocks ? "blocks" : String(format: "+%.0f s", delay))"
          )
        }
      }
    }
    // What OSRM's route would cost FleetKit, way by way.
    var cost = 0.0
    var drivable = true
    for run in theirs {
      guard let tags = map.tags[run.wayID], let attributes = profile.way(tags),
        let direction = run.forward ? attributes.forward : attributes.backward
      else {
        drivable = false
        continue
      }
      cost += run.metres / (direction.speed / 3.6)
    }
    print(
      drivable
        ? String(format: "\nOSRM's route at FleetKit's way speeds: %.0f s (turns and signals not counted)", cost)
        : "\nOSRM's route uses a way or a direction FleetKit does not drive")
  }

  static func point(_ text: String) -> LatLng? {
    let v = text.split(separator: ",").compactMap { Double($0) }
    return v.count == 2 ? LatLng(latitude: v[0], longitude: v[1]) : nil
  }

  static func format(_ p: LatLng) -> String { String(format: "%.6f,%.6f", p.latitude, p.longitude) }

  static func get(_ url: String) async throws -> [String: Any] {
    let (data, _) = try await URLSession.shared.data(from: URL(string: url)!)
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
  }
}

/// A stretch of a route on one OSM way.
struct WayRun {
  var wayID: Int64
  var metres: Double
  var seconds: Double
  /// In the way's drawing direction.
  var forward: Bool

  func text(_ map: OSMWays) -> String {
    String(
      format: "%lld %@ %.0f m %.0f s %@", wayID, map.name(wayID).prefix(18).description, metres, seconds,
      forward ? "→" : "←")
  }
}

/// The extract's highway and route ways with their tags, and the tagged nodes on them.
struct OSMWays {
  var tags: [Int64: OSMTags] = [:]
  var nodes: [Int64: [Int64]] = [:]
  var nodeTags: [Int64: OSMTags] = [:]
  /// (a, b) → the way and whether a → b runs in its drawing direction.
  var segments: [Pair: (Int64, Bool)] = [:]

  struct Pair: Hashable {
    var a: Int64
    var b: Int64
  }

  init(path: String) throws {
    let reader = PBFReader(path: path)
    var wanted = Set<Int64>()
    try reader.read(
      [.ways], node: { _ in },
      way: { way in
        guard way.tags["highway"] != nil || way.tags["route"] != nil else { return }
        tags[way.id] = way.tags
        nodes[way.id] = way.nodeIDs
        wanted.formUnion(way.nodeIDs)
        for (a, b) in zip(way.nodeIDs, way.nodeIDs.dropFirst()) {
          segments[Pair(a: a, b: b)] = (way.id, true)
          segments[Pair(a: b, b: a)] = segments[Pair(a: b, b: a)] ?? (way.id, false)
        }
      }, relation: { _ in })
    try reader.read(
      [.nodes],
      node: { node in
        if wanted.contains(node.id), !node.tags.isEmpty { nodeTags[node.id] = node.tags }
      }, way: { _ in }, relation: { _ in })
  }

  func way(between a: Int64, and b: Int64) -> (Int64, Bool)? { segments[Pair(a: a, b: b)] }

  func name(_ way: Int64) -> String { tags[way].flatMap { $0["name"] ?? $0["ref"] } ?? "" }

  func describe(_ way: Int64) -> String? {
    guard let tags = tags[way] else { return nil }
    return "["
      + tags.pairs.filter { !$0.key.hasPrefix("name:") && $0.key != "source" }.map { "\($0.key)=\($0.value)" }
      .joined(separator: " ") + "]"
  }
}
