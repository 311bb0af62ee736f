import FleetGeometry
import Foundation

/// What a search reads of a vehicle to decide whether it is a candidate, filed by position and
/// rewritten on every write of the vehicle, so that a search filters compact values instead of
/// the vehicles themselves.
struct VehicleSummary: Sendable {
  var id: String
  var position: LatLng
  var isOnline: Bool
  /// Bit n set: supports the trip type with raw value n.
  var tripTypes: UInt8
  var category: VehicleCategory
  var maximumCapacity: Int32
  /// When fleetd accepted its last position.
  var serverTime: Date
  /// Its current trips (the vehicle's own array, shared, not copied).
  var trips: [String]
  var hasTrips: Bool { !trips.isEmpty }
  var backToBackEnabled: Bool
  var attributes: [Attribute]

  init?(_ v: Vehicle) {
    guard let position = v.lastLocation?.location else { return nil }
    id = v.id
    self.position = position
    isOnline = v.state == .online
    tripTypes = v.supportedTripTypes.reduce(0) { $0 | (1 << UInt8($1.rawValue)) }
    category = v.category
    maximumCapacity = v.maximumCapacity
    serverTime = v.lastLocation?.serverTime ?? .distantPast
    trips = v.currentTrips
    backToBackEnabled = v.backToBackEnabled
    attributes = v.attributes
  }

  func supports(_ type: TripType) -> Bool { tripTypes & (1 << UInt8(type.rawValue)) != 0 }
}

