import FleetCore
import FleetProto
import Foundation

extension VehicleSearch {
  /// A wire SearchVehiclesRequest in domain terms; the rules are checked by `Fleet`.
  init(_ r: Maps_Fleetengine_V1_SearchVehiclesRequest) throws(FleetError) {
    self.init()
    pickupPoint = r.hasPickupPoint ? try TerminalLocation(r.pickupPoint, field: "pickup_point") : nil
    dropoffPoint = r.hasDropoffPoint ? try TerminalLocation(r.dropoffPoint, field: "dropoff_point") : nil
    pickupRadiusMeters = r.pickupRadiusMeters
    count = r.count
    minimumCapacity = r.minimumCapacity
    tripTypes = try r.tripTypes.enumerated().map { (i, t) throws(FleetError) in try domainEnum(t, "trip_types[\(i)]") }
    maximumStaleness = r.hasMaximumStaleness ? Duration(r.maximumStaleness) : nil
    vehicleTypes = try r.vehicleTypes.enumerated().map { (i, t) throws(FleetError) in
      try domainEnum(t.category, "vehicle_types[\(i)].category")
    }
    requiredAttributes = try r.requiredAttributes.enumerated().map { (i, a) throws(FleetError) in
      try Attribute(a, field: "required_attributes[\(i)]")
    }
    requiredOneOfAttributes = try r.requiredOneOfAttributes.enumerated().map { (i, list) throws(FleetError) in
      try list.attributes.enumerated().map { (j, a) throws(FleetError) in
        try Attribute(a, field: "required_one_of_attributes[\(i)].attributes[\(j)]")
      }
    }
    requiredOneOfAttributeSets = try r.requiredOneOfAttributeSets.enumerated().map { (i, list) throws(FleetError) in
      try list.attributes.enumerated().map { (j, a) throws(FleetError) in
        try Attribute(a, field: "required_one_of_attribute_sets[\(i)].attributes[\(j)]")
      }
    }
    filter = r.filter
    orderBy = try domainEnum(r.orderBy, "order_by")
    includeBackToBack = r.includeBackToBack
    tripID = r.tripID
    currentTripsPresent = try domainEnum(r.currentTripsPresent, "current_trips_present")
  }
}

extension Maps_Fleetengine_V1_VehicleMatch {
  init(_ m: VehicleMatch) {
    self.init()
    vehicle = Maps_Fleetengine_V1_Vehicle(m.vehicle)
    if let eta = m.pickupETA { vehiclePickupEta = eta.proto }
    if let metres = m.pickupDistanceMeters { vehiclePickupDistanceMeters = .init(metres) }
    vehiclePickupStraightLineDistanceMeters = .init(m.pickupStraightLineDistanceMeters)
    if let eta = m.dropoffETA { vehicleDropoffEta = eta.proto }
    if let metres = m.pickupToDropoffDistanceMeters { vehiclePickupToDropoffDistanceMeters = .init(metres) }
    tripType = wireEnum(m.tripType)
    vehicleTripsWaypoints = m.waypoints.map { w in
      var p = Maps_Fleetengine_V1_Waypoint()
      p.latLng = w.location.proto
      if let eta = w.eta { p.eta = eta.proto }
      return p
    }
    vehicleMatchType = wireEnum(m.matchType)
    requestedOrderedBy = wireEnum(m.requestedOrderedBy)
    orderedBy = wireEnum(m.orderedBy)
  }
}
