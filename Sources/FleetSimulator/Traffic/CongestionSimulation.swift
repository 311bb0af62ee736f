import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import Foundation

/// Injected congestion, driven and learned: simulated cars cross a stretch of arterial at a
/// fifth of its free-flow speed, reporting their positions every few seconds to trip progress
/// (`ProgressEngine`, which learns the traffic); every customization cycle the learned traffic
/// re-customizes routing, as fleetd's traffic service does. After each cycle, trips across the
/// jam ("probes") are routed and timed as quotes and searches time them, and compared with the
/// simulated truth: the jam at a fifth of its speed, every other road at free flow.
///
/// It owns its engine's current metric while it runs: give it an engine no one else queries.
public struct CongestionSimulation: Sendable {
  /// The jammed stretch: directed road edges (`TurnGraph.directed`) a car drives in order.
  public struct Jam: Sendable {
    public var roads: Set<Int32>
    public var start: LatLng
    public var end: LatLng
    public var metres: Double
    /// How many times its free-flow time the jam takes to drive.
    public var slowdown: Double
    /// The road's name where it has one.
    public var name: String
  }

  /// One cycle's figures over the probes.
  public struct Cycle: Sendable {
    /// 0 before any customization (free flow), then 1, 2, …
    public var index: Int
    /// Probes whose route is as fast, in truth, as the best route there is (within 2 %).
    public var onBestRoute: Int
    /// Metres of the jam the probes' routes drive, over what their free-flow routes drove.
    public var jamShare: Double
    /// ETA error against the truth of the route driven: mean and largest, as shares.
    public var meanETAError: Double
    public var largestETAError: Double
    /// Directed roads slowed in the metric.
    public var slowedRoads: Int
    /// Seconds the customization took (0 at cycle 0).
    public var customizationSeconds: Double
  }

  public struct Settings: Sendable {
    public var slowdown = 5.0
    /// Seconds between two cars entering the jam.
    public var headway = 15.0
    /// Seconds between two reports of a car.
    public var reportInterval = 5.0
    /// Seconds between customizations (fleetd's `--traffic-interval`).
    public var cycle = 60.0
    /// Probe trips across the jam.
    public var probes = 20
    /// The jam is the longest stretch of arterial found, cut to at most this length.
    public var longestJam = 1200.0
    public var shortestJam = 300.0
    public var seed: UInt64 = 1

    public init() {}
  }

  public let routing: RoutingEngine
  public let settings: Settings

  public init(routing: RoutingEngine, settings: Settings = Settings()) {
    self.routing = routing
    self.settings = settings
  }

  /// More than trip progress's quiet zone around a waypoint (`ProgressEngine.Configuration`).
  static let quietZone = ProgressEngine.Configuration().waypointQuietZone + 20

  static let arterial: Set<RoadClass> = [.trunk, .primary, .secondary, .tertiary]

