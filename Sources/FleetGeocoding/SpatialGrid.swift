import FleetCore
import FleetGeometry
import Foundation

/// A uniform lat/lng grid of item indices: each item is filed under every cell its bounding
/// box touches, and a query reads the cells around a point. Enough for street-level data and
/// city lists, where items are small against a cell.
struct SpatialGrid: Sendable {
  struct Cell: Hashable, Sendable {
    var x: Int32
    var y: Int32
  }

  let cellDegrees: Double
  private(set) var cells: [Cell: [Int32]] = [:]

  init(cellDegrees: Double) { self.cellDegrees = cellDegrees }

  func cell(_ latitude: Double, _ longitude: Double) -> Cell {
    Cell(x: Int32((longitude / cellDegrees).rounded(.down)), y: Int32((latitude / cellDegrees).rounded(.down)))
  }

  mutating func insert(_ item: Int32, from a: LatLng, to b: LatLng) {
    let low = cell(min(a.latitude, b.latitude), min(a.longitude, b.longitude))
    let high = cell(max(a.latitude, b.latitude), max(a.longitude, b.longitude))
    for y in low.y...high.y {
      for x in low.x...high.x { cells[Cell(x: x, y: y), default: []].append(item) }
    }
  }

  mutating func insert(_ item: Int32, at point: LatLng) { insert(item, from: point, to: point) }

  /// The items filed in cells within `radius` metres of `point` (a superset of those within it;
  /// an item may come more than once).
  func candidates(near point: LatLng, radius: Double, _ body: (Int32) -> Void) {
    let dLat = radius / 111_195
    let dLng = radius / (111_195 * max(cos(point.latitude * .pi / 180), 0.01))
    let low = cell(point.latitude - dLat, point.longitude - dLng)
    let high = cell(point.latitude + dLat, point.longitude + dLng)
    for y in low.y...high.y {
      for x in low.x...high.x {
        guard let items = cells[Cell(x: x, y: y)] else { continue }
        for item in items { body(item) }
      }
    }
  }

  /// The cells at Chebyshev distance `ring` around the point's cell, for searches that widen
  /// until they find something.
  func ring(_ ring: Int32, around point: LatLng, _ body: (Int32) -> Void) {
    let center = cell(point.latitude, point.longitude)
    for y in (center.y - ring)...(center.y + ring) {
      for x in (center.x - ring)...(center.x + ring) {
        guard ring == 0 || abs(x - center.x) == ring || abs(y - center.y) == ring else { continue }
        guard let items = cells[Cell(x: x, y: y)] else { continue }
        for item in items { body(item) }
      }
    }
  }
}
