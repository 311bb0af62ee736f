import Foundation

/// Where a road seems to lead from a junction, read the way OSRM's coordinate extractor reads
/// it, so that turn angles — and so turn costs and route choices — match OSRM's on the same map.
///
/// A road's first metres are often drawn for the junction, not for the road: a kink where the
/// way meets the middle of a wide street, a curve that is really the turn, a slant where lanes
/// split. The extractor looks past those: straight roads by their end, curves by their first
/// metres, offsets by the road after the offset, roads that fit a line by that line.
enum PerceivedBearing {
  static let laneWidth = 3.25
  static let assumedLanes = 2.0
  static let lookaheadWithoutLanes = 10.0
  static let farLookahead = 40.0
  static let skippedInaccuracy = 2.0
  static let desiredCoordinateDifference = 2.0

  /// The point that represents a road leaving `coordinates[0]` (the junction), its shape with
  /// consecutive duplicates removed. `consideredLanes` is the junction's lane count scaled by the
  /// road's class (`RoadClass.offsetCorrectionFactor`).
  static func representativePoint(
    _ input: [FixedCoordinate], isRoundabout: Bool, isLowPriority: Bool, consideredLanes: Double
  ) -> FixedCoordinate {
    var coordinates = input
    let turn = coordinates[0]
    if coordinates.count <= 2 { return coordinates.last! }
    if isRoundabout { return coordinate(atLength: skippedInaccuracy, coordinates) }
    if isLowPriority {
      // Service roads and the like are drawn loosely: only the first metres count.
      return trimmed(coordinates, to: lookaheadWithoutLanes).last!
    }
    let firstDistance = Geo.distance(coordinates[0], coordinates[1])
    if firstDistance > consideredLanes * laneWidth + lookaheadWithoutLanes { return coordinates[1] }

    let lookahead = farLookahead + consideredLanes * laneWidth
    var segments = lengthCache(coordinates, limit: lookahead)
    coordinates = trimmed(coordinates, to: lookahead, cache: segments)
    segments[segments.count - 1] = min(segments[segments.count - 1], lookahead)
    let total = segments.reduce(0, +)
    if coordinates.count == 2 || total <= skippedInaccuracy { return coordinates.last! }

    if maximumDeviation(coordinates[...], from: coordinates.first!, to: coordinates.last!) < 0.5 * laneWidth {
      // Tiny loops (a turning circle) come back to the start: look a little way in instead.
      return coordinates.first == coordinates.last
        ? coordinate(atLength: skippedInaccuracy, coordinates) : coordinates.last!
    }

    // How far the road runs straight before it bends.
    var straightDistance = segments[1]
    var index = 2
    while index < coordinates.count {
      guard maximumDeviation(coordinates[0..<index], from: coordinates[0], to: coordinates[index]) < 0.25 * laneWidth
      else { break }
      straightDistance += segments[index]
      index += 1
    }
    let straightIndex = index - 1
    if straightDistance >= consideredLanes * laneWidth + lookaheadWithoutLanes {
      return coordinate(atLength: 5, coordinates, cache: segments)
    }

    let regression = regressionLine(coordinates)
    if maximumDeviation(coordinates[...], from: regression.0, to: regression.1) < 0.35 * laneWidth {
      let front = projectedPoint(coordinates.first!, onto: regression.0, regression.1)
      let back = projectedPoint(coordinates.last!, onto: regression.0, regression.1)
      return corrected(turn, base: front, head: back)
    }

    if isDirectOffset(
      coordinates, straightIndex: straightIndex, straightDistance: straightDistance, length: total,
      segments: segments, consideredLanes: consideredLanes)
    {
      let offsetIndex = max(1, straightIndex)
      return corrected(turn, base: coordinates[offsetIndex], head: coordinates[offsetIndex + 1])
    }

    if isCurve(coordinates, segments: segments, length: total, consideredLaneWidth: consideredLanes * laneWidth) {
      // The curve is the turn: the direction of its first few metres.
      var head = trimmed(coordinates, to: 3 * skippedInaccuracy, cache: segments)
      var headSegments = Array(segments.prefix(head.count))
      headSegments[headSegments.count - 1] = Geo.distance(head[head.count - 2], head[head.count - 1])
      let vectorHead = head.last!
      head = trimmed(head, to: 2 * skippedInaccuracy, cache: headSegments)
      return corrected(turn, base: head.last!, head: vectorHead)
    }

    // Past the junction's own lanes, a road that fits a line is that line.
    let trimmingLength = 0.8 * (consideredLanes * laneWidth)
    let rest = trimmedFront(coordinates, by: 0.8 * trimmingLength)
    if rest.count >= 2 && total >= trimmingLength + 2 {
      let line = regressionLine(rest)
      if maximumDeviation(rest[...], from: line.0, to: line.1) < 0.5 * laneWidth {
        return corrected(turn, base: line.0, head: line.1)
      }
    }

    let result = coordinate(atLength: lookaheadWithoutLanes, coordinates, cache: segments)
    if result != turn { return result }
    return coordinates.first { $0 != turn } ?? result
  }

