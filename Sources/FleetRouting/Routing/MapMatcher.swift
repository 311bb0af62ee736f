import FleetGeometry
import Foundation

/// A GPS trace matched to roads.
public struct MatchedTrace: Sendable, Hashable {
  /// Stretches of the trace matched as one drive each; a gap the roads cannot explain splits them.
  public var matchings: [Matching]
  /// Per trace point: where it was matched, or nil when it was left out (no road near it).
  public var tracepoints: [MatchedPoint?]
}

public struct MatchedPoint: Sendable, Hashable {
  public var snapped: SnappedPoint
  public var matchingIndex: Int
  /// Index among the matching's own points.
  public var waypointIndex: Int
}

public struct Matching: Sendable, Hashable {
  /// 0…1: the geometric mean of the per-point likelihoods of the chosen roads and transitions.
  public var confidence: Double
  public var distance: Double
  public var duration: Double
  public var geometry: [LatLng]
  /// The roads driven, in order, each named once per stretch (empty names for unnamed roads).
  public var roads: [String]
  /// One leg between each pair of consecutive matched points.
  public var legs: [RouteLeg]
}

/// Map matching with a hidden Markov model (Newson & Krumm 2009): the hidden states are road
/// positions near each GPS point; a state is likelier the closer the road is to the point
/// (Gaussian in the distance, deviation `gpsAccuracy`), and a step between two states is likelier
/// the closer the driving distance between them is to the straight-line distance between the
/// two GPS points (exponential in the difference, scale `beta`). Viterbi picks the best sequence.
public struct MapMatchingOptions: Sendable, Hashable {
  /// GPS standard deviation in metres, when a point gives none (OSRM's default).
  public var gpsAccuracy: Double = 5
  /// Scale of the transition model in metres.
  public var beta: Double = 10
  /// Road positions considered per point.
  public var candidates: Int = 6
  /// A step whose driving distance exceeds this multiple of the straight-line distance (plus
  /// 200 m) is impossible, and splits the trace.
  public var maximumDetour: Double = 4
  /// Which speeds the matched route is timed with.
  public var traffic: TrafficTiming = .current

  public init() {}
}

extension RoutingEngine {
  /// Matches `trace` to the roads. `accuracies` (metres, one per point, nil for the default)
  /// widens or narrows each point's search.
  public func match(
    _ trace: [LatLng], accuracies: [Double?]? = nil, options: MapMatchingOptions = MapMatchingOptions()
  ) throws(RoutingError) -> MatchedTrace {
    guard trace.count >= 2 else { throw RoutingError(.invalidQuery, "a trace needs at least two coordinates") }
    if let accuracies, accuracies.count != trace.count {
      throw RoutingError(.invalidQuery, "give one accuracy per coordinate (\(trace.count)), not \(accuracies.count)")
    }
    for (i, point) in trace.enumerated() { try validate(point, "coordinate \(i)") }
    let metric = metric(options.traffic)

    // Candidates: the nearest roads within a few standard deviations.
    let sigmas = trace.indices.map { accuracies?[$0] ?? options.gpsAccuracy }
    let candidates = trace.indices.map { i -> [RoadPosition] in
      let point = FixedCoordinate(latitude: trace[i].latitude, longitude: trace[i].longitude)
      return index.nearest(
        point, in: network, count: options.candidates, radius: max(4 * sigmas[i], 25),
        accept: { [network] edge in network.edges[edge].forward != nil || network.edges[edge].backward != nil })
    }

    // Viterbi, split where no transition is possible.
    var segments: [[(point: Int, candidate: Int)]] = []
    var scores: [Double] = []
    var previous: (point: Int, score: [Double], back: [[Int]], points: [Int])?
    func close(_ state: (point: Int, score: [Double], back: [[Int]], points: [Int])) {
      guard state.points.count >= 2, let best = state.score.indices.max(by: { state.score[$0] < state.score[$1] })
      else {
        return
      }
      var chosen = [best]
      for step in stride(from: state.back.count - 1, through: 1, by: -1) {
        chosen.append(state.back[step][chosen.last!])
      }
      segments.append(zip(state.points, chosen.reversed()).map { ($0, $1) })
      scores.append(state.score[best])
    }
    for i in trace.indices {
      let emission = candidates[i].map { -0.5 * pow($0.distance / sigmas[i], 2) }
      guard !candidates[i].isEmpty else { continue }
      guard let state = previous else {
        previous = (i, emission, [[]], [i])
        continue
      }
      let straight = Geo.distance(
        trace[state.point].latitude, trace[state.point].longitude, trace[i].latitude, trace[i].longitude)
      let drives = transitions(from: candidates[state.point], to: candidates[i], metric: metric)
      var score = [Double](repeating: -.infinity, count: candidates[i].count)
      var back = [Int](repeating: -1, count: candidates[i].count)
      for (a, row) in drives.enumerated() where state.score[a] > -.infinity {
        for (b, distance) in row.enumerated() {
          guard let distance, distance <= options.maximumDetour * straight + 200 else { continue }
          let value = state.score[a] - abs(distance - straight) / options.beta + emission[b]
          if value > score[b] {
            score[b] = value
            back[b] = a
          }
        }
      }
      if score.allSatisfy({ $0 == -.infinity }) {
        close(state)
        previous = (i, emission, [[]], [i])
      } else {
        previous = (i, score, state.back + [back], state.points + [i])
      }
    }
    if let state = previous { close(state) }
    guard !segments.isEmpty else { throw RoutingError(.noMatch, "no part of the trace could be matched to roads") }

    var tracepoints = [MatchedPoint?](repeating: nil, count: trace.count)
    var matchings: [Matching] = []
    for (m, segment) in segments.enumerated() {
      let positions = segment.map { candidates[$0.point][$0.candidate] }
      var legs: [RouteLeg] = []
      var roads: [String] = []
      for (a, b) in zip(positions, positions.dropFirst()) {
        guard let path = search(from: a, to: b, metric: metric) else { continue }
        for directed in path.directedEdges {
          let name = network.names[Int(network.edges[TurnGraph.edge(of: directed)].nameIndex)]
          if roads.last != name { roads.append(name) }
        }
        legs.append(leg(of: path, from: a, to: b, metric: metric))
      }
      matchings.append(
        Matching(
          confidence: exp(scores[m] / Double(2 * segment.count - 1)), distance: legs.reduce(0) { $0 + $1.distance },
          duration: legs.reduce(0) { $0 + $1.duration }, geometry: joinedGeometry(legs), roads: roads, legs: legs))
      for (w, (point, _)) in segment.enumerated() {
        tracepoints[point] = MatchedPoint(snapped: snapped(positions[w]), matchingIndex: m, waypointIndex: w)
      }
    }
    return MatchedTrace(matchings: matchings, tracepoints: tracepoints)
  }

  /// Driving distances between every candidate of one point and every candidate of the next.
  func transitions(from: [RoadPosition], to: [RoadPosition], metric: CustomizedCCH) -> [[Double?]] {
    let slowdowns = metric.slowdowns
    return CCHSearch(customized: metric, network: network, graph: turns).matrix(
      sources: from.map { endpoints(of: $0, in: network, asSource: true, slowdowns: slowdowns) },
      targets: to.map { targetEndpoints(of: $0, slowdowns: slowdowns) },
      direct: { directPath(from: from[$0], to: to[$1], slowdowns: slowdowns) }, pool: labels
    ).map { $0.map { $0?.distance } }
  }
}
