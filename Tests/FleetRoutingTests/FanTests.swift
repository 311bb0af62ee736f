import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting

/// Many sources to one target in one query (`RoutingEngine.fan`): the same drives as one
/// exact search per pair.
@Suite("Many-to-one drives")
struct FanTests {
  /// A small deterministic generator, so that failures reproduce.
  struct Seeded {
    var state: UInt64
    mutating func next() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
  }

  /// The exact drive (plain Dijkstra) from a source's position, leaving on any road at its point
  /// when that is a junction, as the fan and routes leave.
  static func exactDrive(
    _ engine: RoutingEngine, from source: LatLng, _ position: RoadPosition, to target: RoadPosition
  )
    -> FoundPath?
  {
    engine.candidates([position], [source], options: RouteOptions())[0]
      .compactMap { engine.searchExactly(from: $0, to: target) }.min { $0.weight < $1.weight }
  }

  @Test func monacoFansAgreeWithOneExactSearchPerVehicle() async throws {
    let engine = try await MonacoRoutingTests.engine()
    var random = Seeded(state: 42)
    func point() -> LatLng {
      LatLng(latitude: 43.7245 + random.next() * 0.027, longitude: 7.4095 + random.next() * 0.0330)
    }
    let sources = (0..<300).map { _ in point() }
    let targets = (0..<6).map { _ in point() }
    let anchors = sources.map { try? engine.anchor($0) }
    let checked = try await onDedicatedThread(named: "fan-vs-dijkstra") {
      var checked = 0
      for target in targets {
        let fan = engine.fan(from: anchors, to: try engine.anchor(target))
        for (i, source) in sources.enumerated() {
          let positions = try engine.positions([source, target])
          let exact = Self.exactDrive(engine, from: source, positions[0], to: positions[1])
          #expect((fan.best[i] == nil) == (exact == nil), "\(source) → \(target)")
          guard let found = fan.best[i], let exact else { continue }
          #expect(abs(found.weight - exact.weight) < 1e-6, "\(source) → \(target)")
          // The path behind the estimate is a real drive with the same totals.
          let leg = try #require(fan.leg(i))
          #expect(abs(leg.duration - found.duration) < 1e-6 && abs(leg.distance - found.distance) < 1e-6)
          #expect(leg.geometry.first == positions[0].point.latLng && leg.geometry.last == positions[1].point.latLng)
          checked += 1
        }
      }
      return checked
    }
    #expect(checked > 1500)
  }

  /// With sources on most of the graph the fan sweeps all of it instead of finding the part
  /// above them: the same drives.
  @Test func aFanOverMostOfTheGraphSweepsItAllAndAgrees() async throws {
    let engine = try await MonacoRoutingTests.engine()
    var random = Seeded(state: 9)
    let sources = (0..<engine.customized.cch.rank.count / 3).map { _ in
      LatLng(latitude: 43.7245 + random.next() * 0.027, longitude: 7.4095 + random.next() * 0.0330)
    }
    let target = LatLng(latitude: 43.7384, longitude: 7.4246)
    let anchors = sources.map { try? engine.anchor($0) }
    let compared = try await onDedicatedThread(named: "full-fan-vs-dijkstra") {
      let fan = engine.fan(from: anchors, to: try engine.anchor(target))
      var compared = 0
      for i in stride(from: 0, to: sources.count, by: 7) {
        let positions = try engine.positions([sources[i], target])
        let exact = Self.exactDrive(engine, from: sources[i], positions[0], to: positions[1])
        #expect((fan.best[i] == nil) == (exact == nil), "\(sources[i])")
        guard let found = fan.best[i], let exact else { continue }
        #expect(abs(found.weight - exact.weight) < 1e-6, "\(sources[i])")
        #expect(abs((fan.leg(i)?.duration ?? -1) - found.duration) < 1e-6)
        compared += 1
      }
      return compared
    }
    #expect(compared > 200)
  }

  @Test func onTheTargetsOwnOneWayRoadAVehiclePastItGoesAroundTheBlock() throws {
    var map = MapFixture(
      """
      a 1 b 2 c


      e       d
      """)
    map.way("abc", ["highway": "residential", "oneway": "yes"])
    map.way("cde", ["highway": "residential"])
    map.way("ea", ["highway": "residential"])
    let engine = try map.engine()
    let target = try engine.anchor(map.point("2"))
    let fan = engine.fan(from: [try engine.anchor(map.point("1")), try engine.anchor(map.point("2")), nil], to: target)
    // 1 is before 2 on the one-way: 100 m straight on.
    #expect(abs(try #require(fan.estimate(0)).distance - 100) < 1)
    #expect(fan.estimate(2) == nil)
    // The vehicle standing at the target is there.
    #expect(try #require(fan.estimate(1)).distance < 1)
    // From just past the target: around the block (c → d → e → a → b → 2).
    let past = try engine.anchor(
      LatLng(latitude: map.point("2").latitude, longitude: map.point("c").longitude - 0.0001))
    let around = engine.fan(from: [past], to: target)
    let loop = try #require(around.estimate(0))
    let exact = try engine.route([past.snapped, map.point("2")])
    #expect(abs(loop.distance - exact.distance) < 1e-6 && loop.distance > 300)
    #expect(try #require(around.leg(0)).geometry.count > 4)
  }

