import FleetCore
import FleetGeometry
import FleetRouting
import Foundation
import HTTPTypes
import NIOCore

/// OSRM's HTTP API (v1: route, table, nearest, match) over FleetKit's routing engine, with OSRM's
/// response shapes and codes, so OSRM clients work against fleetd unchanged; and isochrones on
/// the same footing (`OSRMFront+Isochrone.swift`).
struct OSRMFront: Sendable {
  /// nil when fleetd runs without `--graph`: the services then say so.
  let engine: RoutingEngine?

  func addRoutes(to routes: Routes) {
    for service in ["route", "table", "nearest", "match", "trip", "tile", "isochrone"] {
      routes.addAnsweredOnLoop("/\(service)/**", offLoop: Self.offLoopServices.contains(service)) { path, query in
        answer(service, path: path, query: query)
      }
    }
  }

  /// What fleetd asks itself for when it starts listening (`HTTPServer.warmUp`): a nearest on
  /// one of the graph's junctions, so that the OSRM path is warm for the first client.
  var warmUpPaths: [String] {
    guard let network = engine?.network, !network.junctions.isEmpty else { return [] }
    let point = network.coordinate(ofJunction: 0)
    return ["/nearest/v1/driving/\(point.longitude),\(point.latitude)"]
  }

  /// Services whose work grows with the request (a 100×100 table, a long trace) run off the
  /// event loops (`OffLoop`); a route or a nearest is done sooner than the hop there and back.
  static let offLoopServices: Set<String> = ["table", "match", "isochrone"]

  func answer(_ service: String, path: String, query text: String) -> PlainResponse {
    do {
      guard let engine else {
        throw OSRMError("InvalidService", "fleetd was started without a road graph: run it with --graph FILE")
      }
      let query = try OSRMQuery(service: service, path: path, query: text)
      let body: any Encodable
      switch service {
      case "route": body = try route(engine, query)
      case "table": return Self.response(try table(engine, query).jsonData(), status: .ok)
      case "nearest": body = try nearest(engine, query)
      case "match": body = try match(engine, query)
      case "isochrone": body = try isochrone(engine, query)
      default: throw OSRMError("InvalidService", "Service \(service) is not supported by fleetd")
      }
      return Self.json(body, status: .ok)
    } catch let error as OSRMError {
      return Self.json(error, status: .badRequest)
    } catch let error as RoutingError {
      return Self.json(OSRMError(error.code.rawValue, error.message), status: .badRequest)
    } catch {
      return Self.json(OSRMError("InvalidQuery", "\(error)"), status: .badRequest)
    }
  }

