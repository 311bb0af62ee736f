/// Keeps a vehicle's ordered waypoint list in step with its trips. Pure: takes the current list
/// and the trips, returns the new list.
public enum WaypointPlanner {
  /// Rebuilds `current` after `trip` changed: waypoints the trip has passed are removed, moved
  /// ones are replaced in place, a newly assigned trip is appended (back-to-back), and a trip that
  /// finished or left the vehicle disappears. Other trips' waypoints keep their order.
  public static func update(_ current: [TripWaypoint], after trip: Trip, onVehicle vehicleID: String) -> [TripWaypoint]
  {
    let wanted = trip.vehicleID == vehicleID ? trip.ownRemainingWaypoints : []
    let slots = current.indices.filter { current[$0].tripID == trip.id }
    let existing = slots.map { current[$0] }
    if existing == wanted { return current }
    var result = current
    if slots.isEmpty {
      return current + wanted
    }
    if wanted.count == existing.count,
      zip(wanted, existing).allSatisfy({ $0.waypointType == $1.waypointType })
    {
      // Same stops, new locations: replace in place.
      for (slot, waypoint) in zip(slots, wanted) { result[slot] = waypoint }
      return result
    }
    if wanted.count < existing.count,
      zip(existing.suffix(wanted.count), wanted).allSatisfy({ $0.waypointType == $1.waypointType })
    {
      // The trip moved past its first waypoints: drop them, keep the rest where they are.
      let passed = Set(slots.prefix(existing.count - wanted.count))
      for (slot, waypoint) in zip(slots.suffix(wanted.count), wanted) { result[slot] = waypoint }
      return result.enumerated().filter { !passed.contains($0.offset) }.map(\.element)
    }
    // Anything else (stops added or removed): put the trip's waypoints where its first one was.
    result.removeAll { $0.tripID == trip.id }
    // Nothing of this trip precedes its first slot, so that index is still valid after removal.
    result.insert(contentsOf: wanted, at: min(slots[0], result.count))
    return result
  }

  /// Checks a client-supplied order (Trip.vehicle_waypoints or Vehicle.waypoints): it must hold
  /// exactly the remaining waypoints of the vehicle's trips, each trip's in its own order, and an
  /// EXCLUSIVE trip's waypoints must not interleave with another trip's (Fleet Engine's rules).
  public static func validateOrder(
    _ proposed: [TripWaypoint], trips: [Trip], field: String
  ) throws(FleetError) -> [TripWaypoint] {
    let byID = Dictionary(trips.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    for (i, waypoint) in proposed.enumerated() where byID[waypoint.tripID] == nil {
      throw .invalid("\(field)[\(i)].trip_id '\(waypoint.tripID)' is not an active trip of the vehicle")
    }
    for trip in trips {
      let own = trip.ownRemainingWaypoints
      let given = proposed.filter { $0.tripID == trip.id }
      guard given.count == own.count else {
        throw .invalid(
          "\(field) must contain all \(own.count) remaining waypoints of trip '\(trip.id)' and no others, got \(given.count)"
        )
      }
      for (g, o) in zip(given, own) where g.waypointType != o.waypointType || g.location.point != o.location.point {
        throw .invalid(
          "\(field): waypoints of trip '\(trip.id)' must be in the order pickup, intermediate destinations, drop-off, at the trip's locations"
        )
      }
      if trip.type == .exclusive, let first = proposed.firstIndex(where: { $0.tripID == trip.id }) {
        let span = proposed[first..<(first + given.count)]
        guard span.allSatisfy({ $0.tripID == trip.id }) else {
          throw .invalid("\(field): waypoints of EXCLUSIVE trip '\(trip.id)' must not interleave with other trips")
        }
      }
    }
    return proposed
  }

  /// A trip's remaining waypoints as the rider sees them: the vehicle's list up to and including
  /// the trip's last waypoint.
  public static func remaining(for tripID: String, in vehicleWaypoints: [TripWaypoint]) -> [TripWaypoint] {
    guard let last = vehicleWaypoints.lastIndex(where: { $0.tripID == tripID }) else { return [] }
    return Array(vehicleWaypoints[...last])
  }
}
