import FleetCore
import FleetGeometry
import Foundation

/// Populated places worldwide from GeoNames (`cities1000`: every place with at least 1,000
/// people), for city, region and country where street-level data does not reach.
/// The file is CSV with a header: `lat,lon,name,admin1,admin2,cc`.
public struct GeoNamesCities: Sendable {
  public struct City: Sendable, Hashable {
    public var coordinate: LatLng
    public var name: String
    /// First-level division (region, state).
    public var region: String
    /// Second-level division (département, county).
    public var subregion: String
    public var countryCode: String
  }

  public let cities: [City]
  let grid: SpatialGrid

  /// Half a degree: about 55 km, a few dozen places per cell where they are densest.
  static let cellDegrees = 0.5

  public init(cities: [City]) {
    self.cities = cities
    var grid = SpatialGrid(cellDegrees: Self.cellDegrees)
    for (index, city) in cities.enumerated() { grid.insert(Int32(index), at: city.coordinate) }
    self.grid = grid
  }

  /// Reads the CSV file; a malformed line is an error naming the line.
  public init(contentsOf path: String) throws(FleetError) {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw .invalid("geonames file '\(path)' cannot be read")
    }
    let bytes = [UInt8](data)
    var cities: [City] = []
    cities.reserveCapacity(150_000)
    var lineNumber = 0
    var lineStart = 0
    while lineStart < bytes.count {
      let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
      defer { lineStart = lineEnd + 1 }
      lineNumber += 1
      let line = bytes[lineStart..<lineEnd]
      if line.allSatisfy({ $0 == UInt8(ascii: "\r") }) { continue }
      let fields = Self.csvFields(line)
      if lineNumber == 1, fields.first == "lat" { continue }
      guard fields.count >= 6, let lat = Double(fields[0]), let lng = Double(fields[1]),
        (-90...90).contains(lat), (-180...180).contains(lng)
      else {
        throw .invalid("geonames file '\(path)' line \(lineNumber): expected lat,lon,name,admin1,admin2,cc")
      }
      cities.append(
        City(
          coordinate: LatLng(latitude: lat, longitude: lng), name: fields[2], region: fields[3], subregion: fields[4],
          countryCode: fields[5].uppercased()))
    }
    self.init(cities: cities)
  }

  /// The nearest place to `point`, searching up to `maximumDistance` metres.
  public func nearest(to point: LatLng, maximumDistance: Double = 100_000) -> (city: City, distance: Double)? {
    var best: (Int32, Double)?
    let cellMetres = Self.cellDegrees * 111_195 * max(cos(point.latitude * .pi / 180), 0.05)
    var ring: Int32 = 0
    while true {
      grid.ring(ring, around: point) { index in
        let distance = cities[Int(index)].coordinate.distance(to: point)
        if distance < best?.1 ?? .infinity { best = (index, distance) }
      }
      // Every place in a farther ring is at least `ring` cells away.
      let reach = Double(ring) * cellMetres
      if let found = best, found.1 <= reach { break }
      if reach > maximumDistance { break }
      ring += 1
    }
    guard let (index, distance) = best, distance <= maximumDistance else { return nil }
    return (cities[Int(index)], distance)
  }

  /// Splits one CSV line (UTF-8 bytes); fields may be quoted, with "" for a quote inside.
  static func csvFields(_ line: ArraySlice<UInt8>) -> [String] {
    let quote = UInt8(ascii: "\"")
    let comma = UInt8(ascii: ",")
    let cr = UInt8(ascii: "\r")
    var fields: [String] = []
    var field: [UInt8] = []
    var quoted = false
    var index = line.startIndex
    while index < line.endIndex {
      let byte = line[index]
      index += 1
      if quoted {
        if byte == quote {
          if index < line.endIndex, line[index] == quote {
            field.append(quote)
            index += 1
          } else {
            quoted = false
          }
        } else {
          field.append(byte)
        }
      } else if byte == quote, field.isEmpty {
        quoted = true
      } else if byte == comma {
        fields.append(String(decoding: field, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
      } else if byte != cr {
        field.append(byte)
      }
    }
    fields.append(String(decoding: field, as: UTF8.self))
    return fields
  }
}
