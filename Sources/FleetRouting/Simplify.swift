import FleetGeometry

/// Line simplification for route overviews.
public enum Simplify {
  /// Douglas–Peucker: drops points closer than `toleranceMeters` to the line through their
  /// neighbours that are kept. Ends are always kept.
  public static func douglasPeucker(_ points: [LatLng], toleranceMeters: Double) -> [LatLng] {
    let fixed = points.map { FixedCoordinate(latitude: $0.latitude, longitude: $0.longitude) }
    return DouglasPeucker.kept(count: points.count, tolerance: toleranceMeters) { i, first, last in
      let t = Geo.projection(of: fixed[i], onto: fixed[first], fixed[last])
      return Geo.distance(fixed[i], Geo.interpolate(fixed[first], fixed[last], t))
    }.map { points[$0] }
  }
}