  static func json(_ body: any Encodable, status: HTTPResponse.Status) -> PlainResponse {
    let data = (try? StreamingJSONEncoder().encode(body)) ?? Data(#"{"code":"InternalError"}"#.utf8)
    return response(data, status: status)
  }

  static func response(_ data: Data, status: HTTPResponse.Status) -> PlainResponse {
    PlainResponse(status: status, contentType: "application/json; charset=UTF-8", body: ByteBuffer(data: data))
  }

  // MARK: - Services

  func route(_ engine: RoutingEngine, _ query: OSRMQuery) throws -> OSRMRouteResponse {
    try query.allow([
      "overview", "geometries", "steps", "alternatives", "annotations", "continue_straight", "radiuses",
      "generate_hints", "hints", "skip_waypoints", "snapping", "bearings", "approaches", "exclude",
      "voice_instructions", "banner_instructions", "voice_units", "traffic", "depart_at",
    ])
    guard query.coordinates.count >= 2 else {
      throw OSRMError("InvalidOptions", "Number of coordinates needs to be at least two.")
    }
    let overview = try query.choice("overview", ["simplified", "full", "false"], default: "simplified")
    let geometries = try query.choice("geometries", ["polyline", "polyline6", "geojson"], default: "polyline")
    let steps = try query.flag("steps")
    let annotations = try query.annotations()
    let instructions = try query.instructions(steps: steps)
    let options = RouteOptions(
      radiuses: try query.radiuses(), bearings: try query.bearings(), approaches: try query.approaches(),
      excluding: try query.excluded(), continueStraight: try query.continueStraight(),
      alternatives: try query.alternatives(), traffic: try query.traffic())
    let routes = try engine.routes(query.coordinates, options: options)
    return OSRMRouteResponse(
      routes: routes.map { route in
        let legs = route.legs.enumerated().map { i, leg in
          OSRMLeg(
            leg,
            steps: steps ? engine.steps(of: leg, from: query.coordinates[i], to: query.coordinates[i + 1]) : nil,
            format: geometries, annotations: annotations, instructions: instructions)
        }
        return OSRMRoute(
          geometry: OSRMGeometry(route.geometry, overview: overview, format: geometries), legs: legs,
          weight: Self.round(route.weight), duration: Self.round(route.duration), distance: Self.round(route.distance))
      },
      waypoints: query.values["skip_waypoints"] == "true" ? nil : routes[0].waypoints.map(OSRMWaypoint.init))
  }

  func table(_ engine: RoutingEngine, _ query: OSRMQuery) throws -> OSRMTableResponse {
    try query.allow([
      "sources", "destinations", "annotations", "radiuses", "generate_hints", "hints", "skip_waypoints",
      "fallback_speed", "fallback_coordinate", "scale_factor", "snapping", "traffic", "depart_at",
    ])
    guard !query.coordinates.isEmpty else {
      throw OSRMError("InvalidOptions", "Number of coordinates needs to be at least one.")
    }
    let sources = try query.indices("sources")
    let destinations = try query.indices("destinations")
    let annotations = Set((query.values["annotations"] ?? "duration").split(separator: ",").map(String.init))
    guard !annotations.isEmpty, annotations.isSubset(of: ["duration", "distance"]) else {
      throw OSRMError("InvalidOptions", "annotations must be duration, distance or duration,distance")
    }
    let matrix = try engine.matrix(
      sources: sources.map { query.coordinates[$0] }, destinations: destinations.map { query.coordinates[$0] },
      traffic: try query.traffic())
    return OSRMTableResponse(
      durations: annotations.contains("duration") ? matrix.durations.map { $0.map { $0.map(Self.round) } } : nil,
      distances: annotations.contains("distance") ? matrix.distances.map { $0.map { $0.map(Self.round) } } : nil,
      sources: matrix.sources.map(OSRMWaypoint.init), destinations: matrix.destinations.map(OSRMWaypoint.init))
  }

  func nearest(_ engine: RoutingEngine, _ query: OSRMQuery) throws -> OSRMNearestResponse {
    try query.allow(["number", "radiuses", "generate_hints", "hints", "bearings", "snapping"])
    guard query.coordinates.count == 1 else {
      throw OSRMError("InvalidOptions", "Only one input coordinate is supported")
    }
    let number = Int(query.values["number"] ?? "1") ?? 0
    guard (1...100).contains(number) else { throw OSRMError("InvalidOptions", "Number of results must be 1 to 100") }
    let radius = try query.radiuses()?.first ?? nil
    return OSRMNearestResponse(
      waypoints: try engine.nearest(query.coordinates[0], count: number, radius: radius).map(OSRMWaypoint.init))
  }

  func match(_ engine: RoutingEngine, _ query: OSRMQuery) throws -> OSRMMatchResponse {
    try query.allow([
      "overview", "geometries", "steps", "annotations", "timestamps", "radiuses", "gaps", "tidy",
      "generate_hints", "hints", "waypoints", "snapping", "traffic", "depart_at",
    ])
    guard query.coordinates.count >= 2 else {
      throw OSRMError("InvalidOptions", "Number of coordinates needs to be at least two.")
    }
    let overview = try query.choice("overview", ["simplified", "full", "false"], default: "simplified")
    let geometries = try query.choice("geometries", ["polyline", "polyline6", "geojson"], default: "polyline")
    let steps = try query.flag("steps")
    let annotations = try query.annotations()
    if let timestamps = query.values["timestamps"] {
      let values = timestamps.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
      guard values.count == query.coordinates.count, values.allSatisfy({ $0 != nil }) else {
        throw OSRMError("InvalidOptions", "Number of timestamps does not match number of coordinates")
      }
      guard zip(values, values.dropFirst()).allSatisfy({ $0! <= $1! }) else {
        throw OSRMError("InvalidValue", "Timestamps need to be monotonically increasing")
      }
    }
    var matching = MapMatchingOptions()
    matching.traffic = try query.traffic()
    let trace = try engine.match(query.coordinates, accuracies: try query.radiuses(), options: matching)
    // The asked point each matching's waypoint came from, for the side of the road in steps.
    let asked = { (matching: Int, waypoint: Int) -> LatLng in
      let i = trace.tracepoints.firstIndex { $0?.matchingIndex == matching && $0?.waypointIndex == waypoint }
      return i.map { query.coordinates[$0] } ?? query.coordinates[0]
    }
    let matchings = trace.matchings.enumerated().map { index, m in
      OSRMMatching(
        confidence: m.confidence,
        geometry: OSRMGeometry(m.geometry, overview: overview, format: geometries),
        legs: m.legs.enumerated().map { i, leg in
          OSRMLeg(
            leg, steps: steps ? engine.steps(of: leg, from: asked(index, i), to: asked(index, i + 1)) : nil,
            format: geometries, annotations: annotations)
        },
        weight: Self.round(m.duration), duration: Self.round(m.duration), distance: Self.round(m.distance))
    }
    return OSRMMatchResponse(
      matchings: matchings,
      tracepoints: trace.tracepoints.map { point in
        point.map {
          OSRMTracepoint(
            distance: $0.snapped.distance, name: $0.snapped.name,
            location: [$0.snapped.location.longitude, $0.snapped.location.latitude], matchings_index: $0.matchingIndex,
            waypoint_index: $0.waypointIndex)
        }
      })
  }

  /// OSRM reports durations and distances to a tenth.
  static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}

/// An OSRM error body: `{"code": "...", "message": "..."}`.
struct OSRMError: Error, Encodable {
  let code: String
  let message: String
  init(_ code: String, _ message: String) {
    self.code = code
    self.message = message
  }
}

/// A parsed OSRM URL: `/{service}/v1/{profile}/{coordinates}?{options}`.
struct OSRMQuery {
  var coordinates: [LatLng] = []
  var values: [String: String] = [:]

