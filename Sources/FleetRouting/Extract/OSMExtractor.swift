/// Builds the drivable `RoadNetwork` from an OSM PBF file in two streaming passes: ways and
/// relations first (what is drivable, which nodes it uses, turn restrictions), then only the
/// nodes those ways use. Memory follows the road network, not the file.
public struct OSMExtractor: Sendable {
  public var profile: CarProfile

  public init(profile: CarProfile = CarProfile()) { self.profile = profile }

  struct DrivableWay {
    var id: Int64
    var nodes: [Int64]
    var attributes: WayAttributes
  }

  struct Restriction {
    var fromWay: Int64
    /// Through a junction (a node) or along a road (a way).
    var viaNode: Int64?
    var viaWays: [Int64] = []
    var toWay: Int64
    var isOnly: Bool
  }

  /// What the extraction saw, for logs and the build report.
  public struct Summary: Sendable {
    public var drivableWays = 0
    public var restrictions = 0
    public var unsupportedRestrictions = 0
    public var missingNodes = 0
  }

  public func extract(path: String) throws -> (RoadNetwork, Summary) {
    try extract(from: PBFReader(path: path))
  }

  public func extract(from reader: some OSMElementSource) throws -> (RoadNetwork, Summary) {
    var summary = Summary()
    var ways: [DrivableWay] = []
    var uses: [Int64: UInt8] = [:]
    var restrictions: [Restriction] = []

    try reader.read(
      [.ways, .relations],
      node: { _ in },
      way: { way in
        guard way.nodeIDs.count >= 2, let attributes = profile.way(way.tags) else { return }
        ways.append(DrivableWay(id: way.id, nodes: way.nodeIDs, attributes: attributes))
        for node in way.nodeIDs { uses[node, default: 0] &+= 1 }
        // Ends of ways are junctions even when nothing else meets them there.
        uses[way.nodeIDs.first!, default: 0] &+= 1
        uses[way.nodeIDs.last!, default: 0] &+= 1
      },
      relation: { relation in
        switch restriction(relation) {
        case .some(.some(let r)): restrictions.append(r)
        case .some(.none): summary.unsupportedRestrictions += 1
        case .none: break
        }
      })
    summary.drivableWays = ways.count

    var coordinates: [Int64: FixedCoordinate] = [:]
    coordinates.reserveCapacity(uses.count)
    var nodeAttributes: [Int64: NodeAttributes] = [:]
    try reader.read(
      [.nodes],
      node: { node in
        guard uses[node.id] != nil else { return }
        coordinates[node.id] = FixedCoordinate(latitude: node.latitude, longitude: node.longitude)
        let attributes = profile.node(node.tags)
        if !attributes.isPlain { nodeAttributes[node.id] = attributes }
      }, way: { _ in }, relation: { _ in })

    let isJunctionNode = { (id: Int64) in (uses[id] ?? 0) >= 2 || nodeAttributes[id] != nil }
    var roadsBetweenJunctions: [RoadBetweenJunctions] = []
    for way in ways {
      roadsBetweenJunctions += Self.roadsBetweenJunctions(
        way.nodes, isJunction: isJunctionNode, isPresent: { coordinates[$0] != nil })
    }
    let keptByCompression = Self.nodesKeptByCompression(roadsBetweenJunctions)

    var network = RoadNetwork()
    var pointIndex: [Int64: Int32] = [:]
    var junctionIndex: [Int64: Int32] = [:]
    let point = { (id: Int64) -> Int32 in
      if let index = pointIndex[id] { return index }
      let index = Int32(network.points.count)
      network.points.append(coordinates[id]!)
      network.pointNodes.append(id)
      pointIndex[id] = index
      return index
    }
    let junction = { (id: Int64) -> Int32 in
      if let index = junctionIndex[id] { return index }
      let index = Int32(network.junctions.count)
      let location = point(id)  // Not inside the append: both touch `network`.
      network.junctions.append(location)
      let attributes = nodeAttributes[id] ?? NodeAttributes()
      network.blockedJunctions.append(attributes.blocks)
      for obstacle in attributes.obstacles where obstacle.direction == .any {
        network.obstacles.append(Obstacle(junction: index, kind: obstacle.kind, seconds: Float(obstacle.seconds)))
      }
      junctionIndex[id] = index
      return index
    }
    var nameIndex: [String: Int32] = ["": 0]
    let name = { (label: String) -> Int32 in
      if let known = nameIndex[label] { return known }
      let index = Int32(network.names.count)
      network.names.append(label)
      nameIndex[label] = index
      return index
    }
    var laneIndex: [[LaneIndications]: UInt32] = [:]
    let lanes = { (value: String?) -> (index: UInt32, count: Int) in
      guard let value, !value.isEmpty else { return (0, 0) }
      let description = LaneIndications.description(value)
      if let known = laneIndex[description] { return (known, description.count) }
      let index = UInt32(network.turnLanes.count)
      network.turnLanes.append(description)
      laneIndex[description] = index
      return (index, description.count)
    }
    let sides = DrivingSideMap.world

    for way in ways {
      let attributes = way.attributes
      let middle = way.nodes[way.nodes.count / 2]
      let side =
        attributes.drivingSide
        ?? coordinates[middle].map { sides.side(latitude: $0.latitude, longitude: $0.longitude) } ?? .right
      var flags: RoadFlags = []
      if attributes.isRoundabout { flags.insert(.roundabout) }
      if attributes.isCircular { flags.insert(.circular) }
      if side == .left { flags.insert(.leftHandDriving) }
      if attributes.isStartpoint { flags.insert(.startpoint) }
      if attributes.isFerry { flags.insert(.ferry) }
      let names = (
        name: name(attributes.name), ref: name(attributes.ref), destinations: name(attributes.destinations),
        exits: name(attributes.exits), pronunciation: name(attributes.pronunciation)
      )
      // A timed way (a ferry's `duration`) shares its time out equally over its segments.
      let turnLanes = (forward: lanes(attributes.turnLanesForward), backward: lanes(attributes.turnLanesBackward))
      // As OSRM: a way has at least as many lanes as its turn lanes say.
      let laneCount = max(attributes.lanes, turnLanes.forward.count + turnLanes.backward.count)
      let secondsPerSegment = attributes.duration.map { $0 / Double(way.nodes.count - 1) }
      // A way clipped at the extract's border refers to nodes the file lacks: split it there.
      var piece: [Int64] = []
      let flush = {
        defer { piece = [] }
        guard piece.count >= 2 else { return }
        var start = 0
        for i in 1..<piece.count {
          let id = piece[i]
          let isJunction = isJunctionNode(id) || keptByCompression.contains(id) || i == piece.count - 1
          guard isJunction else { continue }
          let from = junction(piece[start])
          let to = junction(id)
          let geometryStart = Int32(network.geometry.count)
          var length = 0.0
          var segments: [Double] = []
          for j in start...i {
            let shapePoint = point(piece[j])
            network.geometry.append(shapePoint)
            if j > start {
              segments.append(Geo.distance(coordinates[piece[j - 1]]!, coordinates[piece[j]]!))
              length += segments.last!
            }
          }
          let cost = { (direction: WayDirection?) -> EdgeCost? in
            direction.map {
              let duration: Double
              let weight: Double
              if let secondsPerSegment {
                duration = Self.timed(segments.count, secondsPerSegment)
                weight = Self.timed(segments.count, secondsPerSegment * $0.speed / $0.rate)
              } else {
                duration = Self.seconds(segments, kmh: $0.speed)
                weight = Self.seconds(segments, kmh: $0.rate)
              }
              return EdgeCost(duration: duration, weight: weight, restricted: $0.restricted, classes: $0.classes)
            }
          }
          let edge = Int32(network.edges.count)
          network.edges.append(
            RoadEdge(
              from: from, to: to, geometryStart: geometryStart, geometryEnd: Int32(network.geometry.count),
              length: length, forward: cost(attributes.forward), backward: cost(attributes.backward),
              nameIndex: names.name, refIndex: names.ref, destinationsIndex: names.destinations,
              exitsIndex: names.exits, pronunciationIndex: names.pronunciation, wayID: way.id, flags: flags,
              roadClass: attributes.roadClass,
              lanes: UInt8(clamping: laneCount), turnLanesForward: turnLanes.forward.index,
              turnLanesBackward: turnLanes.backward.index))
          // Signs facing one way of this way: forward ones met arriving at `to`, backward ones
          // arriving at `from` against the way's direction.
          for obstacle in nodeAttributes[id]?.obstacles ?? [] where obstacle.direction == .forward {
            network.obstacles.append(
              Obstacle(
                junction: to, kind: obstacle.kind, seconds: Float(obstacle.seconds),
                arrivingBy: TurnGraph.directed(Int(edge), reversed: false)))
          }
          for obstacle in nodeAttributes[piece[start]]?.obstacles ?? [] where obstacle.direction == .backward {
            network.obstacles.append(
              Obstacle(
                junction: from, kind: obstacle.kind, seconds: Float(obstacle.seconds),
                arrivingBy: TurnGraph.directed(Int(edge), reversed: true)))
          }
          start = i
        }
      }
      for id in way.nodes {
        if coordinates[id] != nil {
          piece.append(id)
        } else {
          summary.missingNodes += 1
          flush()
        }
      }
      flush()
    }

    var edgesOfWay: [Int64: [Int32]] = [:]
    for (i, edge) in network.edges.enumerated() { edgesOfWay[edge.wayID, default: []].append(Int32(i)) }
    for r in restrictions {
      if let viaNode = r.viaNode {
        guard let via = junctionIndex[viaNode] else { continue }
        network.restrictions.append(TurnRestriction(via: via, fromWay: r.fromWay, toWay: r.toWay, isOnly: r.isOnly))
      } else if let chain = Self.viaChain(r, network: network, edgesOfWay: edgesOfWay) {
        network.wayRestrictions.append(
          WayRestriction(fromWay: r.fromWay, start: chain.start, via: chain.edges, toWay: r.toWay, isOnly: r.isOnly))
      } else {
        summary.unsupportedRestrictions += 1
      }
    }
    summary.restrictions = network.restrictions.count + network.wayRestrictions.count
    return (network, summary)
  }

