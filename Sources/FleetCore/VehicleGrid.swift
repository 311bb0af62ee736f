import Foundation

/// Vehicles by position: a uniform grid of lat/lng cells, kept current on every write of a
/// vehicle's location, so that a search near a point visits the cells around it instead of the
/// whole fleet. One grid per provider.
struct VehicleGrid: Sendable {
  struct Cell: Hashable, Sendable {
    var x: Int32
    var y: Int32
  }

  /// About 550 m of latitude (400 m of longitude at 45°): a search of a few kilometres visits
  /// tens of cells, and a dense city centre keeps a few hundred vehicles per cell.
  static let cellDegrees = 0.005
  /// Cells around the globe in longitude, for wrapping across the antimeridian.
  static let columns = Int32((360 / cellDegrees).rounded())

  private(set) var cells: [Cell: [String]] = [:]
  /// Where each vehicle is filed: its cell and its index in that cell's list (O(1) removal).
  private var slots: [String: (cell: Cell, index: Int)] = [:]
  private var positions: [String: LatLng] = [:]

  var count: Int { slots.count }

  static func cell(_ point: LatLng) -> Cell {
    let x = Int32(((point.longitude + 180) / cellDegrees).rounded(.down))
    let y = Int32(((point.latitude + 90) / cellDegrees).rounded(.down))
    return Cell(x: ((x % columns) + columns) % columns, y: y)
  }

  /// Files the vehicle under its new position, or takes it out when it has none.
  mutating func update(_ id: String, at point: LatLng?) {
    if let point, positions[id] == point { return }
    remove(id)
    guard let point else { return }
    let cell = Self.cell(point)
    cells[cell, default: []].append(id)
    slots[id] = (cell, cells[cell]!.count - 1)
    positions[id] = point
  }

  mutating func remove(_ id: String) {
    guard let (cell, index) = slots.removeValue(forKey: id) else { return }
    positions[id] = nil
    var list = cells[cell]!
    let last = list.removeLast()
    if index < list.count {
      list[index] = last
      slots[last]!.index = index
    }
    cells[cell] = list.isEmpty ? nil : list
  }

  /// The vehicles in the cells that a circle of `radius` metres around `center` touches: a
  /// superset of those within it (callers check the exact distance).
  func candidates(near center: LatLng, radius: Double) -> [String] {
    let metresPerDegree = LatLng.earthRadius * .pi / 180
    let latitudeSpan = radius / metresPerDegree
    let south = max(-90, center.latitude - latitudeSpan)
    let north = min(90, center.latitude + latitudeSpan)
    // The widest longitude span is at the latitude nearest a pole within the circle.
    let widest = max(abs(south), abs(north))
    let cosine = cos(min(widest, 89.999) * .pi / 180)
    let longitudeSpan = radius / (metresPerDegree * cosine)
    let low = Self.cell(LatLng(latitude: south, longitude: -180))
    let high = Self.cell(LatLng(latitude: north, longitude: -180))
    let rows = Int(high.y - low.y) + 1
    // Near a pole, or for a radius wider than the grid is dense, scanning the occupied cells
    // is cheaper than visiting every cell of the box.
    let columnsSpanned =
      longitudeSpan >= 180 ? Int(Self.columns) : min(Int(Self.columns), Int(2 * longitudeSpan / Self.cellDegrees) + 2)
    if rows * columnsSpanned > cells.count {
      return cells.filter { cell, _ in
        cell.y >= low.y && cell.y <= high.y
          && (longitudeSpan >= 180 || Self.longitudeDistance(cell, center) <= longitudeSpan + Self.cellDegrees)
      }.flatMap(\.value)
    }
    let west = Self.cell(LatLng(latitude: center.latitude, longitude: Self.wrap(center.longitude - longitudeSpan)))
    var found: [String] = []
    for column in 0..<Int32(columnsSpanned) {
      let x = (west.x + column) % Self.columns
      for y in low.y...high.y {
        if let ids = cells[Cell(x: x, y: y)] { found.append(contentsOf: ids) }
      }
    }
    return found
  }

  static func wrap(_ longitude: Double) -> Double {
    var l = longitude
    while l < -180 { l += 360 }
    while l >= 180 { l -= 360 }
    return l
  }

  /// Degrees of longitude between a cell's west edge and a point, across the antimeridian.
  static func longitudeDistance(_ cell: Cell, _ point: LatLng) -> Double {
    let cellLongitude = Double(cell.x) * cellDegrees - 180 + cellDegrees / 2
    let d = abs(cellLongitude - point.longitude).truncatingRemainder(dividingBy: 360)
    return min(d, 360 - d)
  }
}