  init(service: String, path: String, query: String) throws {
    let parts = path.fields(separatedBy: UInt8(ascii: "/")).dropFirst()
    guard parts.count == 4, parts[parts.startIndex] == Substring(service) else {
      throw OSRMError("InvalidUrl", "URL must be /\(service)/v1/{profile}/{coordinates}")
    }
    let version = parts[parts.startIndex + 1]
    guard version == "v1" else { throw OSRMError("InvalidVersion", "Service version \(version) is not supported") }
    var text = Self.decoded(parts[parts.startIndex + 3])
    if text.hasSuffix(".json") { text.removeLast(5) }
    coordinates = try Self.coordinates(text)
    for pair in query.fields(separatedBy: UInt8(ascii: "&"), omittingEmpty: true) {
      let kv = pair.fields(separatedBy: UInt8(ascii: "="), maxSplits: 1)
      let key = String(kv[0])
      values[key] = kv.count > 1 ? Self.decoded(kv[1]) : ""
    }
  }

  /// Percent-decoded; most parts have no escapes, and Foundation's decoding costs more than the
  /// rest of reading the URL.
  static func decoded(_ part: Substring) -> String {
    guard part.utf8.contains(UInt8(ascii: "%")) else { return String(part) }
    return String(part).removingPercentEncoding ?? ""
  }