  /// A way's stretch from one junction node to the next, and the nodes between.
  struct RoadBetweenJunctions {
    var from: Int64
    var to: Int64
    var between: [Int64]
  }

  /// A way cut into its stretches between junction nodes (split where the file lacks a node).
  static func roadsBetweenJunctions(
    _ nodes: [Int64], isJunction: (Int64) -> Bool, isPresent: (Int64) -> Bool
  ) -> [RoadBetweenJunctions] {
    var roads: [RoadBetweenJunctions] = []
    var current: RoadBetweenJunctions?
    for (i, id) in nodes.enumerated() {
      guard isPresent(id) else {
        current = nil
        continue
      }
      guard var road = current else {
        current = RoadBetweenJunctions(from: id, to: id, between: [])
        continue
      }
      if isJunction(id) || i == nodes.count - 1 || !isPresent(nodes[i + 1]) {
        road.to = id
        roads.append(road)
        current = RoadBetweenJunctions(from: id, to: id, between: [])
      } else {
        road.between.append(id)
        current = road
      }
    }
    return roads
  }

  /// The nodes OSRM's graph compression keeps although only one road passes them
  /// (`GraphCompressor`): it never joins two roads into one between nodes that a road joins
  /// already, and it compresses nodes in the order of their ids. Of the roads between the same
  /// two junctions, the one whose last node to compress comes first becomes one edge, and every
  /// other keeps that last node, its highest (all of them when a road joins the two with no node
  /// between); a road that loops back to the junction it left keeps its two highest, a triangle.
  /// Only junctions where three roads or more meet are read so: where two ways meet end to end,
  /// whether OSRM compresses the node depends on the ways' attributes, and the roads through it
  /// are left as they are.
  static func nodesKeptByCompression(_ roads: [RoadBetweenJunctions]) -> Set<Int64> {
    var ends: [Int64: Int] = [:]
    for road in roads {
      ends[road.from, default: 0] += 1
      ends[road.to, default: 0] += 1
    }
    var kept = Set<Int64>()
    var betweenPairs: [[Int64]: [[Int64]]] = [:]
    for road in roads where ends[road.from]! >= 3 && ends[road.to]! >= 3 {
      if road.from == road.to {
        if road.between.count >= 2 { kept.formUnion(road.between.sorted().suffix(2)) }
      } else {
        betweenPairs[[min(road.from, road.to), max(road.from, road.to)], default: []].append(road.between)
      }
    }
    for parallel in betweenPairs.values where parallel.count >= 2 {
      let lasts = parallel.compactMap { $0.max() }.sorted()
      // With no road joining them directly, the first road compressed becomes that road.
      kept.formUnion(lasts.count == parallel.count ? lasts.dropFirst() : lasts[...])
    }
    return kept
  }