  /// Where a road leaves a junction of at most two roads: its first point more than a metre away.
  static func closeToTurn(_ coordinates: [FixedCoordinate]) -> FixedCoordinate {
    coordinates.dropFirst().first { Geo.distance($0, coordinates[0]) > 1 } ?? coordinates.last!
  }

  /// The road's direction at its very start (2 m along), before any reading of its shape.
  static func initialPoint(_ coordinates: [FixedCoordinate]) -> FixedCoordinate {
    coordinate(atLength: 2, coordinates)
  }

  // MARK: - OSRM's geometry helpers, kept as OSRM computes them

  static func interpolationFactor(_ desired: Double, _ first: Double, _ second: Double) -> Double {
    let length = second - first
    guard length > 0 else { return 1 }
    return max(0, min((desired - first) / length, 1))
  }

  /// OSRM interpolates fixed coordinates by truncation.
  static func interpolate(_ factor: Double, _ a: FixedCoordinate, _ b: FixedCoordinate) -> FixedCoordinate {
    FixedCoordinate(
      latitudeE6: Int32(Double(a.latitudeE6) + factor * Double(b.latitudeE6 - a.latitudeE6)),
      longitudeE6: Int32(Double(a.longitudeE6) + factor * Double(b.longitudeE6 - a.longitudeE6)))
  }

  static func coordinate(atLength distance: Double, _ coordinates: [FixedCoordinate]) -> FixedCoordinate {
    var travelled = 0.0
    for i in 1..<coordinates.count {
      let step = Geo.distance(coordinates[i - 1], coordinates[i])
      if travelled + step >= distance {
        return interpolate(interpolationFactor(distance - travelled, 0, step), coordinates[i - 1], coordinates[i])
      }
      travelled += step
    }
    return coordinates.last!
  }

  static func coordinate(atLength distance: Double, _ coordinates: [FixedCoordinate], cache: [Double])
    -> FixedCoordinate
  {
    var travelled = 0.0
    for i in 1..<min(coordinates.count, cache.count) {
      if travelled + cache[i] >= distance {
        return interpolate(interpolationFactor(distance - travelled, 0, cache[i]), coordinates[i - 1], coordinates[i])
      }
      travelled += cache[i]
    }
    return coordinates.last!
  }

  /// Segment lengths (the first 0) up to and including the segment that reaches `limit`.
  static func lengthCache(_ coordinates: [FixedCoordinate], limit: Double) -> [Double] {
    var lengths = [0.0]
    var travelled = 0.0
    for i in 1..<coordinates.count {
      let step = Geo.distance(coordinates[i - 1], coordinates[i])
      travelled += step
      lengths.append(step)
      if travelled >= limit { break }
    }
    return lengths
  }

