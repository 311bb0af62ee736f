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

  /// Calls `body` with the vehicles in the cells that a circle of `radius` metres around
  /// `center` touches: a superset of those within it (callers check the exact distance).
  func forEach(near center: LatLng, radius: Double, _ body: (VehicleSummary) -> Void) {
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
    let columnsSpanned =
      longitudeSpan >= 180 ? Int(Self.columns) : min(Int(Self.columns), Int(2 * longitudeSpan / Self.cellDegrees) + 2)
    // Near a pole, or for a radius wider than the grid is dense, scanning the occupied cells
    // is cheaper than visiting every cell of the box.
    if rows * columnsSpanned > cells.count {
      for (cell, list) in cells
      where cell.y >= low.y && cell.y <= high.y
        && (longitudeSpan >= 180 || Self.longitudeDistance(cell, center) <= longitudeSpan + Self.cellDegrees)
      {
        list.forEach(body)
      }
      return
    }
    let west = Self.cell(LatLng(latitude: center.latitude, longitude: Self.wrap(center.longitude - longitudeSpan)))
    for column in 0..<Int32(columnsSpanned) {
      let x = (west.x + column) % Self.columns
      for y in low.y...high.y {
        cells[Cell(x: x, y: y)]?.forEach(body)
      }
    }
  }

  /// As `forEach(near:radius:)`, the nearest cells first: before each cell, `more` is given a
  /// lower bound of the distance from `center` to anything filed there (in metres, measured flat
  /// with `metresPerDegree` at the centre, as searches measure), and the scan ends when it
  /// answers false. A search that needs the nearest few then reads the cells around the pickup,
  /// not every cell of the radius (thousands of vehicles in a metro's centre). Near a pole, or
  /// for a radius wider than the grid is dense, every cell is read.
  func forEach(
    near center: LatLng, radius: Double, nearestFirst metresPerDegree: (latitude: Double, longitude: Double),
    while more: (Double) -> Bool, _ body: (VehicleSummary) -> Void
  ) {
    let latitudeSpan = radius / metresPerDegree.latitude
    let south = center.latitude - latitudeSpan
    let north = center.latitude + latitudeSpan
    let widest = max(abs(south), abs(north))
    guard widest < 89, metresPerDegree.longitude > 0 else { return forEach(near: center, radius: radius, body) }
    let longitudeSpan = radius / (LatLng.earthRadius * .pi / 180 * cos(widest * .pi / 180))
    let low = Self.cell(LatLng(latitude: south, longitude: -180))
    let high = Self.cell(LatLng(latitude: north, longitude: -180))
    let columnsSpanned = Int(2 * longitudeSpan / Self.cellDegrees) + 2
    guard longitudeSpan < 180, (Int(high.y - low.y) + 1) * columnsSpanned <= cells.count else {
      return forEach(near: center, radius: radius, body)
    }
    let west = Self.cell(LatLng(latitude: center.latitude, longitude: Self.wrap(center.longitude - longitudeSpan)))
    var nearby: [(bound: Double, cell: Cell)] = []
    for column in 0..<Int32(columnsSpanned) {
      let x = (west.x + column) % Self.columns
      for y in low.y...high.y {
        let cell = Cell(x: x, y: y)
        guard cells[cell] != nil else { continue }
        let cellSouth = Double(y) * Self.cellDegrees - 90
        let dy = max(0, cellSouth - center.latitude, center.latitude - (cellSouth + Self.cellDegrees))
        let dx = max(0, Self.longitudeDistance(cell, center) - Self.cellDegrees / 2)
        let (north, east) = (dy * metresPerDegree.latitude, dx * metresPerDegree.longitude)
        nearby.append(((north * north + east * east).squareRoot(), cell))
      }
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
