import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting
@testable import FleetServer

/// OSRM's HTTP API on a real fleetd started with a Monaco graph.
@Suite("OSRM HTTP API")
struct OSRMAPITests {
  static let palace = "7.4200,43.7300"
  static let larvotto = "7.4300,43.7400"
  static let casino = "7.4280,43.7395"

  @Test func routeAnswersInOSRMsShape() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (status, json, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?overview=full&geometries=polyline6", token: nil)
      #expect(status == 200)
      #expect(json["code"] as? String == "Ok")
      let route = try #require((json["routes"] as? [[String: Any]])?.first)
      let distance = try #require(route["distance"] as? Double)
      let duration = try #require(route["duration"] as? Double)
      // OSRM on the same extract: 2984.5 m, 293.1 s.
      #expect(abs(distance - 2984.5) / 2984.5 < 0.02)
      #expect(abs(duration - 293.1) / 293.1 < 0.10)
      #expect(route["weight_name"] as? String == "routability")
      let legs = try #require(route["legs"] as? [[String: Any]])
      #expect(legs.count == 1)
      // Steps only when asked for, as in OSRM.
      #expect((legs[0]["steps"] as? [Any])?.isEmpty == true)
      let waypoints = try #require(json["waypoints"] as? [[String: Any]])
      #expect(waypoints.count == 2)
      #expect(waypoints[0]["name"] as? String == "Quai Jean-Charles Rey")
      let start = try #require(waypoints[0]["location"] as? [Double])
      let encoded = try #require(route["geometry"] as? String)
      let shape = try #require(Polyline.decode(encoded, precision: 6))
      #expect(abs(shape[0].longitude - start[0]) < 1e-6 && abs(shape[0].latitude - start[1]) < 1e-6)

      let (_, geo, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.casino);\(Self.larvotto)?geometries=geojson", token: nil)
      let viaRoute = try #require((geo["routes"] as? [[String: Any]])?.first)
      #expect((viaRoute["legs"] as? [Any])?.count == 2)
      let geometry = try #require(viaRoute["geometry"] as? [String: Any])
      #expect(geometry["type"] as? String == "LineString")
      #expect(((geometry["coordinates"] as? [[Double]])?.count ?? 0) > 2)

      let (_, bare, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?overview=false", token: nil)
      #expect((bare["routes"] as? [[String: Any]])?.first?["geometry"] == nil)
    }
  }

  @Test func stepsAndAnnotationsInOSRMsShape() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (status, json, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?steps=true&annotations=true&overview=full", token: nil
      )
      #expect(status == 200)
      let route = try #require((json["routes"] as? [[String: Any]])?.first)
      let leg = try #require((route["legs"] as? [[String: Any]])?.first)
      let steps = try #require(leg["steps"] as? [[String: Any]])
      #expect(steps.count >= 3)
      let types = steps.compactMap { ($0["maneuver"] as? [String: Any])?["type"] as? String }
      #expect(types.first == "depart" && types.last == "arrive")
      #expect(types.dropFirst().dropLast().allSatisfy { $0 != "depart" && $0 != "arrive" })
      // The steps cover the leg, each from its maneuver with the intersections it passes.
      let stepMetres = steps.compactMap { $0["distance"] as? Double }.reduce(0, +)
      #expect(abs(stepMetres - (leg["distance"] as? Double ?? 0)) < 1)
      for step in steps {
        #expect(step["mode"] as? String == "driving")
        #expect(step["driving_side"] as? String == "right")
        #expect(step["name"] is String)
        let maneuver = try #require(step["maneuver"] as? [String: Any])
        let location = try #require(maneuver["location"] as? [Double])
        let encoded = try #require(step["geometry"] as? String)
        let shape = try #require(Polyline.decode(encoded, precision: 5))
        #expect(abs(shape[0].longitude - location[0]) < 1e-5 && abs(shape[0].latitude - location[1]) < 1e-5)
        let intersections = try #require(step["intersections"] as? [[String: Any]])
        #expect(!intersections.isEmpty)
        for intersection in intersections {
          let bearings = try #require(intersection["bearings"] as? [Int])
          #expect(bearings == bearings.sorted())
          #expect((intersection["entry"] as? [Bool])?.count == bearings.count)
        }
      }
      #expect((leg["summary"] as? String)?.isEmpty == false)
      let annotation = try #require(leg["annotation"] as? [String: Any])
      let distances = try #require(annotation["distance"] as? [Double])
      #expect((annotation["nodes"] as? [Int])?.count == distances.count + 1)
      #expect((annotation["duration"] as? [Double])?.count == distances.count)
      #expect((annotation["speed"] as? [Double])?.count == distances.count)
      #expect(abs(distances.reduce(0, +) - (leg["distance"] as? Double ?? 0)) < 2)