  /// A pickup on a junction is reached on whichever road meets there, as a route reaches it (OSRM
  /// keeps every road at a junction as a candidate), not only on the road indexed first: here a
  /// one-way loop that ends at the junction, which a car coming along the street drove round to
  /// arrive on (242 m instead of 100).
  @Test(arguments: [true, false])
  func aTargetOnAJunctionIsReachedOnWhicheverRoadIsFastest(loopFirst: Bool) throws {
    var map = MapFixture(
      """
            d

      a   j   b   e
      """)
    func loop() {
      map.way("bd", ["highway": "residential", "oneway": "yes", "name": "Loop"])
      map.way("dj", ["highway": "residential", "oneway": "yes", "name": "Loop"])
    }
    if loopFirst { loop() }
    map.way("ajbe", ["highway": "residential", "name": "Street"])
    if !loopFirst { loop() }
    let engine = try map.engine()
    if loopFirst { #expect(try engine.nearest(map.point("j"))[0].name == "Loop") }
    let fan = engine.fan(from: [try engine.anchor(map.point("a"))], to: try engine.anchor(map.point("j")))
    let estimate = try #require(fan.estimate(0))
    #expect(abs(estimate.distance - 100) < 3)
    #expect(abs(estimate.distance - (try engine.route([map.point("a"), map.point("j")]).distance)) < 1e-6)
    let leg = try #require(fan.leg(0))
    #expect(abs(leg.distance - estimate.distance) < 1e-6 && abs(leg.duration - estimate.duration) < 1e-6)
    #expect(leg.geometry.last.map { $0.distance(to: map.point("j")) < 1 } == true)
  }

  /// A car standing on a junction leaves on whichever road meets there, as a route from there
  /// does, not only on the road indexed first: here a one-way loop that starts at the junction
  /// (`RouteOptionsTests.junction`), round which the car would have driven to rejoin the street.
  @Test(arguments: [true, false])
  func aCarOnAJunctionLeavesOnWhicheverRoadIsFastest(loopFirst: Bool) throws {
    let map = RouteOptionsTests.junction(loopFirst: loopFirst)
    let engine = try map.engine()
    if loopFirst { #expect(try engine.nearest(map.point("j"))[0].name == "Loop") }
    let car = try engine.anchor(map.point("j"))
    for (target, metres) in [(Character("e"), 200.0), (Character("b"), 100.0)] {
      let fan = engine.fan(from: [car], to: try engine.anchor(map.point(target)))
      let estimate = try #require(fan.estimate(0))
      let route = try engine.route([map.point("j"), map.point(target)])
      #expect(abs(estimate.distance - metres) < 3, "to \(target)")
      #expect(abs(estimate.distance - route.distance) < 1e-6 && abs(estimate.duration - route.duration) < 1e-6)
      let leg = try #require(fan.leg(0))
      #expect(abs(leg.distance - estimate.distance) < 1e-6 && abs(leg.duration - estimate.duration) < 1e-6)
      #expect(leg.geometry.first.map { $0.distance(to: map.point("j")) < 1 } == true)
    }
  }

  /// Upward searches (the fan's backward one, the matrix's) walk the start's path up the
  /// elimination tree instead of keeping a queue: every node the queue's search reaches has the same cost, seconds, metres
  /// and edge, and no other node is reached.
  @Test func theTreeWalkLabelsWhatTheQueuedSearchLabels() async throws {
    let engine = try await MonacoRoutingTests.engine()
    var random = Seeded(state: 7)
    let search = CCHSearch(customized: engine.customized, network: engine.network, graph: engine.turns)
    var compared = 0
    for _ in 0..<40 {
      let point = LatLng(latitude: 43.7245 + random.next() * 0.027, longitude: 7.4095 + random.next() * 0.0330)
      let anchor = try engine.anchor(point)
      for forward in [false, true] {
        let starts =
          forward
          ? endpoints(of: anchor.nearest, in: engine.network, asSource: true)
          : search.backwardStarts(engine.targetEndpoints(of: anchor.nearest, slowdowns: .freeFlow))
        var queued = SearchLabels(count: engine.customized.cch.rank.count)
        var walked = queued
        search.upwardByQueue(from: starts, forward: forward, into: &queued)
        search.upwardByTree(from: starts, forward: forward, into: &walked)
        for node in 0..<queued.cost.count {
          #expect(queued.cost[node] == walked.cost[node])
          guard queued.cost[node] < .infinity else { continue }
          #expect(queued.duration[node] == walked.duration[node] && queued.distance[node] == walked.distance[node])
          #expect(queued.parent[node] == walked.parent[node])
          compared += 1
        }
      }
    }
    #expect(compared > 2_000)
  }

  /// A fan hands its label arrays back to the engine's pool reset in place. Had it kept its own
  /// reference while the pool reset them, every search would copy graph-sized arrays (it did:
  /// a third of SearchVehicles' time on a metro's graph).
  @Test func aFanGivesItsLabelsBackResetWithoutCopyingThem() throws {
    var map = MapFixture(
      """
      a 1 b 2 c


      e       d
      """)
    map.way("abc", ["highway": "residential"])
    map.way("cde", ["highway": "residential"])
    map.way("ea", ["highway": "residential"])
    let engine = try map.engine()
    func pooled() -> [(cost: UnsafeRawPointer?, parent: UnsafeRawPointer?, reset: Bool)] {
      engine.labels.free.withLock { all in
        all.map { labels in
          (
            labels.cost.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) },
            labels.parent.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) },
            labels.touched.isEmpty && labels.cost.allSatisfy { $0 == .infinity }
              && labels.parent.allSatisfy { $0 == -2 }
          )
        }
      }
    }
    let target = try engine.anchor(map.point("2"))
    let sources = [try engine.anchor(map.point("1")), try engine.anchor(map.point("d"))]
    do {
      let fan = engine.fan(from: sources, to: target)
      _ = try #require(fan.estimate(0))
      _ = try #require(fan.estimate(1))
    }
    let first = pooled()
    #expect(first.count == 2)
    #expect(first.allSatisfy { $0.reset })
    // The next fan takes the same arrays and gives the same arrays back.
    do {
      let fan = engine.fan(from: sources, to: target)
      _ = try #require(fan.estimate(0))
      _ = try #require(fan.estimate(1))
    }
    let second = pooled()
    #expect(second.allSatisfy { $0.reset })
    #expect(Set(second.map(\.cost)) == Set(first.map(\.cost)))
    #expect(Set(second.map(\.parent)) == Set(first.map(\.parent)))
  }
}

