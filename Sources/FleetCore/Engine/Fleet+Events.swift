import FleetGeometry
import Foundation

/// The events a write causes, derived from what it changed (each entity before and after), so
/// that no operation has to remember to emit them: rides' lifecycle, vehicles going online or
/// offline and crossing zone borders.
extension Fleet {
  func events(of touched: [EntityKey: Entity], in s: State, now: Date) -> [FleetEvent] {
    var events: [FleetEvent] = []
    func add(_ type: FleetEventType, _ subject: EntityKey, _ payload: FleetEvent.Payload) {
      events.append(
        FleetEvent(
          id: FleetEvent.newID(), type: type, provider: subject.provider, subject: subject, revision: s.revision,
          position: events.count, time: now, payload: payload))
    }
    // A ride changes with its own record or with its trip's.
    var rides = Set<EntityKey>()
    for key in touched.keys where key.kind == .ride || key.kind == .trip {
      if s.rides[key.provider]?[key.id] != nil { rides.insert(EntityKey(.ride, provider: key.provider, id: key.id)) }
    }
    for key in rides.sorted(by: { $0.description < $1.description }) {
      let ride = s.rides[key.provider]![key.id]!
      let tripKey = EntityKey(.trip, provider: key.provider, id: key.id)
      let trip = s.trips[key.provider]?[key.id]
      let tripBefore: Trip? = touched[tripKey].map { if case .trip(let t) = $0 { t } else { nil } } ?? trip
      let after = RideView(ride, trip: trip)
      guard case .ride(let rideBefore)? = touched[key] ?? .ride(ride) else {
        add(after.state == .scheduled ? .rideScheduled : .rideCreated, key, .ride(after))
        continue
      }
      let before = RideView(rideBefore, trip: tripBefore)
      let statusBefore = tripBefore?.status ?? .new
      let statusAfter = trip?.status ?? .new
      if statusAfter == .arrivedAtPickup, statusBefore != .arrivedAtPickup {
        add(.rideArrivedAtPickup, key, .ride(after))
      }
      if Self.riderAboard.contains(statusAfter), statusAfter != .complete, !Self.riderAboard.contains(statusBefore) {
        add(.rideStarted, key, .ride(after))
      }
      let reassigned = after.state == .assigned && ride.assignments > rideBefore.assignments
      guard after.state != before.state || reassigned else { continue }
      switch after.state {
      case .assigned: add(.rideAssigned, key, .ride(after))
      case .completed: add(.rideCompleted, key, .ride(after))
      case .canceled: add(.rideCanceled, key, .ride(after))
      case .noVehicleFound: add(.rideNoVehicleFound, key, .ride(after))
      case .waiting, .scheduled, .unspecified: break
      }
    }
    // Most vehicle changes are reports that move a car and emit nothing: only those that may
    // emit an event are put in order (a write of reports touches hundreds of vehicles).
    let changedVehicles = touched.compactMap { key, entity -> (EntityKey, Vehicle, Vehicle?)? in
      guard key.kind == .vehicle, let vehicle = s.vehicles[key.provider]?[key.id] else { return nil }
      let before: Vehicle? = if case .vehicle(let v) = entity { v } else { nil }
      let onlineChanged = (vehicle.state == .online) != (before?.state == .online)
      let moved = vehicle.lastLocation?.location != before?.lastLocation?.location
      guard onlineChanged || (moved && configuration.serviceAreas.hasZones(provider: key.provider)) else { return nil }
      return (key, vehicle, before)
    }
    for (key, vehicle, before) in changedVehicles.sorted(by: { $0.0.description < $1.0.description }) {
      let wasOnline = before?.state == .online
      if vehicle.state == .online, !wasOnline { add(.vehicleOnline, key, .vehicle(vehicle, zone: nil)) }
      if vehicle.state != .online, wasOnline { add(.vehicleOffline, key, .vehicle(vehicle, zone: nil)) }
      let position = vehicle.lastLocation?.location
      let positionBefore = before?.lastLocation?.location
      guard position != positionBefore, configuration.serviceAreas.hasZones(provider: key.provider) else { continue }
      let zones = Self.zoneNames(at: position, provider: key.provider, areas: configuration.serviceAreas)
      let zonesBefore = Self.zoneNames(at: positionBefore, provider: key.provider, areas: configuration.serviceAreas)
      for zone in zonesBefore where !zones.contains(zone) { add(.vehicleLeftZone, key, .vehicle(vehicle, zone: zone)) }
      for zone in zones where !zonesBefore.contains(zone) {
        add(.vehicleEnteredZone, key, .vehicle(vehicle, zone: zone))
      }
    }
    return events
  }

  static func zoneNames(at point: LatLng?, provider: String, areas: ServiceAreas) -> [String] {
    guard let point else { return [] }
    return areas.zones(at: point, provider: provider).map(\.name)
  }
}