/// Vehicles by position: a uniform grid of lat/lng cells, kept current on every write of a
/// vehicle, so that a search near a point visits the cells around it instead of the whole
/// fleet. One grid per provider.
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

  private(set) var cells: [Cell: [VehicleSummary]] = [:]
  /// Where each vehicle is filed: its cell and its index in that cell's list (O(1) removal).
  private var slots: [String: (cell: Cell, index: Int)] = [:]

  var count: Int { slots.count }

  static func cell(_ point: LatLng) -> Cell {
    let x = Int32(((point.longitude + 180) / cellDegrees).rounded(.down))
    let y = Int32(((point.latitude + 90) / cellDegrees).rounded(.down))
    return Cell(x: ((x % columns) + columns) % columns, y: y)
  }

  /// Files the vehicle as it is now, or takes it out when it has no position.
  mutating func update(_ vehicle: Vehicle) {
    guard let summary = VehicleSummary(vehicle) else {
      remove(vehicle.id)
      return
    }
    let cell = Self.cell(summary.position)
    if let slot = slots[vehicle.id], slot.cell == cell {
      cells[cell]![slot.index] = summary
      return
    }
    remove(vehicle.id)
    cells[cell, default: []].append(summary)
    slots[vehicle.id] = (cell, cells[cell]!.count - 1)
  }

  mutating func remove(_ id: String) {
    guard let (cell, index) = slots.removeValue(forKey: id) else { return }
    // In place: a copy of the cell's list would cost a dense cell's size on every move.
    let last = cells[cell]!.removeLast()
    if index < cells[cell]!.count {
      cells[cell]![index] = last
      slots[last.id]!.index = index
    }
    if cells[cell]!.isEmpty { cells[cell] = nil }
  }

  /// The cells of the box around a circle of `radius` metres around `center`: its rows, and
  /// `columns` columns from `west` eastwards (across the antimeridian).
  struct Box {
    var rows: ClosedRange<Int32>
    var west: Int32
    var columns: Int
    /// Degrees of longitude from the centre to the circle's edge, at its widest.
    var longitudeSpan: Double
    var cellCount: Int { rows.count * columns }

    func forEachCell(_ body: (Cell) -> Void) {
      for column in 0..<Int32(columns) {
        let x = (west + column) % VehicleGrid.columns
        for y in rows { body(Cell(x: x, y: y)) }
      }
    }
  }

  static func box(near center: LatLng, radius: Double) -> Box {
    let metresPerDegree = LatLng.earthRadius * .pi / 180
    let latitudeSpan = radius / metresPerDegree
    let south = max(-90, center.latitude - latitudeSpan)
    let north = min(90, center.latitude + latitudeSpan)
    // The widest longitude span is at the latitude nearest a pole within the circle.
    let widest = max(abs(south), abs(north))
    let cosine = cos(min(widest, 89.999) * .pi / 180)
    let longitudeSpan = radius / (metresPerDegree * cosine)
    let columns =
      longitudeSpan >= 180 ? Int(Self.columns) : min(Int(Self.columns), Int(2 * longitudeSpan / Self.cellDegrees) + 2)
    let west = cell(LatLng(latitude: center.latitude, longitude: wrap(center.longitude - longitudeSpan)))
    return Box(
      rows: cell(LatLng(latitude: south, longitude: -180)).y...cell(LatLng(latitude: north, longitude: -180)).y,
      west: west.x, columns: columns, longitudeSpan: longitudeSpan)
  }

  /// Calls `body` with the vehicles in the cells that a circle of `radius` metres around
  /// `center` touches: a superset of those within it (callers check the exact distance).
  func forEach(near center: LatLng, radius: Double, _ body: (VehicleSummary) -> Void) {
    let box = Self.box(near: center, radius: radius)
    // Near a pole, or for a radius wider than the grid is dense, scanning the occupied cells
    // is cheaper than visiting every cell of the box.
    if box.cellCount > cells.count {
      for (cell, list) in cells
      where box.rows.contains(cell.y)
        && (box.longitudeSpan >= 180
          || Self.longitudeDistance(cell, center) <= box.longitudeSpan + Self.cellDegrees)
      {
        list.forEach(body)
      }
      return
    }
    box.forEachCell { cells[$0]?.forEach(body) }
  }

  /// As `forEach(near:radius:)`, the nearest cells first: before each cell, `more` is given a
  /// lower bound of the distance from `center` to anything filed there (in metres, measured flat
  /// with `metresPerDegree` at the centre, as searches measure), and the scan ends when it
  /// answers false. A search that needs the nearest few then reads the cells around the pickup,
  /// not every cell of the radius (thousands of vehicles in a metro's centre). Where
  /// `forEach(near:radius:)` scans the occupied cells, or the box wraps the globe, every cell is
  /// read.
  func forEach(
    near center: LatLng, radius: Double, nearestFirst metresPerDegree: (latitude: Double, longitude: Double),
    while more: (Double) -> Bool, _ body: (VehicleSummary) -> Void
  ) {
    let box = Self.box(near: center, radius: radius)
    guard box.longitudeSpan < 180, box.cellCount <= cells.count else {
      return forEach(near: center, radius: radius, body)
    }
    var nearby: [(bound: Double, cell: Cell)] = []
    box.forEachCell { cell in
      guard cells[cell] != nil else { return }
      let cellSouth = Double(cell.y) * Self.cellDegrees - 90
      let dy = max(0, cellSouth - center.latitude, center.latitude - (cellSouth + Self.cellDegrees))
      let dx = max(0, Self.longitudeDistance(cell, center) - Self.cellDegrees / 2)
      let (north, east) = (dy * metresPerDegree.latitude, dx * metresPerDegree.longitude)
      nearby.append(((north * north + east * east).squareRoot(), cell))
    }
    nearby.sort { $0.bound < $1.bound }
    for (bound, cell) in nearby {
      guard more(bound) else { return }
      cells[cell]?.forEach(body)
    }
  }

  static func wrap(_ longitude: Double) -> Double {
    var l = longitude
    while l < -180 { l += 360 }
    while l >= 180 { l -= 360 }
    return l
  }

  /// Degrees of longitude between a cell's middle and a point, across the antimeridian.
  static func longitudeDistance(_ cell: Cell, _ point: LatLng) -> Double {
    let cellLongitude = Double(cell.x) * cellDegrees - 180 + cellDegrees / 2
    let d = abs(cellLongitude - point.longitude).truncatingRemainder(dividingBy: 360)
    return min(d, 360 - d)
  }
}
