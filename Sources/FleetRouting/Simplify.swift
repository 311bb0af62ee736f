import FleetGeometry

/// Line simplification for route overviews.
public enum Simplify {
  /// Douglas–Peucker: drops points closer than `toleranceMeters` to the line through their
  /// neighbours that are kept. Ends are always kept.
  public static func douglasPeucker(_ points: [LatLng], toleranceMeters: Double) -> [LatLng] {
    guard points.count > 2 else { return points }
    let fixed = points.map { FixedCoordinate(latitude: $0.latitude, longitude: $0.longitude) }
    var keep = [Bool](repeating: false, count: points.count)
    keep[0] = true
    keep[points.count - 1] = true
    var stack = [(0, points.count - 1)]
    while let (first, last) = stack.popLast() {
      guard last - first > 1 else { continue }
      var farthest = first
      var farthestDistance = 0.0
      for i in (first + 1)..<last {
        let t = Geo.projection(of: fixed[i], onto: fixed[first], fixed[last])
        let d = Geo.distance(fixed[i], Geo.interpolate(fixed[first], fixed[last], t))
        if d > farthestDistance {
          farthest = i
          farthestDistance = d
        }
      }
      if farthestDistance > toleranceMeters {
        keep[farthest] = true
        stack.append((first, farthest))
        stack.append((farthest, last))
      }
    }
    return points.indices.filter { keep[$0] }.map { points[$0] }
  }
}