/// The legs estimates time (`RoutingEngine.drivenLegs`, `RoadFan.leg(_:geometry: false)`) are
/// the route's legs without their shape: the same totals and the same roads, each span with the
/// same metres and seconds.
@Suite("Driven legs")
struct DrivenLegTests {
  @Test func drivenLegsAreTheRoutesLegsWithoutTheirShape() async throws {
    let engine = try await MonacoRoutingTests.engine()
    let stops = [
      LatLng(latitude: 43.7384, longitude: 7.4246), LatLng(latitude: 43.7312, longitude: 7.4197),
      LatLng(latitude: 43.7450, longitude: 7.4290),
    ]
    let route = try engine.route(stops)
    let driven = try engine.drivenLegs(stops)
    #expect(driven.count == route.legs.count)
    for (leg, full) in zip(driven, route.legs) {
      #expect(leg.geometry.isEmpty && leg.nodes.isEmpty)
      #expect(leg.duration == full.duration && leg.distance == full.distance)
      #expect(leg.spans.count == full.spans.count && !leg.spans.isEmpty)
      for (span, fullSpan) in zip(leg.spans, full.spans) {
        #expect(span.edge == fullSpan.edge && span.reversed == fullSpan.reversed)
        #expect(abs(span.distance - fullSpan.distance) < 1e-9 && abs(span.duration - fullSpan.duration) < 1e-9)
        #expect(abs(span.weight - fullSpan.weight) < 1e-9)
      }
    }
    let fan = engine.fan(from: [try engine.anchor(stops[1])], to: try engine.anchor(stops[0]))
    let withShape = try #require(fan.leg(0))
    let without = try #require(fan.leg(0, geometry: false))
    #expect(without.geometry.isEmpty && !withShape.geometry.isEmpty)
    #expect(without.spans.map(\.edge) == withShape.spans.map(\.edge))
    #expect(without.duration == withShape.duration)
  }
}

extension CCHSearch {
  /// The upward search with a queue, as in plain CH: what the tree walk must agree with.
  func upwardByQueue(from starts: [Endpoint], forward: Bool, into labels: inout SearchLabels) {
    var heap = MinHeap()
    let cch = customized.cch
    for s in starts {
      let start = cch.rank[Int(s.directed)]
      guard s.weight < labels.cost[Int(start)] else { continue }
      labels.set(start, s.weight, s.duration, s.distance, parent: s.startMark)
      heap.push(s.weight, start)
    }
    while !heap.isEmpty {
      let (key, v) = heap.pop()
      if key > labels.cost[Int(v)] { continue }
      for e in cch.upEdges(v) {
        let w = cch.upTarget[e]
        let candidate = key + (forward ? customized.up[e] : customized.down[e])
        if candidate < labels.cost[Int(w)] {
          labels.set(
            w, candidate, labels.duration[Int(v)] + (forward ? customized.upDuration[e] : customized.downDuration[e]),
            labels.distance[Int(v)] + (forward ? customized.upDistance[e] : customized.downDistance[e]),
            parent: Int32(e))
          heap.push(candidate, w)
        }
      }
    }
  }
}
