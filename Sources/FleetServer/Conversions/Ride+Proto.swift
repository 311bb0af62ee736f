import FleetCore
import FleetProto
import Foundation

extension RideRequest {
  /// What a client may set on a wire Ride; the rest is output only.
  init(_ p: Fleetkit_V1_Ride) throws(FleetError) {
    self.init()
    pickupPoint = p.hasPickupPoint ? try TerminalLocation(p.pickupPoint, field: "ride.pickup_point") : nil
    dropoffPoint = p.hasDropoffPoint ? try TerminalLocation(p.dropoffPoint, field: "ride.dropoff_point") : nil
    intermediateDestinations = try p.intermediateDestinations.enumerated().map { (i, stop) throws(FleetError) in
      try TerminalLocation(stop, field: "ride.intermediate_destinations[\(i)]")
    }
    numberOfPassengers = p.numberOfPassengers
    tripType = try domainEnum(p.tripType, "ride.trip_type")
    requiredAttributes = try p.requiredAttributes.enumerated().map { (i, a) throws(FleetError) in
      try Attribute(a, field: "ride.required_attributes[\(i)]")
    }
    filter = p.filter
    pickupTime = p.hasPickupTime ? Date(p.pickupTime) : nil
    quoteID = p.quoteID.isEmpty ? nil : p.quoteID
    product = p.product.isEmpty ? nil : p.product
  }
}

extension Fleetkit_V1_Ride {
  init(_ view: RideView) {
    self.init()
    let ride = view.ride
    name = ride.name.description
    trip = ride.tripName.description
    state = wireEnum(view.state)
    vehicleID = view.vehicleID
    if let pickup = ride.request.pickupPoint { pickupPoint = pickup.proto }
    if let dropoff = ride.request.dropoffPoint { dropoffPoint = dropoff.proto }
    intermediateDestinations = ride.request.intermediateDestinations.map(\.proto)
    numberOfPassengers = ride.request.numberOfPassengers
    tripType = wireEnum(ride.request.tripType)
    requiredAttributes = ride.request.requiredAttributes.map(\.vehicleProto)
    filter = ride.request.filter
    createTime = ride.createTime.proto
    updateTime = ride.updateTime.proto
    if view.state == .assigned || view.state == .completed {
      if let time = ride.assignTime { assignTime = time.proto }
      if let eta = ride.assignedPickupETA { assignedPickupEta = eta.proto }
    }
    quoteID = ride.request.quoteID ?? ""
    product = ride.product ?? ""
    if let pricing = ride.pricing { self.pricing = pricing.proto }
    if let pickupTime = ride.request.pickupTime { self.pickupTime = pickupTime.proto }
    if let fare = ride.fare {
      self.fare = fare.total.proto
      fareBreakdown = fare.itemsProto
      surgeMultiplier = fare.surge.doubleValue
    }
    if let fare = ride.finalFare {
      finalFare = fare.total.proto
      finalFareBreakdown = fare.itemsProto
    }
    finalFareReason = ride.finalFareReason ?? ""
  }
}
