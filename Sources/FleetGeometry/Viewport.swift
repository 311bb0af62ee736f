/// A lat/lng rectangle; `low` is the south-west corner, `high` the north-east one. When
/// low.longitude > high.longitude the box crosses the antimeridian.
public struct Viewport: Sendable, Hashable, Codable {
  public var low: LatLng
  public var high: LatLng

  public init(low: LatLng, high: LatLng) {
    self.low = low
    self.high = high
  }

  public func contains(_ point: LatLng) -> Bool {
    guard (low.latitude...high.latitude).contains(point.latitude) else { return false }
    if low.longitude <= high.longitude {
      return (low.longitude...high.longitude).contains(point.longitude)
    }
    return point.longitude >= low.longitude || point.longitude <= high.longitude
  }
}
