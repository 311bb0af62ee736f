import Foundation

/// Dual carriageways read as one road, as OSRM's intersection analysis reads them: where the two
/// one-way halves of a named road meet a junction side by side, both take the bearing between
/// them, and the entry-only half leaves the junction's list of exits. Turning from one half into
/// the other is then a U-turn, and turns onto the road are angled to its middle.
///
/// Detection follows OSRM's mergeable-road detector: halves in opposite directions, one name
/// (`RoadNames.areIdentical`) and class, no roundabout, close in bearing; then a traffic island
/// (both halves meet again within a few metres at a junction of that road), never a link between
/// two parallel roads of that name, a narrow triangle (the halves end a road's width apart on a
/// road that joins them: `RoadMerging+Shapes.swift`), or two halves that run parallel and close
/// for their first 120 m without closing a circle (`RoadMerging+Direction.swift`).
struct RoadMerging {
  let network: RoadNetwork
  let roads: [[JunctionGeometry.Road]]
  let shapes: [[JunctionGeometry.RoadShape]]

  static let mergeableAngle = 95.0
  static let pruningDistance = 30.0
  static let noTurnDeviation = 3.0

  /// The roads with merged bearings, merged halves marked, and the bearings of short roads whose
  /// far junction merges them adjusted to match.
  func mergedRoads() -> [[JunctionGeometry.Road]] {
    var result = roads
    var merged = roads.map { Array(repeating: false, count: $0.count) }
    for junction in roads.indices where roads[junction].count >= 3 {
      let order = roads[junction].indices.sorted {
        roads[junction][$0].perceivedBearing < roads[junction][$1].perceivedBearing
      }
      var current = roads[junction]
      for (position, index) in order.enumerated() {
        let next = order[(position + 1) % order.count]
        guard isMergeablePair(junction, current, order: order, at: position) else { continue }
        let bearing = mergedBearing(current, index, next, neighbour: false).bearing
        for road in [index, next] {
          current[road].perceivedBearing = bearing
          current[road].initialBearing = bearing
          merged[junction][road] = true
        }
        current[current[index].leaving == nil ? index : next].isMergedAway = true
      }
      result[junction] = current
    }
    // A short road towards a junction that merges it with its other half points, at this end,
    // the way the merged road does.
    for junction in roads.indices where roads[junction].count >= 2 {
      for index in roads[junction].indices where !merged[junction][index] {
        let (shape, far, loops, lastEdge) = shapes[junction][index]
        guard !loops, Geo.length(of: shape) <= Self.pruningDistance else { continue }
        let neighbour = roads[Int(far)]
        guard neighbour.count > 1, let arriving = arrivingRoad(at: Int(far), by: lastEdge) else { continue }
        let order = neighbour.indices.sorted { neighbour[$0].perceivedBearing < neighbour[$1].perceivedBearing }
        let back = order.firstIndex(of: arriving)!
        let previous = (back + order.count - 1) % order.count
        var offset: Double?
        if isMergeablePair(Int(far), neighbour, order: order, at: previous) {
          let merge = mergedBearing(neighbour, order[previous], order[back], neighbour: true)
          if merge.applies {
            offset = -PerceivedBearing.angularDeviation(merge.bearing, neighbour[order[back]].perceivedBearing)
          }
        } else if isMergeablePair(Int(far), neighbour, order: order, at: back) {
          let merge = mergedBearing(neighbour, order[back], order[(back + 1) % order.count], neighbour: true)
          if merge.applies {
            offset = PerceivedBearing.angularDeviation(merge.bearing, neighbour[order[back]].perceivedBearing)
          }
        }
        if let offset {
          let bearing = (result[junction][index].perceivedBearing + offset + 360).truncatingRemainder(dividingBy: 360)
          result[junction][index].perceivedBearing = bearing
          result[junction][index].initialBearing = bearing
        }
      }
    }
    return result
  }

  /// Roads `order[position]` and the next one clockwise can be merged, and both are distinct
  /// from their other neighbours.
  func isMergeablePair(_ junction: Int, _ roads: [JunctionGeometry.Road], order: [Int], at position: Int) -> Bool {
    let count = order.count
    guard count >= 2 else { return false }
    let before = order[(position + count - 1) % count]
    let lhs = order[position]
    let rhs = order[(position + 1) % count]
    let after = order[(position + 2) % count]
    return isDistinct(roads[before], roads[lhs]) && canMerge(junction, roads, lhs, rhs)
      && isDistinct(roads[rhs], roads[after])
  }

  func isDistinct(_ a: JunctionGeometry.Road, _ b: JunctionGeometry.Road) -> Bool {
    PerceivedBearing.angularDeviation(a.perceivedBearing, b.perceivedBearing) > Self.mergeableAngle || !sameName(a, b)
  }

  /// OSRM's `HaveIdenticalNames`, by which its detector tells roads apart and merges halves.
  func sameName(_ a: JunctionGeometry.Road, _ b: JunctionGeometry.Road) -> Bool {
    let (x, y) = (network.edges[a.edge], network.edges[b.edge])
    if x.hasSameLabel(as: y) { return !x.hasEmptyLabel }
    return RoadNames.areIdentical(network.label(of: x), network.label(of: y))
  }