  static func coordinates(_ text: String) throws -> [LatLng] {
    for (prefix, precision) in [("polyline6(", 6), ("polyline(", 5)] where text.hasPrefix(prefix) {
      guard text.hasSuffix(")"),
        let points = Polyline.decode(String(text.dropFirst(prefix.count).dropLast()), precision: precision)
      else { throw OSRMError("InvalidQuery", "Query string malformed: the polyline does not decode") }
      return points
    }
    return try text.fields(separatedBy: UInt8(ascii: ";")).map { pair in
      let numbers = pair.fields(separatedBy: UInt8(ascii: ",")).map { Double($0) }
      guard numbers.count == 2, let lon = numbers[0], let lat = numbers[1] else {
        throw OSRMError("InvalidQuery", "Query string malformed close to '\(pair)': expected lon,lat")
      }
      guard lon.isFinite, lat.isFinite, (-180...180).contains(lon), (-90...90).contains(lat) else {
        throw OSRMError("InvalidValue", "Invalid coordinate value.")
      }
      return LatLng(latitude: lat, longitude: lon)
    }
  }

  /// Unknown options are errors, as in OSRM, so that a typo is not silently ignored.
  func allow(_ known: Set<String>) throws {
    if let unknown = values.keys.sorted().first(where: { !known.contains($0) }) {
      throw OSRMError("InvalidQuery", "Query string malformed: unknown option '\(unknown)'")
    }
  }

  func choice(_ key: String, _ options: [String], default fallback: String) throws -> String {
    let value = values[key] ?? fallback
    guard options.contains(value) else {
      throw OSRMError("InvalidQuery", "\(key) must be one of \(options.joined(separator: ", "))")
    }
    return value
  }

  func flag(_ key: String) throws -> Bool {
    switch values[key] ?? "false" {
    case "true": return true
    case "false": return false
    default: throw OSRMError("InvalidQuery", "\(key) must be true or false")
    }
  }

  /// `sources=0;2` or `all` (the default): indices into the coordinates.
  func indices(_ key: String) throws -> [Int] {
    let value = values[key] ?? "all"
    if value == "all" { return Array(coordinates.indices) }
    return try value.split(separator: ";", omittingEmptySubsequences: false).map { item in
      guard let i = Int(item), coordinates.indices.contains(i) else {
        throw OSRMError("InvalidOptions", "\(key) index '\(item)' is not one of the \(coordinates.count) coordinates")
      }
      return i
    }
  }

  /// `bearings=degrees,range;;…`: per coordinate, empty for any direction.
  func bearings() throws -> [WaypointBearing?]? {
    guard let value = values["bearings"] else { return nil }
    let items = value.split(separator: ";", omittingEmptySubsequences: false)
    guard items.count == coordinates.count else {
      throw OSRMError("InvalidOptions", "Number of bearings does not match number of coordinates")
    }
    return try items.map { item in
      if item.isEmpty { return nil }
      let numbers = item.split(separator: ",").map { Double($0) }
      guard numbers.count == 2, let degrees = numbers[0], let range = numbers[1], (0...360).contains(degrees),
        (0...180).contains(range)
      else {
        throw OSRMError("InvalidValue", "bearing '\(item)' must be degrees (0-360),range (0-180)")
      }
      return WaypointBearing(degrees: degrees, range: range)
    }
  }

  /// `approaches=curb;unrestricted;…`: per coordinate, empty for unrestricted.
  func approaches() throws -> [Approach]? {
    guard let value = values["approaches"] else { return nil }
    let items = value.split(separator: ";", omittingEmptySubsequences: false)
    guard items.count == coordinates.count else {
      throw OSRMError("InvalidOptions", "Number of approaches does not match number of coordinates")
    }
    return try items.map { item in
      if item.isEmpty { return .unrestricted }
      guard let approach = Approach(rawValue: String(item)) else {
        throw OSRMError("InvalidValue", "approach '\(item)' must be curb or unrestricted")
      }
      return approach
    }
  }

  /// `exclude=motorway,toll`: classes the car profile can leave out.
  func excluded() throws -> RoadClasses {
    guard let value = values["exclude"], !value.isEmpty else { return [] }
    var classes: RoadClasses = []
    for name in value.split(separator: ",", omittingEmptySubsequences: false) {
      guard let known = RoadClasses.named.first(where: { $0.name == name && RoadClasses.excludable.contains($0.value) })
      else {
        throw OSRMError(
          "InvalidValue",
          "Exclude flag combination is not supported: '\(name)' is not one of \(RoadClasses.excludable.names.joined(separator: ", "))"
        )
      }
      classes.insert(known.value)
    }
    guard RoadClasses.excludableSets.contains(classes) else {
      throw OSRMError("InvalidValue", "Exclude flag combination is not supported: exclude one class at a time")
    }
    return classes
  }