      let (_, some, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?annotations=nodes,duration", token: nil)
      let only = try #require(
        ((some["routes"] as? [[String: Any]])?.first?["legs"] as? [[String: Any]])?.first?["annotation"]
          as? [String: Any])
      #expect(Set(only.keys) == ["nodes", "duration"])
    }
  }

  /// Mapbox's `voiceInstructions` and `bannerInstructions` on request, as navigation SDKs read
  /// them: each step's about the maneuver ending it, metres before it, within the step.
  @Test func voiceAndBannerInstructionsOnRequest() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (status, json, _) = try await server.http(
        "GET",
        "/route/v1/driving/\(Self.palace);\(Self.larvotto)?steps=true&voice_instructions=true&banner_instructions=true",
        token: nil)
      #expect(status == 200)
      let leg = try #require(((json["routes"] as? [[String: Any]])?.first?["legs"] as? [[String: Any]])?.first)
      let steps = try #require(leg["steps"] as? [[String: Any]])
      #expect(steps.count >= 3)
      for (i, step) in steps.enumerated() {
        let voice = try #require(step["voiceInstructions"] as? [[String: Any]])
        let banners = try #require(step["bannerInstructions"] as? [[String: Any]])
        guard i + 1 < steps.count else {
          #expect(voice.isEmpty && banners.isEmpty)
          continue
        }
        let length = try #require(step["distance"] as? Double)
        let distances = voice.compactMap { $0["distanceAlongGeometry"] as? Double }
        #expect(!voice.isEmpty && distances.count == voice.count)
        #expect(distances == distances.sorted(by: >) && distances.allSatisfy { $0 <= length + 0.1 })
        #expect(
          voice.allSatisfy { !(($0["announcement"] as? String) ?? "").isEmpty && $0["ssmlAnnouncement"] is String })
        #expect(banners.count == 1)
        let primary = try #require(banners[0]["primary"] as? [String: Any])
        let next = try #require(steps[i + 1]["maneuver"] as? [String: Any])
        #expect(primary["type"] as? String == next["type"] as? String)
        #expect(primary["modifier"] as? String == next["modifier"] as? String)
        #expect(!((primary["text"] as? String) ?? "").isEmpty)
        #expect(((primary["components"] as? [[String: Any]])?.first?["type"] as? String) == "text")
      }
      let last = try #require((steps[steps.count - 2]["voiceInstructions"] as? [[String: Any]])?.last)
      #expect((last["announcement"] as? String)?.hasPrefix("You have arrived at your destination") == true)
      // Without them asked for, the steps are OSRM's alone.
      let (_, plain, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?steps=true", token: nil)
      let plainStep =
        ((((plain["routes"] as? [[String: Any]])?.first?["legs"] as? [[String: Any]])?.first?["steps"])
        as? [[String: Any]])?.first
      #expect(plainStep != nil && plainStep?["voiceInstructions"] == nil && plainStep?["bannerInstructions"] == nil)
      for (query, code) in [
        ("voice_instructions=true", "InvalidOptions"),
        ("steps=true&voice_instructions=true&voice_units=yards", "InvalidQuery"),
      ] {
        let (bad, body, _) = try await server.http(
          "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?\(query)", token: nil)
        #expect(bad == 400 && body["code"] as? String == code, "\(query)")
      }
    }
  }

  @Test func alternativesAndRouteOptions() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (_, json, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?alternatives=3&overview=false", token: nil)
      let routes = try #require(json["routes"] as? [[String: Any]])
      #expect((1...4).contains(routes.count))
      let durations = routes.compactMap { $0["duration"] as? Double }
      #expect(durations == durations.sorted())
      #expect(durations.allSatisfy { $0 <= durations[0] * 1.15 + 1 })

      for option in ["bearings=90,90;", "approaches=curb;curb", "exclude=ferry", "continue_straight=false"] {
        let (status, answer, _) = try await server.http(
          "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?\(option)", token: nil)
        #expect(status == 200, "\(option)")
        #expect(answer["code"] as? String == "Ok", "\(option)")
      }
      let refused: [(String, String)] = [
        ("annotations=colour", "InvalidOptions"),
        ("bearings=90,10", "InvalidOptions"),
        ("bearings=400,10;", "InvalidValue"),
        ("approaches=kerb;curb", "InvalidValue"),
        ("exclude=motorway,toll", "InvalidValue"),
        ("exclude=bridge", "InvalidValue"),
        ("alternatives=-1", "InvalidQuery"),
        ("continue_straight=maybe", "InvalidQuery"),
      ]
      for (option, code) in refused {
        let (status, answer, _) = try await server.http(
          "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?\(option)", token: nil)
        #expect(status == 400, "\(option)")
        #expect(answer["code"] as? String == code, "\(option)")
      }
    }
  }

  @Test func errorsCarryOSRMsCodes() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let cases: [(String, String)] = [
        ("/route/v1/driving/\(Self.palace)", "InvalidOptions"),
        ("/route/v1/driving/\(Self.palace);200,43", "InvalidValue"),
        ("/route/v1/driving/\(Self.palace);\(Self.larvotto)?radiuses=1;1", "NoSegment"),
        ("/route/v1/driving/\(Self.palace);\(Self.larvotto)?overview=bogus", "InvalidQuery"),
        ("/route/v1/driving/\(Self.palace);\(Self.larvotto)?colour=blue", "InvalidQuery"),
        ("/route/v1/driving/not-a-coordinate", "InvalidQuery"),
        ("/route/v2/driving/\(Self.palace);\(Self.larvotto)", "InvalidVersion"),
        ("/route/v1/driving/\(Self.palace);2.35,48.85", "NoSegment"),
        ("/table/v1/driving/\(Self.palace);\(Self.larvotto)?sources=5", "InvalidOptions"),
        ("/trip/v1/driving/\(Self.palace);\(Self.larvotto)", "InvalidService"),
        ("/match/v1/driving/\(Self.palace);\(Self.larvotto)?timestamps=1", "InvalidOptions"),
      ]
      for (path, code) in cases {
        let (status, json, _) = try await server.http("GET", path, token: nil)
        #expect(status == 400, "\(path)")
        #expect(json["code"] as? String == code, "\(path)")
        #expect((json["message"] as? String)?.isEmpty == false, "\(path)")
      }
    }
  }

  @Test func urlsAreReadWithAndWithoutEscapes() throws {
    let plain = try OSRMQuery(
      service: "route", path: "/route/v1/driving/7.42,43.73;7.43,43.74", query: "overview=false&&exclude=motorway")
    #expect(plain.coordinates == [LatLng(latitude: 43.73, longitude: 7.42), LatLng(latitude: 43.74, longitude: 7.43)])
    #expect(plain.values == ["overview": "false", "exclude": "motorway"])
    // Escaped separators and values read as the plain ones; an option without a value is empty.
    let escaped = try OSRMQuery(
      service: "route", path: "/route/v1/driving/7.42%2C43.73%3B7.43,43.74.json",
      query: "overview=fal%73e&exclude=motor%77ay&steps")
    #expect(escaped.coordinates == plain.coordinates)
    #expect(escaped.values == ["overview": "false", "exclude": "motorway", "steps": ""])
    // A value keeps every `=` after the first.
    #expect(
      try OSRMQuery(service: "route", path: "/route/v1/driving/1,2;3,4", query: "hint=a=b").values["hint"] == "a=b")
    let code = { (path: String) -> String? in
      do {
        _ = try OSRMQuery(service: "route", path: path, query: "")
        return nil
      } catch let error as OSRMError {
        return error.code
      } catch {
        return "\(error)"
      }
    }
    #expect(code("/route/v1/driving/7.42,43.73;;7.43,43.74") == "InvalidQuery")
    #expect(code("/route/v1/driving/7.42,43.73,1;7.43,43.74") == "InvalidQuery")
    #expect(code("/route/v1/driving/ 7.42,43.73;7.43,43.74") == "InvalidQuery")
    #expect(code("/route/v1/driving/7.42,93.73;7.43,43.74") == "InvalidValue")
    #expect(code("/route/v2/driving/7.42,43.73;7.43,43.74") == "InvalidVersion")
    #expect(code("/route/v1/7.42,43.73;7.43,43.74") == "InvalidUrl")
    #expect(code("/route/v1/driving/7.42,43.73;7.43,43.74") == nil)
  }

  @Test func tableJSONWritesUnreachableCellsAsNull() throws {
    let snapped = SnappedPoint(location: LatLng(latitude: 43.73, longitude: 7.42), name: "Quai \"A\"", distance: 1.5)
    let table = OSRMTableResponse(
      durations: [[0, 12.5], [nil, 0]], distances: [[0, 1_234], [nil, 0]], sources: [OSRMWaypoint(snapped)],
      destinations: [OSRMWaypoint(snapped), OSRMWaypoint(snapped)])
    let json = try #require(try JSONSerialization.jsonObject(with: table.jsonData()) as? [String: Any])
    #expect(json["code"] as? String == "Ok")
    let durations = try #require(json["durations"] as? [[Any]])
    #expect(durations[0][1] as? Double == 12.5)
    #expect(durations[1][0] is NSNull)
    let distances = try #require(json["distances"] as? [[Any]])
    #expect(distances[0][1] as? Double == 1_234)
    #expect((json["sources"] as? [[String: Any]])?.first?["name"] as? String == "Quai \"A\"")
    #expect((json["destinations"] as? [Any])?.count == 2)
  }

  @Test func stepJSONCarriesTheRoadsLabelsAsOSRMWritesThem() throws {
    let step = { (rotaryName: String) in
      RouteStep(
        maneuver: RouteStep.Maneuver(
          location: LatLng(latitude: 43.73, longitude: 7.42), bearingBefore: 0, bearingAfter: 90, kind: .rotary,
          modifier: .right, exit: 2),
        name: "Leicester Road", ref: "", destinations: "Nice", exits: "12;12A", rotaryName: rotaryName,
        pronunciation: "Lester Road", rotaryPronunciation: "Plass Rond", isFerry: false, drivingSide: .right,
        geometry: [], distance: 10, duration: 1, weight: 1, intersections: [])
    }
    let json = { (step: RouteStep) in
      try #require(
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(OSRMStep(step, format: "polyline")))
          as? [String: Any])
    }
    let named = try json(step("Place Ronde"))
    #expect(named["pronunciation"] as? String == "Lester Road")
    #expect(named["exits"] as? String == "12;12A")
    #expect(named["destinations"] as? String == "Nice")
    #expect(named["rotary_name"] as? String == "Place Ronde")
    #expect(named["rotary_pronunciation"] as? String == "Plass Rond")
    #expect(named["ref"] == nil)
    // As OSRM: a rotary's pronunciation only beside its name.
    let unnamed = try json(step(""))
    #expect(unnamed["rotary_name"] == nil && unnamed["rotary_pronunciation"] == nil)
  }

  @Test func tableMatchesRoutes() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let coordinates = [Self.palace, Self.casino, Self.larvotto]
      let (status, json, _) = try await server.http(
        "GET", "/table/v1/driving/\(coordinates.joined(separator: ";"))?annotations=duration,distance", token: nil)
      #expect(status == 200)
      let durations = try #require(json["durations"] as? [[Double]])
      let distances = try #require(json["distances"] as? [[Double]])
      #expect(durations.count == 3 && durations.allSatisfy { $0.count == 3 })
      #expect((json["sources"] as? [Any])?.count == 3)
      for i in 0..<3 {
        #expect(durations[i][i] == 0)
        for j in 0..<3 where i != j {
          let (_, routeJSON, _) = try await server.http(
            "GET", "/route/v1/driving/\(coordinates[i]);\(coordinates[j])?overview=false", token: nil)
          let route = try #require((routeJSON["routes"] as? [[String: Any]])?.first)
          #expect(abs(durations[i][j] - (route["duration"] as? Double ?? -1)) < 0.11)
          #expect(abs(distances[i][j] - (route["distance"] as? Double ?? -1)) < 0.11)
        }
      }
      let (_, onlyDurations, _) = try await server.http(
        "GET", "/table/v1/driving/\(coordinates.joined(separator: ";"))?sources=0&destinations=1;2", token: nil)
      #expect((onlyDurations["durations"] as? [[Double]])?.map(\.count) == [2])
      #expect(onlyDurations["distances"] == nil)
    }
  }

  @Test func matchAnswersInOSRMsShape() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      // Points 20 m apart along a route the server itself returns.
      let (_, routeJSON, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)?overview=full&geometries=geojson", token: nil)
      let routeGeometry = (routeJSON["routes"] as? [[String: Any]])?.first?["geometry"] as? [String: Any]
      let line = try #require(routeGeometry?["coordinates"] as? [[Double]])
      var trace: [String] = []
      var travelled = 0.0
      for (a, b) in zip(line, line.dropFirst()) where trace.count < 8 {
        travelled += hypot((b[0] - a[0]) * 80_500, (b[1] - a[1]) * 111_195)
        if travelled >= 20 || trace.isEmpty {
          trace.append("\(b[0]),\(b[1] + 0.00003)")  // about 3 m north of the road
          travelled = 0
        }
      }
      let radiuses = Array(repeating: "10", count: trace.count).joined(separator: ";")
      let timestamps = trace.indices.map { String($0 * 3) }.joined(separator: ";")
      let (status, json, _) = try await server.http(
        "GET",
        "/match/v1/driving/\(trace.joined(separator: ";"))?radiuses=\(radiuses)&timestamps=\(timestamps)&overview=full",
        token: nil)
      #expect(status == 200)
      #expect(json["code"] as? String == "Ok")
      let matchings = try #require(json["matchings"] as? [[String: Any]])
      #expect(matchings.count >= 1)
      #expect((matchings[0]["confidence"] as? Double).map { (0...1).contains($0) } == true)
      #expect((matchings[0]["distance"] as? Double ?? 0) > 50)
      let tracepoints = try #require(json["tracepoints"] as? [Any])
      #expect(tracepoints.count == trace.count)
      let first = try #require(tracepoints.first as? [String: Any])
      #expect(first["matchings_index"] as? Int == 0)
      #expect((first["location"] as? [Double])?.count == 2)

      // With steps and annotations, as on /route: each leg from its departure to its arrival.
      let (_, stepped, _) = try await server.http(
        "GET", "/match/v1/driving/\(trace.joined(separator: ";"))?radiuses=\(radiuses)&steps=true&annotations=distance",
        token: nil)
      let legs = try #require((stepped["matchings"] as? [[String: Any]])?.first?["legs"] as? [[String: Any]])
      for leg in legs {
        let types = (leg["steps"] as? [[String: Any]] ?? []).compactMap {
          ($0["maneuver"] as? [String: Any])?["type"] as? String
        }
        #expect(types.first == "depart" && types.last == "arrive")
        #expect((leg["annotation"] as? [String: Any])?["distance"] is [Double])
      }
    }
  }

  @Test func nearestListsRoadsClosestFirst() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let (status, json, _) = try await server.http("GET", "/nearest/v1/driving/\(Self.palace)?number=3", token: nil)
      #expect(status == 200)
      let waypoints = try #require(json["waypoints"] as? [[String: Any]])
      #expect(waypoints.count == 3)
      let distances = waypoints.compactMap { $0["distance"] as? Double }
      #expect(distances == distances.sorted())
    }
  }

  @Test func withoutAGraphTheServicesSaySo() async throws {
    try await Fleetd.with { server in
      let (status, json, _) = try await server.http(
        "GET", "/route/v1/driving/\(Self.palace);\(Self.larvotto)", token: nil)
      #expect(status == 400)
      #expect(json["code"] as? String == "InvalidService")
      #expect((json["message"] as? String)?.contains("--graph") == true)
    }
  }

  /// OSRM's services are answered on the connection's event loop, the rest by the router: on
  /// one connection, requests pipelined in one write are answered in the order they came, a
  /// table's answer (made on the thread pool) included, whichever answers each; and the
  /// connection is kept or closed as HTTP/1.1 and HTTP/1.0 say.
  @Test func answersLeaveInTheOrderTheRequestsCame() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let port = server.httpPort
      @Sendable func get(_ path: String, _ extra: String = "", version: String = "1.1") -> String {
        "GET \(path) HTTP/\(version)\r\nHost: 127.0.0.1\r\n\(extra)\r\n"
      }
      let nearest = "/nearest/v1/driving/\(Self.palace)"
      let pipelined = [
        get(nearest), get("/table/v1/driving/\(Self.palace);\(Self.larvotto)"), get(nearest), get("/healthz"),
        get("/route/v1/driving/\(Self.palace);\(Self.larvotto)?overview=false"), get(nearest, "Connection: close\r\n"),
      ].joined()
      let text = try await onDedicatedThread(named: "pipelined") { () throws -> String? in
        let connection = try RawConnection(port: port)
        _ = connection.send(Array(pipelined.utf8))
        return connection.receiveToEnd()
      }
      let answers = try #require(text, "the connection was not closed after Connection: close")
        .components(separatedBy: "HTTP/1.1 ").dropFirst()
      #expect(answers.count == 6, "\(answers)")
      let shapes = answers.map { answer -> String in
        if answer.contains("\"durations\"") { return "table" }
        if answer.contains("\"routes\"") { return "route" }
        if answer.contains("\"waypoints\"") { return "nearest" }
        return answer.hasSuffix("ok\n") ? "health" : answer
      }
      #expect(shapes == ["nearest", "table", "nearest", "health", "route", "nearest"])
      #expect(answers.allSatisfy { $0.hasPrefix("200 OK") })

      // HTTP/1.0 closes after the answer unless the client asks to keep the connection; HEAD
      // says the length of what GET would send, and sends none of it.
      let old = try await onDedicatedThread(named: "http/1.0") { () throws -> String? in
        let connection = try RawConnection(port: port)
        _ = connection.send(
          Array((get(nearest, "Connection: keep-alive\r\n", version: "1.0") + get(nearest, version: "1.0")).utf8))
        return connection.receiveToEnd()
      }
      let oldAnswers = try #require(old, "HTTP/1.0 without keep-alive left the connection open")
        .components(separatedBy: "HTTP/1.1 ").dropFirst()
      #expect(oldAnswers.count == 2)
      #expect(oldAnswers.first?.contains("Connection: keep-alive") == true)
      #expect(oldAnswers.last?.contains("Connection: close") == true)
      let head = try await onDedicatedThread(named: "head") { () throws -> String? in
        let connection = try RawConnection(port: port)
        _ = connection.send(Array("HEAD \(nearest) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        return connection.receiveToEnd()
      }
      let parts = try #require(head).components(separatedBy: "\r\n\r\n")
      #expect(parts.count == 2 && parts[1].isEmpty, "\(parts)")
      #expect(parts[0].hasPrefix("HTTP/1.1 200") && !parts[0].contains("Content-Length: 0"), "\(parts[0])")
      #expect(parts[0].contains("Connection: close"), "\(parts[0])")
    }
  }
}
