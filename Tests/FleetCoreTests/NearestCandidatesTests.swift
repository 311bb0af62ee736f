import FleetGeometry
import Foundation
import Testing

@testable import FleetCore

/// Searches read the position grid from the pickup outwards and stop once no farther cell can
/// hold a nearer candidate: they must keep exactly the candidates a read of every cell keeps.
@Suite("Nearest candidates")
struct NearestCandidatesTests {
  static func metresPerDegree(at point: LatLng) -> (latitude: Double, longitude: Double) {
    let metres = LatLng.earthRadius * .pi / 180
    return (metres, metres * cos(point.latitude * .pi / 180))
  }

  static func flatMetres(_ a: LatLng, _ b: LatLng) -> Double {
    let scale = metresPerDegree(at: b)
    var longitude = abs(a.longitude - b.longitude)
    if longitude > 180 { longitude = 360 - longitude }
    let (y, x) = ((a.latitude - b.latitude) * scale.latitude, longitude * scale.longitude)
    return (x * x + y * y).squareRoot()
  }

  @Test(arguments: [
    LatLng(latitude: -34.93, longitude: 138.6), monaco, LatLng(latitude: 10, longitude: 179.998),
    LatLng(latitude: 64.1, longitude: -0.0001),
  ])
  func theGridNearestFirstReadsTheSameCellsWithBoundsInOrder(center: LatLng) {
    var random = SeededRandom(seed: 3)
    var grid = VehicleGrid()
    for i in 0..<1500 {
      var v = Vehicle(provider: provider, id: "v\(i)")
      var longitude = center.longitude + (random.unit() - 0.5) * 0.08
      if longitude >= 180 { longitude -= 360 }
      v.lastLocation = VehicleLocation(
        location: LatLng(latitude: center.latitude + (random.unit() - 0.5) * 0.06, longitude: longitude))
      grid.update(v)
    }
    for radius in [400.0, 1500, 5000] {
      var everyCell = Set<String>()
      grid.forEach(near: center, radius: radius) { everyCell.insert($0.id) }
      var nearestFirst = Set<String>()
      var last = 0.0
      grid.forEach(
        near: center, radius: radius, nearestFirst: Self.metresPerDegree(at: center),
        while: { bound in
          #expect(bound >= last, "cells in the order of their bounds")
          last = bound
          return true
        }
      ) { v in
        nearestFirst.insert(v.id)
        #expect(Self.flatMetres(v.position, center) >= last - 1e-6, "a cell's bound is below all it holds")
      }
      #expect(nearestFirst == everyCell, "radius \(radius)")
      #expect(everyCell.count > 10)
    }
  }

  @Test func aSearchKeepsTheNearestAsIfItReadEveryCell() async throws {
    let (fleet, _) = try await makeFleet()
    var random = SeededRandom(seed: 5)
    for i in 0..<600 {
      var input = vehicleInput("car-\(i)", types: i % 7 == 0 ? [.shared] : [.exclusive, .shared])
      input.vehicle.lastLocation = VehicleLocation(
        location: LatLng(
          latitude: monaco.latitude + (random.unit() - 0.5) * 0.06,
          longitude: monaco.longitude + (random.unit() - 0.5) * 0.08))
      if i % 5 == 0 { input.vehicle.state = .offline }
      _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: "car-\(i)", vehicle: input)
    }
    var cut = 0
    for _ in 0..<40 {
      var search = VehicleSearch()
      search.pickupPoint = TerminalLocation(
        point: LatLng(
          latitude: monaco.latitude + (random.unit() - 0.5) * 0.04,
          longitude: monaco.longitude + (random.unit() - 0.5) * 0.05))
      search.pickupRadiusMeters = [400, 1000, 2500, 6000][Int(random.unit() * 4)]
      search.count = 10
      search.minimumCapacity = 1
      search.tripTypes = [.exclusive]
      search.vehicleTypes = [.auto]
      search.orderBy = .pickupPointETA
      let plan = try Fleet.SearchPlan(search)
      let now = fleet.now()
      for limit in [1, 8, 30, 64] {
        let (nearest, all) = fleet.state.withLock { s in
          (
            Fleet.searchCandidates(plan, provider: provider, in: s, now: now, nearest: limit),
            Fleet.searchCandidates(plan, provider: provider, in: s, now: now, nearest: .max)
          )
        }
        #expect(nearest.map(\.id) == Fleet.nearest(all, limit: limit).map(\.id))
        if all.count > limit { cut += 1 }
      }
    }
    #expect(cut > 40, "most searches had more candidates than they keep")
  }
}