  static func trimmed(_ input: [FixedCoordinate], to length: Double) -> [FixedCoordinate] {
    var coordinates = input
    var travelled = 0.0
    for i in 1..<coordinates.count {
      let next = travelled + Geo.distance(coordinates[i - 1], coordinates[i])
      if next >= length {
        let end = interpolate(interpolationFactor(length, travelled, next), coordinates[i - 1], coordinates[i])
        coordinates.removeSubrange((i + 1)...)
        coordinates[i] = end
        return coordinates
      }
      travelled = next
    }
    return coordinates
  }

  /// OSRM's trimming with a length cache. It compares single segment lengths with the wanted
  /// length (not their running sum), and the turn angles OSRM computes depend on that: kept.
  static func trimmed(_ input: [FixedCoordinate], to length: Double, cache: [Double]) -> [FixedCoordinate] {
    var coordinates = input
    if cache.last! < length {
      if coordinates.count > cache.count { coordinates.removeSubrange(cache.count...) }
      return coordinates
    }
    var current = 0.0
    for i in 1..<coordinates.count {
      let next = cache[i]
      if next >= length {
        let end = interpolate(interpolationFactor(length, current, next), coordinates[i - 1], coordinates[i])
        coordinates.removeSubrange((i + 1)...)
        coordinates[i] = end
        return coordinates
      }
      current = next
    }
    return coordinates
  }

  /// The shape without its first `length` metres; empty when it is shorter.
  static func trimmedFront(_ coordinates: [FixedCoordinate], by length: Double) -> [FixedCoordinate] {
    var travelled = 0.0
    for i in 1..<coordinates.count {
      let next = travelled + Geo.distance(coordinates[i - 1], coordinates[i])
      if next >= length {
        var rest = Array(coordinates[(i - 1)...])
        rest[0] = interpolate(interpolationFactor(length, travelled, next), coordinates[i - 1], coordinates[i])
        return rest
      }
      travelled = next
    }
    return []
  }

  /// The point of segment a–b closest to p, in plain degrees as OSRM projects.
  static func projectedPoint(_ p: FixedCoordinate, onto a: FixedCoordinate, _ b: FixedCoordinate) -> FixedCoordinate {
    let dx = b.longitude - a.longitude
    let dy = b.latitude - a.latitude
    let squared = dx * dx + dy * dy
    guard squared >= Double.ulpOfOne else { return a }
    let ratio = min(max(((p.longitude - a.longitude) * dx + (p.latitude - a.latitude) * dy) / squared, 0), 1)
    return FixedCoordinate(latitude: a.latitude + dy * ratio, longitude: a.longitude + dx * ratio)
  }

  static func maximumDeviation(_ points: ArraySlice<FixedCoordinate>, from a: FixedCoordinate, to b: FixedCoordinate)
    -> Double
  {
    points.reduce(0) { max($0, Geo.distance(projectedPoint($1, onto: a, b), $1)) }
  }

  /// Moves `head` back by most of the offset between the junction and `base`, so that a road
  /// drawn beside the junction's centre points where it leads, not where it was drawn.
  static func corrected(_ turn: FixedCoordinate, base: FixedCoordinate, head: FixedCoordinate) -> FixedCoordinate {
    if Geo.distance(base, head) < desiredCoordinateDifference { return head }
    return FixedCoordinate(
      latitudeE6: head.latitudeE6 - 90 * (base.latitudeE6 - turn.latitudeE6) / 100,
      longitudeE6: head.longitudeE6 - 90 * (base.longitudeE6 - turn.longitudeE6) / 100)
  }

  static func isDirectOffset(
    _ coordinates: [FixedCoordinate], straightIndex: Int, straightDistance: Double, length: Double, segments: [Double],
    consideredLanes: Double
  ) -> Bool {
    let offsetIndex = max(1, straightIndex)
    guard offsetIndex + 1 < coordinates.count else { return false }
    let offsetLength = segments[0...offsetIndex].reduce(0, +)
    guard offsetLength - 0.5 * consideredLanes * laneWidth < laneWidth else { return false }
    guard length >= 0.4 * farLookahead else { return false }
    guard length - max(straightDistance, segments[1]) >= 0.1 * length else { return false }
    // Compare the rest of the road with a line only up to the first segment of 30 m or more.
    var end = coordinates.count
    if let long = segments[offsetIndex...].firstIndex(where: { $0 >= 30 }) { end = min(coordinates.count, long + 1) }
    return 0.5 * laneWidth
      > maximumDeviation(coordinates[offsetIndex..<end], from: coordinates[offsetIndex], to: coordinates[end - 1])
  }

