import FleetCore
import FleetProto
import Foundation

extension Trip {
  /// The client-settable fields of a wire Trip. `field` prefixes error messages ("trip").
  init(input p: Maps_Fleetengine_V1_Trip, provider: String, id: String, field: String = "trip") throws(FleetError) {
    self.init(provider: provider, id: id)
    vehicleID = p.vehicleID
    status = try domainEnum(p.tripStatus, "\(field).trip_status")
    type = try domainEnum(p.tripType, "\(field).trip_type")
    pickupPoint = p.hasPickupPoint ? try TerminalLocation(p.pickupPoint, field: "\(field).pickup_point") : nil
    actualPickupPoint =
      p.hasActualPickupPoint ? try StopLocation(p.actualPickupPoint, field: "\(field).actual_pickup_point") : nil
    actualPickupArrivalPoint =
      p.hasActualPickupArrivalPoint
      ? try StopLocation(p.actualPickupArrivalPoint, field: "\(field).actual_pickup_arrival_point") : nil
    intermediateDestinations = try p.intermediateDestinations.enumerated().map { (i, stop) throws(FleetError) in
      try TerminalLocation(stop, field: "\(field).intermediate_destinations[\(i)]")
    }
    intermediateDestinationsVersion = p.hasIntermediateDestinationsVersion ? Date(p.intermediateDestinationsVersion) : nil
    intermediateDestinationIndex = p.intermediateDestinationIndex
    actualIntermediateDestinationArrivalPoints = try p.actualIntermediateDestinationArrivalPoints.enumerated().map {
      (i, stop) throws(FleetError) in
      try StopLocation(stop, field: "\(field).actual_intermediate_destination_arrival_points[\(i)]")
    }
    actualIntermediateDestinations = try p.actualIntermediateDestinations.enumerated().map {
      (i, stop) throws(FleetError) in
      try StopLocation(stop, field: "\(field).actual_intermediate_destinations[\(i)]")
    }
    dropoffPoint = p.hasDropoffPoint ? try TerminalLocation(p.dropoffPoint, field: "\(field).dropoff_point") : nil
    actualDropoffPoint =
      p.hasActualDropoffPoint ? try StopLocation(p.actualDropoffPoint, field: "\(field).actual_dropoff_point") : nil
    numberOfPassengers = p.numberOfPassengers
    attributes = try p.attributes.enumerated().map { (i, a) throws(FleetError) in
      try Attribute(a, field: "\(field).attributes[\(i)]")
    }
  }
}

func tripWaypoints(_ list: [Maps_Fleetengine_V1_TripWaypoint], field: String) throws(FleetError) -> [TripWaypoint] {
  try list.enumerated().map { (i, w) throws(FleetError) in try TripWaypoint(w, field: "\(field)[\(i)]") }
}

extension Maps_Fleetengine_V1_Trip {
  /// The wire Trip for a response. Input-only fields are never returned.
  init(_ snapshot: TripSnapshot) {
    self.init()
    let t = snapshot.trip
    name = t.name.description
    vehicleID = t.vehicleID
    tripStatus = wireEnum(t.status)
    tripType = wireEnum(t.type)
    if let pickup = t.pickupPoint { pickupPoint = pickup.proto }
    if let time = t.pickupTime { pickupTime = time.proto }
    intermediateDestinations = t.intermediateDestinations.map(\.proto)
    if let version = t.intermediateDestinationsVersion { intermediateDestinationsVersion = version.proto }
    intermediateDestinationIndex = t.intermediateDestinationIndex
    if let dropoff = t.dropoffPoint { dropoffPoint = dropoff.proto }
    if let time = t.dropoffTime { dropoffTime = time.proto }
    remainingWaypoints = snapshot.remainingWaypoints.map(\.proto)
    if let vehicleWaypoints = snapshot.vehicleWaypoints { self.vehicleWaypoints = vehicleWaypoints.map(\.proto) }
    if let version = t.remainingWaypointsVersion, !t.status.isTerminal, t.isAssigned {
      remainingWaypointsVersion = version.proto
    }
    numberOfPassengers = t.numberOfPassengers
    if let location = snapshot.lastLocation { lastLocation = location.proto }
    view = wireEnum(snapshot.view)
    attributes = t.attributes.map(\.tripProto)
  }
}
