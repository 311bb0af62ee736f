import FleetDispatch
import FleetGeometry
import Foundation
import Testing

@testable import FleetCore

extension Harness {
  @discardableResult
  func book(_ id: String, from: LatLng, to: LatLng, type: TripType, passengers: Int32) async throws -> RideView {
    var request = request(from: from, to: to, type: type)
    request.numberOfPassengers = passengers
    return try await fleet.createRide(caller: admin, provider: "acme", rideID: id, request: request)
  }

  func stops(_ vehicleID: String) throws -> [String] {
    try vehicleState(vehicleID).waypoints.map { "\($0.tripID)/\($0.waypointType == .pickup ? "p" : "d")" }
  }
}

@Suite("Pooled rides")
struct PoolingTests {
  @Test func twoRidersGoingTheSameWayShareOneCarAndEachSeesTheirOwnJourney() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("near", at: north(-200), types: [.shared])
    try await h.vehicle("far", at: north(-600), types: [.shared])
    try await h.book("r1", from: north(0), to: north(3000), type: .shared)
    try await h.book("r2", from: north(100), to: north(3100), type: .shared)
    let round = try await h.dispatcher().round()
    #expect(Set(round.assigned.map(\.vehicleID)) == ["near"])
    #expect(round.assigned.allSatisfy { $0.pooled })
    #expect(try h.stops("near") == ["r1/p", "r2/p", "r1/d", "r2/d"])
    #expect(try h.stops("far").isEmpty)
    // Each rider's bounds are kept with the ride, for riders who join later.
    let ride = try h.ride("r1").ride
    #expect(ride.latestPickup != nil && ride.latestDropoff != nil && ride.directSeconds != nil)
    // The rider's app sees the other rider's stops on the way, not whose they are.
    let consumer = Caller(provider: "acme", role: .consumer, tripID: "r1")
    let shown = try h.fleet.getTrip(caller: consumer, name: ResourceName(provider: "acme", kind: .trips, id: "r1"))
    #expect(shown.remainingWaypoints.map(\.tripID) == ["r1", "", "r1"])
  }

  @Test func aPooledProductsOwnBoundsHoldItsRiders() async throws {
    // Two SHARED products alike but for the detour their riders accept: sharing costs each of the
    // two rides below about a tenth more time aboard.
    let tariffs = try Tariffs(
      json: Data(
        #"""
        {"providers": {"acme": {"currency": "EUR", "products": [
          {"name": "pool", "vehicleCategory": "AUTO", "tripType": "SHARED", "seats": 1, "pricing": "upfront"},
          {"name": "pool-direct", "vehicleCategory": "AUTO", "tripType": "SHARED", "seats": 1, "pricing": "upfront",
           "poolMaxDetour": "1.05"}]}}}
        """#.utf8), source: "tariffs.json")
    for (product, shares) in [("pool", true), ("pool-direct", false)] {
      let h = try await Harness.make(tariffs: tariffs)
      defer { h.remove() }
      try await h.vehicle("near", at: north(-200), types: [.shared])
      try await h.vehicle("far", at: north(-600), types: [.shared])
      let turnOff = LatLng(latitude: north(3000).latitude, longitude: origin.longitude + 300 / 80_400)
      for (id, from, to) in [("r1", north(0), north(3000)), ("r2", north(100), turnOff)] {
        var request = h.request(from: from, to: to, type: .shared)
        request.product = product
        _ = try await h.fleet.createRide(caller: h.admin, provider: "acme", rideID: id, request: request)
      }
      // The bounds are kept with the ride, as its product had them when it was booked.
      #expect(try h.ride("r1").ride.pooling?.maximumDetour == (shares ? nil : 1.05))
      let round = try await h.dispatcher().round()
      #expect(round.assigned.count == 2)
      #expect(Set(round.assigned.map(\.vehicleID)).count == (shares ? 1 : 2), "\(product)")
    }
  }

  @Test func exclusiveRidersRideAloneAndRidesGoingApartDoNotShare() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("a", at: north(-200))
    try await h.vehicle("b", at: north(-300))
    try await h.vehicle("c", at: north(-400))
    try await h.book("alone", from: north(0), to: north(3000), type: .exclusive)
    try await h.book("s1", from: north(50), to: north(3000), type: .shared)
    // Going the other way: riding with s1 would take it far beyond its detour bound.
    try await h.book("s2", from: north(100), to: north(-3000), type: .shared)
    _ = try await h.dispatcher().round()
    for car in ["a", "b", "c"] {
      let trips = Set(try h.stops(car).map { String($0.split(separator: "/")[0]) })
      #expect(trips.count <= 1, "\(car) carries \(trips)")
    }
    #expect(try ["alone", "s1", "s2"].allSatisfy { try h.ride($0).state == .assigned })
  }

  /// A SHARED trip the provider's backend made through the Trips API has no ride, so no bounds
  /// of its own to say how long it may wait: the dispatcher never delays its stops. Riding along
  /// first would cost it only the new rider's boarding, and the closer car would take the rider
  /// that way without the rule.
  @Test func aTripMadeThroughTheTripsAPIIsNeverDelayedByPooledRiders() async throws {
    let h = try await Harness.make()
    defer { h.remove() }
    try await h.vehicle("near", at: north(-200), types: [.shared])
    try await h.vehicle("far", at: north(-900), types: [.shared])
    var api = Trip(provider: "acme", id: "api")
    api.type = .shared
    api.pickupPoint = TerminalLocation(point: north(2500))
    api.dropoffPoint = TerminalLocation(point: north(4000))
    api.vehicleID = "near"
    _ = try await h.fleet.createTrip(caller: h.admin, provider: "acme", tripID: "api", trip: api)
    try await h.book("r1", from: north(0), to: north(1000), type: .shared)
    _ = try await h.dispatcher().round()
    #expect(try h.stops("near") == ["api/p", "api/d"])
    #expect(try h.ride("r1").vehicleID == "far")
  }

  @Test func aRoundNeverGivesACarMoreThanItsSeatsOrBreaksARidersBound() async throws {
    var random = SystemRandomNumberGenerator()
    var sharedCars = 0
    for trial in 0..<4 {
      let h = try await Harness.make()
      defer { h.remove() }
      var capacity: [String: Int32] = [:]
      for i in 0..<4 {
        var v = Vehicle(provider: "acme", id: "car\(i)")
        v.state = .online
        v.supportedTripTypes = [.exclusive, .shared]
        v.maximumCapacity = Int32.random(in: 2...4, using: &random)
        v.category = .auto
        v.lastLocation = VehicleLocation(location: north(Double.random(in: -2000...2000, using: &random)))
        capacity[v.id] = v.maximumCapacity
        _ = try await h.fleet.createVehicle(
          caller: h.admin, provider: "acme", vehicleID: v.id, vehicle: VehicleInput(vehicle: v))
      }
      var passengers: [String: Int32] = [:]
      for r in 0..<10 {
        let from = Double.random(in: -2000...2000, using: &random)
        let to = from + Double.random(in: -4000...4000, using: &random)
        let riders = Int32.random(in: 1...2, using: &random)
        let type: TripType = r % 4 == 3 ? .exclusive : .shared
        try await h.book("r\(r)", from: north(from), to: north(to), type: type, passengers: riders)
        passengers["r\(r)"] = riders
        // Rounds as rides come in: later riders join cars with riders already assigned.
        if r % 3 == 2 { _ = try await h.dispatcher().round() }
      }
      _ = try await h.dispatcher().round()
      let travel = StraightLineTravel()
      for id in capacity.keys.sorted() {
        let car = try h.vehicleState(id)
        var load: Int32 = 0
        var t = 0.0
        var at = car.lastLocation!.location!
        var aboard: Set<String> = []
        if Set(car.waypoints.map(\.tripID)).count > 1 { sharedCars += 1 }
        for stop in car.waypoints {
          t += travel.legs(through: [at, stop.location.point], now: h.clock.now)![0].seconds
          at = stop.location.point
          let ride = try h.ride(stop.tripID).ride
          if stop.waypointType == .pickup {
            // Nobody boards beside an EXCLUSIVE rider, and an EXCLUSIVE rider boards alone.
            let sharedAboard = try aboard.allSatisfy { try h.ride($0).ride.request.tripType == .shared }
            #expect(sharedAboard, "trial \(trial)")
            if ride.request.tripType == .exclusive { #expect(aboard.isEmpty, "trial \(trial)") }
            if let latest = ride.latestPickup { #expect(t <= latest.timeIntervalSince(h.clock.now) + 1) }
            load += passengers[stop.tripID]!
            aboard.insert(stop.tripID)
            #expect(load <= capacity[id]!, "trial \(trial): \(id) carries \(load)")
            t += RideSharing.pickupDwellSeconds
          } else {
            if let latest = ride.latestDropoff {
              #expect(t <= latest.timeIntervalSince(h.clock.now) + 1, "trial \(trial): \(stop.tripID) late")
            }
            load -= passengers[stop.tripID]!
            aboard.remove(stop.tripID)
          }
        }
      }
    }
    // Cars did carry several rides: the checks above were put to the test.
    #expect(sharedCars > 0)
  }

  @Test func theGroupsStepNeverGivesAVehicleOrARideTwice() {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<200 {
      let rides = Int.random(in: 1...6, using: &random)
      var shared: [SharedOption] = []
      for _ in 0..<Int.random(in: 0...20, using: &random) {
        let size = Int.random(in: 1...3, using: &random)
        let members = Array(Array(0..<rides).shuffled(using: &random).prefix(size)).sorted()
        shared.append(
          SharedOption(
            vehicleID: "v\(Int.random(in: 0..<4, using: &random))", rides: members, plannedStops: [], visits: [],
            pickupSeconds: members.map { _ in Double.random(in: 0...600, using: &random) },
            dropoffSeconds: members.map { _ in 900 }, directSeconds: members.map { _ in 300 },
            vehiclePosition: LatLng(latitude: 43.73, longitude: 7.42),
            cost: Double.random(in: 0...2000, using: &random)))
      }
      let choices = Pooling.plan(
        rides: rides, shared: shared, oneToOne: Array(repeating: [], count: rides), policy: .batched)
      var vehicles: [String] = []
      var served: [Int] = []
      for choice in choices {
        guard case .shared(let option) = choice else { continue }
        vehicles.append(option.vehicleID)
        served += option.rides
      }
      #expect(Set(vehicles).count == vehicles.count)
      #expect(Set(served).count == served.count)
      // The largest groups first.
      let groupsServed = choices.compactMap { c -> Int? in
        if case .shared(let o) = c, o.rides.count > 1 { return o.rides.count } else { return nil }
      }
      #expect(groupsServed == groupsServed.sorted(by: >))
    }
  }
}