  static func isCurve(_ coordinates: [FixedCoordinate], segments: [Double], length: Double, consideredLaneWidth: Double)
    -> Bool
  {
    let beginBearing = Geo.bearing(coordinates[0], coordinates[1])
    let endBearing = Geo.bearing(coordinates[coordinates.count - 2], coordinates[coordinates.count - 1])
    guard angularDeviation(beginBearing, endBearing) > 0.5 * narrowTurnAngle else { return false }

    let front = coordinates.first!
    let back = coordinates.last!
    if coordinates.count > 3 {
      let side = isCounterClockwise(front, back, coordinates[1])
      guard coordinates[2..<(coordinates.count - 1)].allSatisfy({ isCounterClockwise(front, back, $0) == side }) else {
        return false
      }
    }
    // The deviation from the chord rises to one maximum, then falls.
    let deviation = { (p: FixedCoordinate) in Geo.distance(projectedPoint(p, onto: front, back), p) }
    var maximumIndex = 0
    var maximum = 0.0
    if coordinates.count == 3 {
      maximumIndex = 1
      maximum = deviation(coordinates[1])
    } else {
      var past = 2
      while past < coordinates.count && deviation(coordinates[past - 1]) < deviation(coordinates[past]) { past += 1 }
      if past == coordinates.count {
        maximumIndex = coordinates.count - 1
      } else {
        for i in past..<(coordinates.count - 1) where !(deviation(coordinates[i]) > deviation(coordinates[i + 1])) {
          return false
        }
        maximumIndex = past - 1
        maximum = deviation(coordinates[past - 1])
      }
    }
    let distanceToMaximum = segments[0...maximumIndex].reduce(0, +)
    if (distanceToMaximum <= 0.35 * length || maximum < max(0.3 * consideredLaneWidth, 0.5 * laneWidth))
      && length > lookaheadWithoutLanes
    {
      return false
    }
    // No long straight piece, and no change of direction, inside a curve.
    var angles: [Double] = []
    for i in 0..<(coordinates.count - 2) {
      angles.append(Geo.turnAngle(coordinates[i], coordinates[i + 1], coordinates[i + 2]))
    }
    var lastWasStraight = false
    var straight = max(0, segments[1] - consideredLaneWidth)
    var segment = 1
    for (previous, current) in zip(angles, angles.dropFirst()) {
      let bothTurn =
        angularDeviation(previous, 180) > fuzzyAngleDifference && angularDeviation(current, 180) > fuzzyAngleDifference
      if bothTurn && (previous > 180) == (current < 180) { return false }
      let isStraight = angularDeviation(current, 180) < 5
      segment += 1
      if isStraight {
        straight += segments[segment]
        if lastWasStraight && straight > 0.3 * length { return false }
      } else if straight > 0.3 * length {
        return false
      } else {
        straight = segments[segment]
      }
      lastWasStraight = isStraight
    }
    return length > 2 * consideredLaneWidth
  }

  static let narrowTurnAngle = 40.0
  static let fuzzyAngleDifference = 25.0

  static func angularDeviation(_ a: Double, _ b: Double) -> Double {
    let deviation = abs(a - b)
    return min(360 - deviation, deviation)
  }

  static func isCounterClockwise(_ a: FixedCoordinate, _ b: FixedCoordinate, _ c: FixedCoordinate) -> Bool {
    let cross =
      Double(b.longitudeE6 - a.longitudeE6) * Double(c.latitudeE6 - a.latitudeE6)
      - Double(b.latitudeE6 - a.latitudeE6) * Double(c.longitudeE6 - a.longitudeE6)
    return cross > 0
  }