  /// A stretch of arterial a jam can be driven around: runs of arterial roads on free-flow
  /// routes between random points of the network, `shortestJam` to `longestJam` long, the
  /// longest first, taking the first whose ends are joined faster, in truth, by another way.
  /// Nil when no such stretch is found.
  public func findJam() -> Jam? {
    var random = SplitMix64(seed: settings.seed)
    let network = routing.network
    var runs: [(start: LatLng, end: LatLng, metres: Double)] = []
    for _ in 0..<80 {
      let a = network.points[Int(random.next() % UInt64(network.points.count))]
      let b = network.points[Int(random.next() % UInt64(network.points.count))]
      guard
        let leg = try? routing.routes([a.latLng, b.latLng], options: RouteOptions(traffic: .freeFlow)).first?
          .legs.first
      else { continue }
      var runStart = 0
      var metres = 0.0
      for (i, span) in leg.spans.enumerated() {
        guard Self.arterial.contains(network.edges[Int(span.edge)].roadClass) else {
          runStart = i + 1
          metres = 0
          continue
        }
        metres += span.distance
        while metres > settings.longestJam, runStart < i {
          metres -= leg.spans[runStart].distance
          runStart += 1
        }
        let ends =
          i + 1 == leg.spans.count || !Self.arterial.contains(network.edges[Int(leg.spans[i + 1].edge)].roadClass)
        guard ends || metres + leg.spans[i + 1].distance > settings.longestJam,
          (settings.shortestJam...settings.longestJam).contains(metres)
        else { continue }
        let first = leg.spans[runStart]
        runs.append(
          (
            leg.geometry[min(first.firstPoint + 1, first.lastPoint)],
            leg.geometry[max(span.lastPoint - 1, span.firstPoint)], metres
          ))
      }
    }
    let roads = network.edges.count * 2
    defer { routing.customize(.freeFlow) }
    for run in runs.sorted(by: { $0.metres > $1.metres }).prefix(12) {
      // The jam is what a car drives from its start to its end.
      guard
        let drive = try? routing.routes([run.start, run.end], options: RouteOptions(traffic: .freeFlow)).first?
          .legs.first
      else { continue }
      // Roads that end the drive within trip progress's quiet zone around a waypoint are not
      // learned (stopping there is not traffic): they are left out of the jam.
      var before = 0.0
      var jamRoads = Set<Int32>()
      for span in drive.spans {
        if before < drive.distance - Self.quietZone {
          jamRoads.insert(TurnGraph.directed(Int(span.edge), reversed: span.reversed))
        }
        before += span.distance
      }
      let names = drive.spans.map { network.names[Int(network.edges[Int($0.edge)].nameIndex)] }.filter { !$0.isEmpty }
      let jam = Jam(
        roads: jamRoads, start: run.start, end: run.end, metres: jamMetres(drive, roads: jamRoads),
        slowdown: settings.slowdown,
        name: names.first ?? "")
      routing.customize(truth(jam, roads: roads))
      guard let around = try? routing.routes([run.start, run.end], options: RouteOptions()).first?.legs.first,
        jamMetres(around, jam) < jam.metres / 2
      else { continue }
      return jam
    }
    return nil
  }

  /// The simulated truth as slowdowns: the jam's roads at its slowdown.
  func truth(_ jam: Jam, roads: Int) -> RoadSlowdowns {
    var factors = [Float](repeating: 1, count: roads)
    for road in jam.roads { factors[Int(road)] = Float(jam.slowdown) }
    return RoadSlowdowns(factors: factors)
  }

  /// Probe trips: from within 1.5 km of the jam's start to within 1.5 km of its end, whose
  /// free-flow route drives at least half of the jam.
  public func probes(across jam: Jam) -> [(from: LatLng, to: LatLng)] {
    var random = SplitMix64(seed: settings.seed &+ 7)
    var found: [(LatLng, LatLng)] = []
    for _ in 0..<(settings.probes * 20) where found.count < settings.probes {
      let from = Self.offset(jam.start, &random, metres: 1500)
      let to = Self.offset(jam.end, &random, metres: 1500)
      guard let leg = try? routing.routes([from, to], options: RouteOptions(traffic: .freeFlow)).first?.legs.first
      else { continue }
      if jamMetres(leg, jam) >= jam.metres / 2 { found.append((from, to)) }
    }
    return found
  }