  /// `continue_straight=true|false|default`: the car profile's default is not to turn back at
  /// via waypoints.
  func continueStraight() throws -> Bool {
    switch values["continue_straight"] ?? "default" {
    case "default", "true": return true
    case "false": return false
    default: throw OSRMError("InvalidQuery", "continue_straight must be true, false or default")
    }
  }

  /// `traffic=true|false` (default true: the traffic fleetd has learned from its vehicles; false:
  /// free-flow speeds) and `depart_at` (Mapbox's: an ISO 8601 time with its offset, such as
  /// `2026-11-30T08:00Z`; the usual traffic of that time of the week).
  func traffic() throws -> TrafficTiming {
    let learned: Bool
    switch values["traffic"] ?? "true" {
    case "true": learned = true
    case "false": learned = false
    default: throw OSRMError("InvalidQuery", "traffic must be true or false")
    }
    guard let departure = values["depart_at"] else { return learned ? .current : .freeFlow }
    guard learned else {
      throw OSRMError("InvalidOptions", "depart_at times the roads with learned traffic: leave out traffic=false")
    }
    guard let date = Self.date(departure) else {
      throw OSRMError(
        "InvalidValue",
        "depart_at must be an ISO 8601 time with its offset, such as 2026-11-30T08:00Z, not '\(departure)'")
    }
    return .departing(date)
  }

  /// `YYYY-MM-DDThh:mm[:ss][.fff](Z|±hh:mm)`.
  static func date(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions.insert(.withFractionalSeconds)
    if let date = formatter.date(from: text) { return date }
    // Without seconds, as Mapbox allows: the seconds added.
    guard text.count > 16, let t = text.firstIndex(of: "T"), text.distance(from: t, to: text.endIndex) > 6 else {
      return nil
    }
    let minutesEnd = text.index(t, offsetBy: 6)
    let rest = text[minutesEnd...]
    guard rest.first == "Z" || rest.first == "+" || rest.first == "-" else { return nil }
    return ISO8601DateFormatter().date(from: text[..<minutesEnd] + ":00" + rest)
  }

  /// `alternatives=true|false|N`: how many alternative routes to look for (true is one).
  func alternatives() throws -> Int {
    switch values["alternatives"] ?? "false" {
    case "false": return 0
    case "true": return 1
    case let text:
      guard let count = Int(text), count >= 0 else {
        throw OSRMError("InvalidQuery", "alternatives must be true, false or a number of routes")
      }
      return min(count, 10)
    }
  }

  /// `annotations=true|false` or a list of OSRM's annotation kinds: the kinds asked for.
  func annotations() throws -> Set<String> {
    switch values["annotations"] ?? "false" {
    case "false": return []
    case "true": return OSRMAnnotation.kinds
    case let list:
      let kinds = Set(list.split(separator: ",", omittingEmptySubsequences: false).map(String.init))
      guard kinds.isSubset(of: OSRMAnnotation.kinds) else {
        throw OSRMError(
          "InvalidOptions",
          "annotations must be true, false or a list of \(OSRMAnnotation.kinds.sorted().joined(separator: ", "))")
      }
      return kinds
    }
  }

  /// Mapbox's `voice_instructions=true`, `banner_instructions=true` and `voice_units`: the
  /// steps' spoken and banner instructions, which need the steps.
  func instructions(steps: Bool) throws -> InstructionOptions {
    var options = InstructionOptions(voice: try flag("voice_instructions"), banners: try flag("banner_instructions"))
    guard let units = VoiceUnits(rawValue: values["voice_units"] ?? "metric") else {
      throw OSRMError("InvalidQuery", "voice_units must be metric or imperial")
    }
    options.units = units
    if (options.voice || options.banners) && !steps {
      throw OSRMError("InvalidOptions", "voice_instructions and banner_instructions need steps=true")
    }
    return options
  }

