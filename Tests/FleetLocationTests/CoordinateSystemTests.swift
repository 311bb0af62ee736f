import FleetCore
import FleetGeometry
import Foundation
import Testing

@testable import FleetLocation

@Suite struct CoordinateSystemTests {
  // Tiananmen, as in the reference implementations' own examples (wandergis/coordtransform).
  static let beijing = LatLng(latitude: 39.915, longitude: 116.404)

  @Test func forwardTransformsMatchThePublishedValues() {
    let gcj = Self.beijing.converted(from: .wgs84, to: .gcj02)
    #expect(abs(gcj.longitude - 116.41024449916938) < 1e-12)
    #expect(abs(gcj.latitude - 39.91640428150164) < 1e-12)
    let bd = Self.beijing.converted(from: .gcj02, to: .bd09)
    #expect(abs(bd.longitude - 116.41036949371029) < 1e-12)
    #expect(abs(bd.latitude - 39.92133699351021) < 1e-12)
  }

  @Test func inversesAreExactWhereTheOneStepFormulaIsNot() {
    // Over mainland China: the exact inverse maps back to within a millimetre; the common
    // one-step inverse (subtract the offset at the GCJ-02 point) does not.
    var worstExact = 0.0
    var worstOneStep = 0.0
    for lat in stride(from: 18.0, through: 53, by: 0.5) {
      for lng in stride(from: 74.0, through: 134, by: 0.5) {
        let gcj = LatLng(latitude: lat, longitude: lng)
        let exact = gcj.converted(from: .gcj02, to: .wgs84)
        worstExact = max(worstExact, exact.converted(from: .wgs84, to: .gcj02).distance(to: gcj))
        let shifted = gcj.converted(from: .wgs84, to: .gcj02)
        let oneStep = LatLng(
          latitude: 2 * gcj.latitude - shifted.latitude, longitude: 2 * gcj.longitude - shifted.longitude)
        worstOneStep = max(worstOneStep, oneStep.converted(from: .wgs84, to: .gcj02).distance(to: gcj))
      }
    }
    print("worst GCJ-02 → WGS-84 error: exact \(worstExact) m, one-step \(worstOneStep) m")
    #expect(worstExact < 0.001)
    #expect(worstOneStep > 1)
    // The published one-step BD-09 → GCJ-02 is close; the exact one maps back to the point.
    let published = LatLng(latitude: 39.90865673957631, longitude: 116.39762729119315)
    let gcj = Self.beijing.converted(from: .bd09, to: .gcj02)
    #expect(gcj.distance(to: published) < 1)
    #expect(gcj.converted(from: .gcj02, to: .bd09).distance(to: Self.beijing) < 0.001)
  }

  static let pairs: [(CoordinateSystem, CoordinateSystem)] = CoordinateSystem.allCases.flatMap { a in
    CoordinateSystem.allCases.filter { $0 != a }.map { (a, $0) }
  }

  @Test("round trips in all six directions, across China's bounds and near their edges")
  func roundTrips() {
    var points: [LatLng] = []
    // A grid over and around the rectangle, and points a little way either side of each edge.
    for lat in stride(from: -5.0, through: 60, by: 2.5) {
      for lng in stride(from: 68.0, through: 142, by: 2.5) { points.append(LatLng(latitude: lat, longitude: lng)) }
    }
    for offset in [-0.05, -0.02, 0.02, 0.05] {
      for lat in stride(from: 5.0, through: 55, by: 5) {
        points.append(LatLng(latitude: lat, longitude: 72.004 + offset))
        points.append(LatLng(latitude: lat, longitude: 137.8347 + offset))
      }
      for lng in stride(from: 75.0, through: 135, by: 5) {
        points.append(LatLng(latitude: 0.8293 + offset, longitude: lng))
        points.append(LatLng(latitude: 55.8271 + offset, longitude: lng))
      }
    }
    var worst = 0.0
    for (from, to) in Self.pairs {
      for p in points {
        let back = p.converted(from: from, to: to).converted(from: to, to: from)
        worst = max(worst, back.distance(to: p))
      }
    }
    #expect(worst < 0.01, "worst round trip \(worst) m")
  }

  @Test("on the edges themselves, the inverse still gives a point that maps back exactly")
  func edgesInvertExactly() {
    var worst = 0.0
    for offset in stride(from: -0.012, through: 0.012, by: 0.0005) {
      var points: [LatLng] = []
      for lat in stride(from: 5.0, through: 55, by: 5) {
        points.append(LatLng(latitude: lat, longitude: 72.004 + offset))
        points.append(LatLng(latitude: lat, longitude: 137.8347 + offset))
      }
      for lng in stride(from: 75.0, through: 135, by: 5) {
        points.append(LatLng(latitude: 0.8293 + offset, longitude: lng))
        points.append(LatLng(latitude: 55.8271 + offset, longitude: lng))
      }
      for wgs in points {
        let gcj = wgs.converted(from: .wgs84, to: .gcj02)
        let e = gcj.converted(from: .gcj02, to: .wgs84).converted(from: .wgs84, to: .gcj02).distance(to: gcj)
        worst = max(worst, e)
      }
    }
    #expect(worst < 0.01, "worst \(worst) m")
  }

  @Test func outsideChinaGCJ02IsWGS84() {
    let monaco = LatLng(latitude: 43.7384, longitude: 7.4246)
    #expect(monaco.converted(from: .wgs84, to: .gcj02) == monaco)
    #expect(monaco.converted(from: .gcj02, to: .wgs84) == monaco)
    // BD-09 is an offset of GCJ-02 everywhere (Baidu applies it worldwide).
    #expect(monaco.converted(from: .wgs84, to: .bd09) != monaco)
    #expect(monaco.converted(from: .wgs84, to: .bd09).converted(from: .bd09, to: .wgs84).distance(to: monaco) < 0.01)
  }

  @Test func theOffsetIsHundredsOfMetresInChina() {
    let shanghai = LatLng(latitude: 31.2304, longitude: 121.4737)
    let shift = shanghai.converted(from: .wgs84, to: .gcj02).distance(to: shanghai)
    #expect(shift > 100 && shift < 1000)
  }
}
