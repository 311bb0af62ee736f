/// Google's encoded polyline format (precision 5, or 6 as OSRM's `polyline6`).
public enum Polyline {
  public static func encode(_ points: [LatLng], precision: Int = 5) -> String {
    let factor = precision == 6 ? 1e6 : 1e5
    // Bytes first, one String at the end: appending scalars to a String costs more than the
    // arithmetic, and every vehicle update encodes its route segment.
    var bytes: [UInt8] = []
    bytes.reserveCapacity(points.count * 8)
    var previousLatitude = 0
    var previousLongitude = 0
    for point in points {
      let latitude = Int((point.latitude * factor).rounded())
      let longitude = Int((point.longitude * factor).rounded())
      append(latitude - previousLatitude, to: &bytes)
      append(longitude - previousLongitude, to: &bytes)
      previousLatitude = latitude
      previousLongitude = longitude
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  static func append(_ delta: Int, to output: inout [UInt8]) {
    var value = delta < 0 ? ~(delta << 1) : delta << 1
    while value >= 0x20 {
      output.append(UInt8((0x20 | (value & 0x1F)) + 63))
      value >>= 5
    }
    output.append(UInt8(value + 63))
  }

  /// The points of an encoded polyline; nil when the text is not one.
  public static func decode(_ text: String, precision: Int = 5) -> [LatLng]? {
    let factor = precision == 6 ? 1e6 : 1e5
    var points: [LatLng] = []
    var latitude = 0
    var longitude = 0
    var iterator = text.utf8.makeIterator()
    func next() -> Int?? {
      var result = 0
      var shift = 0
      while true {
        guard let byte = iterator.next() else { return shift == 0 ? .some(nil) : nil }
        guard byte >= 63, byte < 127, shift < 60 else { return nil }
        let chunk = Int(byte) - 63
        result |= (chunk & 0x1F) << shift
        shift += 5
        if chunk < 0x20 { return (result & 1) != 0 ? ~(result >> 1) : result >> 1 }
      }
    }
    while true {
      guard let first = next() else { return nil }
      guard let dLat = first else { return points }
      guard let second = next(), let dLng = second else { return nil }
      latitude += dLat
      longitude += dLng
      points.append(LatLng(latitude: Double(latitude) / factor, longitude: Double(longitude) / factor))
    }
  }
}