  /// The via ways' road edges as one chain from the junction where the from way meets them to
  /// the one where the to way does; nil when they do not make one.
  static func viaChain(_ r: Restriction, network: RoadNetwork, edgesOfWay: [Int64: [Int32]]) -> (
    start: Int32, edges: [Int32]
  )? {
    var remaining = r.viaWays.flatMap { edgesOfWay[$0] ?? [] }
    guard !remaining.isEmpty, r.viaWays.allSatisfy({ edgesOfWay[$0] != nil }) else { return nil }
    let ends = { (way: Int64) in
      Set((edgesOfWay[way] ?? []).flatMap { [network.edges[Int($0)].from, network.edges[Int($0)].to] })
    }
    let viaEnds = Set(remaining.flatMap { [network.edges[Int($0)].from, network.edges[Int($0)].to] })
    let starts = ends(r.fromWay).intersection(viaEnds)
    guard starts.count == 1, let start = starts.first else { return nil }
    var chain: [Int32] = []
    var at = start
    while !remaining.isEmpty {
      guard
        let i = remaining.firstIndex(where: { network.edges[Int($0)].from == at || network.edges[Int($0)].to == at })
      else { return nil }
      let edge = network.edges[Int(remaining[i])]
      chain.append(remaining.remove(at: i))
      at = edge.from == at ? edge.to : edge.from
    }
    guard ends(r.toWay).contains(at) else { return nil }
    return (start, chain)
  }