  func canMerge(_ junction: Int, _ roads: [JunctionGeometry.Road], _ l: Int, _ r: Int) -> Bool {
    let lhs = roads[l]
    let rhs = roads[r]
    guard PerceivedBearing.angularDeviation(lhs.perceivedBearing, rhs.perceivedBearing) <= Self.mergeableAngle,
      (lhs.leaving == nil) != (rhs.leaving == nil)
    else { return false }
    let a = network.edges[lhs.edge]
    let b = network.edges[rhs.edge]
    guard !a.isRoundabout, !b.isRoundabout, sameName(lhs, rhs), a.roadClass == b.roadClass else { return false }
    let left = shapes[junction][l]
    let right = shapes[junction][r]
    guard !left.loops, !right.loops, left.far != Int32(junction), right.far != Int32(junction) else { return false }
    if isTrafficIsland(junction, l, r) { return true }
    if isLinkRoad(junction, l) || isLinkRoad(junction, r) { return false }
    if isNarrowTriangle(junction, roads, l, r) { return true }
    return haveSameDirection(junction, roads, l, r) && !isCircularShape(junction, roads, l, r)
  }

  /// Both halves meet again a few metres on, at a junction where all roads carry the name. Each
  /// is read on through every junction of two roads (OSRM's `skipDegreeTwoNodes`), whether or not
  /// the two pieces there are alike: a one-way half may join its road where that road ends.
  func isTrafficIsland(_ junction: Int, _ l: Int, _ r: Int) -> Bool {
    guard let left = nextIntersection(from: junction, road: l)?.junction,
      left == nextIntersection(from: junction, road: r)?.junction
    else { return false }
    let splitsHere = allOneRoad(junction)
    let joinsThere = allOneRoad(left)
    guard splitsHere || joinsThere else { return false }
    let distance = Geo.distance(
      network.coordinate(ofJunction: Int32(junction)), network.coordinate(ofJunction: Int32(left)))
    return splitsHere && joinsThere ? distance < 30 : distance < 15
  }

  func allOneRoad(_ junction: Int) -> Bool {
    let roads = self.roads[junction]
    guard roads.count == 3 else { return false }
    return roads.allSatisfy { sameName(roads[0], $0) }
  }

  func closestDistance(_ p: FixedCoordinate, _ line: [FixedCoordinate]) -> Double {
    var best = Double.infinity
    for (a, b) in zip(line, line.dropFirst()) {
      best = min(best, Geo.distance(p, PerceivedBearing.projectedPoint(p, onto: a, b)))
    }
    return line.count == 1 ? Geo.distance(p, line[0]) : best
  }

  /// Regression lines of both within a 20 % slope of each other.
  func areParallel(_ l: [FixedCoordinate], _ r: [FixedCoordinate]) -> Bool {
    let left = PerceivedBearing.leastSquares(l.map { (x: $0.longitude, y: $0.latitude) })
    let right = PerceivedBearing.leastSquares(r.map { (x: $0.longitude, y: $0.latitude) })
    let leftVector = (x: left.1.x - left.0.x, y: left.1.y - left.0.y)
    let rightVector = (x: right.1.x - right.0.x, y: right.1.y - right.0.y)
    // Turn both so that the left line points east; then the right one's slope.
    let leftBearing = Geo.bearing(
      FixedCoordinate(latitudeE6: 0, longitudeE6: 0), FixedCoordinate(latitude: leftVector.y, longitude: leftVector.x))
    let angle = (leftBearing - 90) * .pi / 180
    let x = cos(angle) * rightVector.x - sin(angle) * rightVector.y
    let y = sin(angle) * rightVector.x + cos(angle) * rightVector.y
    let dx = (x * 1e6).rounded()
    let dy = (y * 1e6).rounded()
    guard dx != 0 else { return false }
    return abs(dy / dx) < 0.2
  }

  /// The bisector of two halves, unless a road straight across makes the entry half straight
  /// already (then the entry half's bearing, and `applies` false).
  func mergedBearing(_ roads: [JunctionGeometry.Road], _ l: Int, _ r: Int, neighbour: Bool) -> (
    applies: Bool, bearing: Double
  ) {
    let lhs = roads[l]
    let rhs = roads[r]
    let entry = lhs.leaving == nil ? rhs : lhs
    let opposite = Geo.reverse(
      roads.min {
        PerceivedBearing.angularDeviation($0.perceivedBearing, Geo.reverse(entry.perceivedBearing))
          < PerceivedBearing.angularDeviation($1.perceivedBearing, Geo.reverse(entry.perceivedBearing))
      }!.perceivedBearing)
    let merged = Self.bisector(lhs.perceivedBearing, rhs.perceivedBearing)
    if PerceivedBearing.angularDeviation(Geo.angleBetween(opposite, entry.perceivedBearing), 180) < Self.noTurnDeviation
    {
      return (false, entry.perceivedBearing)
    }
    if neighbour {
      let straighter = { (bearing: Double) in
        PerceivedBearing.angularDeviation(Geo.angleBetween(opposite, bearing), 180)
      }
      if straighter(lhs.perceivedBearing) < straighter(merged) || straighter(rhs.perceivedBearing) < straighter(merged)
      {
        return (false, opposite)
      }
    }
    return (true, merged)
  }

  static func bisector(_ a: Double, _ b: Double) -> Double {
    let (ra, rb) = (a * .pi / 180, b * .pi / 180)
    let average = atan2(sin(ra) + sin(rb), cos(ra) + cos(rb)) * 180 / .pi
    return (average + 360).truncatingRemainder(dividingBy: 360)
  }
}
