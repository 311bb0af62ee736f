import Foundation

/// A trip as fleetd stores it. Server-derived values (remaining waypoints, the vehicle's last
/// location) are not stored here; `TripSnapshot` adds them for responses.
public struct Trip: Sendable, Hashable, Codable {
  public var provider: String
  public var id: String
  /// Empty when unassigned.
  public var vehicleID: String = ""
  public var status: TripStatus = .new
  public var type: TripType = .unknown
  public var pickupPoint: TerminalLocation?
  public var actualPickupPoint: StopLocation?
  public var actualPickupArrivalPoint: StopLocation?
  public var pickupTime: Date?
  public var intermediateDestinations: [TerminalLocation] = []
  public var intermediateDestinationsVersion: Date?
  public var intermediateDestinationIndex: Int32 = 0
  public var actualIntermediateDestinationArrivalPoints: [StopLocation] = []
  public var actualIntermediateDestinations: [StopLocation] = []
  public var dropoffPoint: TerminalLocation?
  public var actualDropoffPoint: StopLocation?
  public var dropoffTime: Date?
  public var numberOfPassengers: Int32 = 0
  public var attributes: [Attribute] = []
  public var remainingWaypointsVersion: Date?
  public var createTime: Date = .distantPast
  public var updateTime: Date = .distantPast
  /// Store revision; increases with every change (see `FleetStore`).
  public var revision: UInt64 = 0

  public init(provider: String, id: String) {
    self.provider = provider
    self.id = id
  }

  public var name: ResourceName { ResourceName(provider: provider, kind: .trips, id: id) }
  public var isAssigned: Bool { !vehicleID.isEmpty }

  /// The waypoints this trip still has to visit, in order, for its current status.
  public var ownRemainingWaypoints: [TripWaypoint] {
    func waypoint(_ location: TerminalLocation, _ type: WaypointType) -> TripWaypoint {
      TripWaypoint(location: location, tripID: id, waypointType: type)
    }
    let intermediates = { (from: Int) -> [TripWaypoint] in
      self.intermediateDestinations.dropFirst(max(0, from)).map { waypoint($0, .intermediateDestination) }
    }
    let dropoff = dropoffPoint.map { [waypoint($0, .dropOff)] } ?? []
    switch status {
    case .unknown, .complete, .canceled:
      return []
    case .new, .enrouteToPickup, .arrivedAtPickup:
      return (pickupPoint.map { [waypoint($0, .pickup)] } ?? []) + intermediates(0) + dropoff
    case .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination:
      return intermediates(Int(intermediateDestinationIndex)) + dropoff
    case .enrouteToDropoff:
      return dropoff
    }
  }
}

/// A trip with the values the server derives for a response.
public struct TripSnapshot: Sendable, Hashable {
  public var trip: Trip
  /// The vehicle's waypoints up to and including this trip's last one.
  public var remainingWaypoints: [TripWaypoint]
  /// All of the vehicle's waypoints; only CreateTrip and UpdateTrip return them.
  public var vehicleWaypoints: [TripWaypoint]?
  public var lastLocation: VehicleLocation?
  public var view: TripView
  /// The route and ETAs to the remaining waypoints, when the server computes them.
  public var progress: TripRouteProgress?

  public init(
    trip: Trip, remainingWaypoints: [TripWaypoint], vehicleWaypoints: [TripWaypoint]?,
    lastLocation: VehicleLocation?, view: TripView
  ) {
    self.trip = trip
    self.remainingWaypoints = remainingWaypoints
    self.vehicleWaypoints = vehicleWaypoints
    self.lastLocation = lastLocation
    self.view = view
  }
}