  /// Runs `cycles` customization cycles with cars crossing the jam, and measures the probes
  /// before the first and after each.
  public func run(jam: Jam, probes: [(from: LatLng, to: LatLng)], cycles: Int) -> [Cycle] {
    let roads = routing.network.edges.count * 2
    // The best route there is, in truth, for each probe.
    routing.customize(truth(jam, roads: roads))
    let best = probes.map { probe in
      (try? routing.routes([probe.from, probe.to], options: RouteOptions()).first?.legs.first)
        .map { trueSeconds($0, jam) } ?? .infinity
    }
    routing.customize(.freeFlow)
    let freeFlowJam = probes.map { probe in
      (try? routing.routes([probe.from, probe.to], options: RouteOptions(traffic: .freeFlow)).first?.legs.first)
        .map { jamMetres($0, jam) } ?? 0
    }

    let traffic = TrafficModel()
    let progress = ProgressEngine(routing: routing, traffic: traffic)
    let estimator = RoadTravelEstimator(routing: routing)
    guard let path = try? routing.routes([jam.start, jam.end], options: RouteOptions(traffic: .freeFlow)).first
    else { return [] }
    // A car crossing the jam: free flow off it, a fifth of that on it.
    let crossing = SimulatedDrive(route: path) { span, _ in
      jam.roads.contains(TurnGraph.directed(Int(span.edge), reversed: span.reversed)) ? 1 / jam.slowdown : 1
    }
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    var results = [measure(0, probes, best, freeFlowJam, jam, estimator, now: start, customization: 0)]
    // The jam is full of cars when the simulation starts: they entered every `headway` before.
    var nextCar = -Int(crossing.duration / settings.headway)
    var cars: [(name: ResourceName, entered: Double)] = []
    var t = 0.0
    for cycle in 1...max(1, cycles) {
      let cycleEnd = Double(cycle) * settings.cycle
      while t < cycleEnd {
        while Double(nextCar) * settings.headway <= t {
          cars.append(
            (
              ResourceName(provider: "simulation", kind: .vehicles, id: "car-\(nextCar)"),
              Double(nextCar) * settings.headway
            ))
          nextCar += 1
        }
        let now = start.addingTimeInterval(t)
        cars.removeAll { car in
          let elapsed = t - car.entered
          let arrived = elapsed >= crossing.duration
          var vehicle = Vehicle(provider: "simulation", id: car.name.id)
          vehicle.state = .online
          vehicle.waypoints = [
            TripWaypoint(location: TerminalLocation(point: jam.end), tripID: car.name.id, waypointType: .dropOff)
          ]
          var fix = VehicleLocation(location: crossing.position(after: elapsed))
          fix.updateTime = now
          vehicle.lastLocation = progress.locate(car.name, fixes: [fix]).last ?? fix
          _ = progress.progress(of: vehicle, now: now)
          if arrived { progress.forget(car.name) }
          return arrived
        }
        t += settings.reportInterval
      }
      let now = start.addingTimeInterval(t)
      let began = ContinuousClock.now
      routing.customize(traffic.slowdowns(at: now, roads: roads))
      let elapsed = ContinuousClock.now - began
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      results.append(measure(cycle, probes, best, freeFlowJam, jam, estimator, now: now, customization: seconds))
    }
    routing.customize(.freeFlow)
    return results
  }

  func measure(
    _ index: Int, _ probes: [(from: LatLng, to: LatLng)], _ best: [Double], _ freeFlowJam: [Double], _ jam: Jam,
    _ estimator: RoadTravelEstimator, now: Date, customization: Double
  ) -> Cycle {
    var onBest = 0
    var jamDriven = 0.0
    var errors: [Double] = []
    for (i, probe) in probes.enumerated() {
      guard let leg = try? routing.routes([probe.from, probe.to], options: RouteOptions()).first?.legs.first,
        let eta = estimator.legs(through: [probe.from, probe.to], now: now)?.first
      else { continue }
      let actual = trueSeconds(leg, jam)
      if actual <= best[i] * 1.02 { onBest += 1 }
      jamDriven += jamMetres(leg, jam)
      if actual > 0 { errors.append(abs(eta.seconds - actual) / actual) }
    }
    return Cycle(
      index: index, onBestRoute: onBest, jamShare: jamDriven / max(1, freeFlowJam.reduce(0, +)),
      meanETAError: errors.isEmpty ? 0 : errors.reduce(0, +) / Double(errors.count),
      largestETAError: errors.max() ?? 0, slowedRoads: routing.currentSlowdowns.slowedRoads,
      customizationSeconds: customization)
  }

  /// Seconds a leg takes in truth: the jam's roads at their slowdown, every other at free flow.
  func trueSeconds(_ leg: RouteLeg, _ jam: Jam) -> Double {
    leg.spans.reduce(0) { total, span in
      let jammed = jam.roads.contains(TurnGraph.directed(Int(span.edge), reversed: span.reversed))
      return total + span.freeFlowDuration * (jammed ? jam.slowdown : 1)
    }
  }

  func jamMetres(_ leg: RouteLeg, _ jam: Jam) -> Double { jamMetres(leg, roads: jam.roads) }

  func jamMetres(_ leg: RouteLeg, roads: Set<Int32>) -> Double {
    leg.spans.reduce(0) { total, span in
      total + (roads.contains(TurnGraph.directed(Int(span.edge), reversed: span.reversed)) ? span.distance : 0)
    }
  }

  static func offset(_ point: LatLng, _ random: inout SplitMix64, metres: Double) -> LatLng {
    let north = (2 * random.nextUnit() - 1) * metres
    let east = (2 * random.nextUnit() - 1) * metres
    return LatLng(
      latitude: point.latitude + north / 111_320,
      longitude: point.longitude + east / (111_320 * cos(point.latitude * .pi / 180)))
  }
}
