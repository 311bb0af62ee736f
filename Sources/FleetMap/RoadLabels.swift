import FleetRouting
import Foundation

/// Street names along their roads within one tile: the edges of one name are joined end to end
/// into chains, and a name is drawn once per tile, on the longest stretch of a chain that lies
/// wholly inside the tile (so that no label is cut at the tile's edge) and is long enough.
struct RoadLabels {
  struct Label {
    var name: String
    var path: [Pixel]
  }

  let network: RoadNetwork
  let edges: [Int32]
  let tile: TileProjection

  /// A label needs about this many pixels per character, plus some air at both ends.
  static let pixelsPerCharacter = 6.8
  static let inset = 3.0

  func placed() -> [Label] {
    var byName: [Int32: [Int32]] = [:]
    for e in edges {
      let edge = network.edges[Int(e)]
      guard edge.nameIndex > 0, !edge.isRoundabout else { continue }
      byName[edge.nameIndex, default: []].append(e)
    }
    var labels: [Label] = []
    var taken: [(low: Pixel, high: Pixel)] = []
    for (nameIndex, named) in byName.sorted(by: { $0.key < $1.key }) {
      let name = network.names[Int(nameIndex)]
      let needed = Double(name.count) * Self.pixelsPerCharacter + 16
      var best: [Pixel] = []
      var bestLength = 0.0
      for chain in chains(named) {
        for run in insideRuns(chain) {
          let length = Self.length(run)
          if length > bestLength {
            best = run
            bestLength = length
          }
        }
      }
      guard bestLength >= needed else { continue }
      // No label over another: their paths' boxes, grown by half a line, must not meet.
      let margin = 7.0
      let box = (
        low: Pixel(x: best.map(\.x).min()! - margin, y: best.map(\.y).min()! - margin),
        high: Pixel(x: best.map(\.x).max()! + margin, y: best.map(\.y).max()! + margin)
      )
      if taken.contains(where: {
        box.low.x < $0.high.x && $0.low.x < box.high.x && box.low.y < $0.high.y && $0.low.y < box.high.y
      }) {
        continue
      }
      taken.append(box)
      // Text reads left to right.
      if let first = best.first, let last = best.last, first.x > last.x { best.reverse() }
      labels.append(Label(name: name, path: best))
    }
    return labels
  }

  /// The edges joined at shared junctions into point sequences.
  func chains(_ named: [Int32]) -> [[Pixel]] {
    var atJunction: [Int32: [Int32]] = [:]
    for e in named {
      let edge = network.edges[Int(e)]
      atJunction[edge.from, default: []].append(e)
      atJunction[edge.to, default: []].append(e)
    }
    var used = Set<Int32>()
    var chains: [[Pixel]] = []
    for start in named where !used.contains(start) {
      used.insert(start)
      let edge = network.edges[Int(start)]
      var junctions = [edge.from, edge.to]
      var points = points(of: start, reversed: false)
      // Grow at the far end, then at the near end.
      for atEnd in [true, false] {
        while true {
          let junction = atEnd ? junctions.last! : junctions.first!
          guard let next = atJunction[junction]?.first(where: { !used.contains($0) }) else { break }
          used.insert(next)
          let nextEdge = network.edges[Int(next)]
          let leavesFromJunction = nextEdge.from == junction
          let far = leavesFromJunction ? nextEdge.to : nextEdge.from
          if atEnd {
            points += self.points(of: next, reversed: !leavesFromJunction).dropFirst()
            junctions.append(far)
          } else {
            points = self.points(of: next, reversed: leavesFromJunction).dropLast() + points
            junctions.insert(far, at: 0)
          }
        }
      }
      chains.append(points)
    }
    return chains
  }

  func points(of e: Int32, reversed: Bool) -> [Pixel] {
    let shape = network.shape(of: network.edges[Int(e)]).map { tile.pixel(network.points[Int($0)]) }
    return reversed ? shape.reversed() : shape
  }

  /// The stretches of `chain` whose points all lie inside the tile.
  func insideRuns(_ chain: [Pixel]) -> [[Pixel]] {
    let high = Double(TileRenderer.size) - Self.inset
    var runs: [[Pixel]] = []
    var current: [Pixel] = []
    for p in chain {
      if p.x >= Self.inset, p.y >= Self.inset, p.x <= high, p.y <= high {
        current.append(p)
      } else {
        if current.count >= 2 { runs.append(current) }
        current = []
      }
    }
    if current.count >= 2 { runs.append(current) }
    return runs
  }

  static func length(_ path: [Pixel]) -> Double {
    zip(path, path.dropFirst()).reduce(0) { $0 + hypot($1.1.x - $1.0.x, $1.1.y - $1.0.y) }
  }
}
