import FleetCore
import Foundation

extension RideFacts {
  /// The facts of a trip as fleetd holds it: its ETAs from the live trip progress, the
  /// vehicle's last position and its string attributes.
  public init(snapshot: TripSnapshot, vehicle: Vehicle?) {
    let trip = snapshot.trip
    func strings(_ attributes: [Attribute]) -> [String: String] {
      var result: [String: String] = [:]
      for attribute in attributes {
        if case .string(let value) = attribute.value { result[attribute.key] = value }
      }
      return result
    }
    // The ETA of this trip's own pickup and drop-off among the vehicle's remaining legs.
    let legs = snapshot.progress?.legs ?? []
    func eta(_ type: WaypointType) -> Date? {
      legs.first { $0.waypoint.tripID == trip.id && $0.waypoint.waypointType == type }?.eta
    }
    let vehicleAttributes = strings(vehicle?.attributes ?? [])
    let location = snapshot.lastLocation ?? vehicle?.lastLocation
    self.init(
      tripID: trip.id, status: trip.status, vehicleID: trip.vehicleID, pickup: trip.pickupPoint?.point,
      dropoff: trip.dropoffPoint?.point, intermediateDestinations: trip.intermediateDestinations.map(\.point),
      intermediateDestinationIndex: Int(trip.intermediateDestinationIndex),
      // Past the pickup (or drop-off) there is no leg to it: the trip's own time stands.
      pickupETA: eta(.pickup) ?? trip.pickupTime, dropoffETA: eta(.dropOff) ?? trip.dropoffTime,
      vehicleLocation: location?.location, vehicleHeading: location?.heading.map(Double.init),
      licensePlate: vehicleAttributes["license_plate"], bookedAt: trip.createTime,
      tripAttributes: strings(trip.attributes),
      vehicleAttributes: vehicleAttributes)
  }
}