  /// Time over `count` segments of a timed way, each rounded as OSRM rounds it.
  static func timed(_ count: Int, _ secondsPerSegment: Double) -> Double {
    Double(count) * max(1, (secondsPerSegment * 10).rounded()) / 10
  }

  /// Time over a shape's segments as OSRM counts it: each segment rounded to a tenth of a second,
  /// at least a tenth, so that durations (and the choices between near-equal routes) agree.
  static func seconds(_ segments: [Double], kmh: Double) -> Double {
    let metresPerSecond = kmh / 3.6
    return segments.reduce(0) { $0 + max(1, ($1 / metresPerSecond * 10).rounded()) / 10 }
  }

  /// nil: not a turn restriction for cars; .some(nil): one this extractor cannot use.
  func restriction(_ relation: OSMRelation) -> Restriction?? {
    let tags = relation.tags
    guard tags["type"] == "restriction" else { return nil }
    let value =
      ["motorcar", "motor_vehicle", "vehicle"].lazy.compactMap { tags["restriction:\($0)"] }.first
      ?? tags["restriction"]
    // `no_right_turn_on_red` and the like only forbid turning while the light is red.
    guard let value, value.hasPrefix("no_") || value.hasPrefix("only_"), !value.hasSuffix("_on_red") else {
      return nil
    }
    if let except = tags["except"] {
      let exempt = except.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      if exempt.contains(where: { ["motorcar", "motor_vehicle", "vehicle"].contains($0) }) { return nil }
    }
    let from = relation.members.filter { $0.role == "from" && $0.type == .way }
    let to = relation.members.filter { $0.role == "to" && $0.type == .way }
    let via = relation.members.filter { $0.role == "via" }
    guard from.count == 1, to.count == 1, !via.isEmpty else { return .some(nil) }
    let isOnly = value.hasPrefix("only_")
    if via.count == 1, via[0].type == .node {
      return Restriction(fromWay: from[0].id, viaNode: via[0].id, toWay: to[0].id, isOnly: isOnly)
    }
    // One or more via ways, in order (OSRM's via-way restrictions).
    guard via.allSatisfy({ $0.type == .way }) else { return .some(nil) }
    return Restriction(fromWay: from[0].id, viaWays: via.map(\.id), toWay: to[0].id, isOnly: isOnly)
  }
}