  /// Least-squares line through the shape sampled every metre over its first 40 m, from the
  /// projection of its first point to that of its last (in degrees, as OSRM fits it).
  static func regressionLine(_ coordinates: [FixedCoordinate]) -> (FixedCoordinate, FixedCoordinate) {
    let samples = sampled(coordinates, maximumLength: farLookahead, rate: 1)
    guard samples.count >= 2 else { return (coordinates.first!, coordinates.last!) }
    let line = leastSquares(samples.map { (x: $0.longitude, y: $0.latitude) })
    let a = FixedCoordinate(latitude: line.0.y, longitude: line.0.x)
    let b = FixedCoordinate(latitude: line.1.y, longitude: line.1.x)
    return (projectedPoint(coordinates.first!, onto: a, b), projectedPoint(coordinates.last!, onto: a, b))
  }

  static func sampled(_ coordinates: [FixedCoordinate], maximumLength: Double, rate: Double) -> [FixedCoordinate] {
    var samples = [coordinates[0]]
    var carry = 0.0
    var total = 0.0
    for (a, b) in zip(coordinates, coordinates.dropFirst()) {
      if total > maximumLength { break }
      let between = Geo.distance(a, b)
      if carry + between >= rate {
        let base = rate - carry
        let count = Int(((min(maximumLength - total, between) + carry) / rate).rounded(.down))
        for k in 0..<count {
          samples.append(interpolate(interpolationFactor(base + Double(k) * rate, 0, between), a, b))
        }
        carry = between + carry - Double(count) * rate
      } else {
        carry += between
      }
      total += between
    }
    return samples
  }

  /// Points as (x: longitude, y: latitude); mostly vertical sets are fitted turned by 90°.
  static func leastSquares(_ points: [(x: Double, y: Double)]) -> ((x: Double, y: Double), (x: Double, y: Double)) {
    let xs = points.map(\.x)
    let ys = points.map(\.y)
    let (minX, maxX, minY, maxY) = (xs.min()!, xs.max()!, ys.min()!, ys.max()!)
    if maxY - minY > 2 * (maxX - minX) {
      let turned = leastSquares(points.map { (x: $0.y, y: -$0.x) })
      return ((x: -turned.0.y, y: turned.0.x), (x: -turned.1.y, y: turned.1.x))
    }
    let n = Double(points.count)
    let meanX = xs.reduce(0, +) / n
    let meanY = ys.reduce(0, +) / n
    let deviationX = (xs.reduce(0) { $0 + ($1 - meanX) * ($1 - meanX) } / (n - 1)).squareRoot()
    let deviationY = (ys.reduce(0) { $0 + ($1 - meanY) * ($1 - meanY) } / (n - 1)).squareRoot()
    let first = points.first!
    let last = points.last!
    guard deviationX >= Double.ulpOfOne, deviationY >= Double.ulpOfOne else {
      return ((first.x, first.y), (last.x, last.y))
    }
    let correlation =
      zip(xs, ys).reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) } / ((n - 1) * deviationX * deviationY)
    let slope = correlation * deviationY / deviationX
    let intercept = meanY - slope * meanX
    let offset = 0.00001
    return (
      (x: minX - offset, y: intercept + slope * (minX - offset)),
      (x: maxX + offset, y: intercept + slope * (maxX + offset))
    )
  }
}

extension Geo {
  /// OSRM's turn angle from an entry bearing to an exit bearing: 180 straight on, 0 turning back,
  /// below 180 to the right.
  static func angleBetween(_ entry: Double, _ exit: Double) -> Double {
    let offset = 360 - entry
    var rotated = exit + offset
    if rotated > 360 { rotated -= 360 }
    let angle = 540 - rotated
    return angle >= 360 ? angle - 360 : angle
  }

  static func reverse(_ bearing: Double) -> Double { bearing >= 180 ? bearing - 180 : bearing + 180 }
}