  /// `radiuses=10;unlimited;…`: one per coordinate, metres.
  func radiuses() throws -> [Double?]? {
    guard let value = values["radiuses"] else { return nil }
    let items = value.split(separator: ";", omittingEmptySubsequences: false)
    guard items.count == coordinates.count else {
      throw OSRMError("InvalidOptions", "Number of radiuses does not match number of coordinates")
    }
    return try items.map { item in
      if item == "unlimited" || item.isEmpty { return nil }
      guard let r = Double(item), r.isFinite, r >= 0 else {
        throw OSRMError("InvalidOptions", "radius '\(item)' must be a number of metres or 'unlimited'")
      }
      return r
    }
  }
}

// MARK: - Response shapes

struct OSRMWaypoint: Encodable, JSONWritable {
  var hint = ""
  var distance: Double
  var name: String
  var location: [Double]

  init(_ point: SnappedPoint) {
    distance = point.distance
    name = point.name
    location = [point.location.longitude, point.location.latitude]
  }

  func write(to output: JSONOutput) {
    output.append("{\"hint\":")
    output.writeString(hint)
    output.append(",\"distance\":")
    output.writeDouble(distance)
    output.append(",\"name\":")
    output.writeString(name)
    output.append(",\"location\":")
    output.writeArray(location, output.writeDouble)
    output.append("}")
  }
}

enum OSRMGeometry: Encodable {
  case encoded(String)
  case geoJSON([[Double]])

  /// The route's line as `overview` (simplified, full, false) asks, in `format`.
  init?(_ points: [LatLng], overview: String, format: String) {
    guard overview != "false" else { return nil }
    self.init(overview == "simplified" ? Simplify.douglasPeucker(points, toleranceMeters: 5) : points, format: format)
  }

  init(_ points: [LatLng], format: String) {
    switch format {
    case "geojson": self = .geoJSON(points.map { [$0.longitude, $0.latitude] })
    case "polyline6": self = .encoded(Polyline.encode(points, precision: 6))
    default: self = .encoded(Polyline.encode(points, precision: 5))
    }
  }

  struct LineString: Encodable {
    var type = "LineString"
    var coordinates: [[Double]]
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .encoded(let text): try container.encode(text)
    case .geoJSON(let coordinates): try container.encode(LineString(coordinates: coordinates))
    }
  }
}

struct OSRMLeg: Encodable, JSONWritable {
  var annotation: OSRMAnnotation?
  var steps: [OSRMStep] = []
  var summary = ""
  var distance: Double
  var duration: Double
  var weight: Double

  init(_ leg: RouteLeg) {
    distance = OSRMFront.round(leg.distance)
    duration = OSRMFront.round(leg.duration)
    weight = leg.spans.isEmpty ? duration : OSRMFront.round(leg.spans.reduce(0) { $0 + $1.weight })
  }

  /// With its steps (when asked for) in `format`, their spoken and banner instructions when
  /// asked for, and the annotations asked for.
  init(
    _ leg: RouteLeg, steps: [RouteStep]?, format: String, annotations: Set<String>,
    instructions: InstructionOptions = InstructionOptions()
  ) {
    self.init(leg)
    if let steps {
      self.steps = steps.map { OSRMStep($0, format: format) }
      summary = Self.summary(steps)
      if instructions.voice || instructions.banners {
        for (i, step) in Instructions.of(steps, units: instructions.units).enumerated() {
          if instructions.voice { self.steps[i].voiceInstructions = step.spoken.map(OSRMVoiceInstruction.init) }
          if instructions.banners { self.steps[i].bannerInstructions = step.banners.map(OSRMBannerInstruction.init) }
        }
      }
    }
    if !annotations.isEmpty { annotation = OSRMAnnotation(leg, kinds: annotations) }
  }

  func write(to output: JSONOutput) throws {
    output.append("{")
    if let annotation {
      output.append("\"annotation\":")
      try output.write(annotation)
      output.append(",")
    }
    output.append("\"steps\":")
    try output.writeArray(steps, output.write)
    output.append(",\"summary\":")
    output.writeString(summary)
    output.append(",\"distance\":")
    output.writeDouble(distance)
    output.append(",\"duration\":")
    output.writeDouble(duration)
    output.append(",\"weight\":")
    output.writeDouble(weight)
    output.append("}")
  }
}

/// Which of Mapbox's step instructions a request asks for.
struct InstructionOptions {
  var voice = false
  var banners = false
  var units = VoiceUnits.metric
}

struct OSRMRoute: Encodable, JSONWritable {
  var geometry: OSRMGeometry?
  var legs: [OSRMLeg]
  var weight_name = "routability"
  var weight: Double
  var duration: Double
  var distance: Double

  func write(to output: JSONOutput) throws {
    output.append("{")
    if let geometry {
      output.append("\"geometry\":")
      try output.write(geometry)
      output.append(",")
    }
    output.append("\"legs\":")
    try output.writeArray(legs) { try $0.write(to: output) }
    output.append(",\"weight_name\":")
    output.writeString(weight_name)
    output.append(",\"weight\":")
    output.writeDouble(weight)
    output.append(",\"duration\":")
    output.writeDouble(duration)
    output.append(",\"distance\":")
    output.writeDouble(distance)
    output.append("}")
  }
}

struct OSRMRouteResponse: Encodable, JSONWritable {
  var code = "Ok"
  var routes: [OSRMRoute]
  var waypoints: [OSRMWaypoint]?

  func write(to output: JSONOutput) throws {
    output.append("{\"code\":")
    output.writeString(code)
    output.append(",\"routes\":")
    try output.writeArray(routes) { try $0.write(to: output) }
    if let waypoints {
      output.append(",\"waypoints\":")
      output.writeArray(waypoints) { $0.write(to: output) }
    }
    output.append("}")
  }
}

struct OSRMTableResponse {
  var code = "Ok"
  /// Unreachable cells are nil, written as null as in OSRM.
  var durations: [[Double?]]?
  var distances: [[Double?]]?
  var sources: [OSRMWaypoint]
  var destinations: [OSRMWaypoint]
}

extension OSRMTableResponse {
  /// The response as JSON, the matrices written number by number into the bytes: a 100×100
  /// table has 20,000 numbers, and going through an encoder cost more than computing them.
  func jsonData() throws -> Data {
    let output = JSONOutput()
    output.append("{\"code\":")
    output.writeString(code)
    for (key, matrix) in [("durations", durations), ("distances", distances)] {
      guard let matrix else { continue }
      output.append(",")
      output.writeString(key)
      output.append(":[")
      for (i, row) in matrix.enumerated() {
        output.append(i == 0 ? "[" : ",[")
        for (j, value) in row.enumerated() {
          if j > 0 { output.append(",") }
          output.writeDouble(value ?? .nan)  // null where no route
        }
        output.append("]")
      }
      output.append("]")
    }
    output.append(",\"sources\":")
    output.writeArray(sources) { $0.write(to: output) }
    output.append(",\"destinations\":")
    output.writeArray(destinations) { $0.write(to: output) }
    output.append("}")
    return output.data
  }
}

struct OSRMMatching: Encodable {
  var confidence: Double
  var geometry: OSRMGeometry?
  var legs: [OSRMLeg]
  var weight_name = "routability"
  var weight: Double
  var duration: Double
  var distance: Double
}

struct OSRMTracepoint: Encodable {
  var hint = ""
  var distance: Double
  var name: String
  var location: [Double]
  var matchings_index: Int
  var waypoint_index: Int
  var alternatives_count = 0
}

struct OSRMMatchResponse: Encodable {
  var code = "Ok"
  var matchings: [OSRMMatching]
  /// Unmatched trace points are null, as in OSRM (an array's nil elements are written).
  var tracepoints: [OSRMTracepoint?]
}

struct OSRMNearestResponse: Encodable {
  var code = "Ok"
  var waypoints: [OSRMWaypoint]
}
