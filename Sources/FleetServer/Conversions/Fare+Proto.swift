import FleetCore
import FleetProto
import Foundation

extension Money {
  var proto: Google_Type_Money {
    var p = Google_Type_Money()
    p.currencyCode = currency.code
    (p.units, p.nanos) = unitsAndNanos
    return p
  }
}

extension Fare {
  var itemsProto: [Fleetkit_V1_FareItem] {
    items.map { item in
      var p = Fleetkit_V1_FareItem()
      p.kind = item.kind.proto
      p.amount = item.amount.proto
      return p
    }
  }
}

extension Fare.Kind {
  var proto: Fleetkit_V1_FareItem.Kind {
    switch self {
    case .base: .base
    case .distance: .distance
    case .time: .time
    case .bookingFee: .bookingFee
    case .zoneFee: .zoneFee
    case .surge: .surge
    case .minimumAdjustment: .minimumAdjustment
    case .cancellationFee: .cancellationFee
    }
  }
}

extension Product.Pricing {
  var proto: Fleetkit_V1_Pricing {
    switch self {
    case .upfront: .upfront
    case .metered: .metered
    }
  }
}

extension QuoteRequest {
  init(_ p: Fleetkit_V1_QuoteRideRequest) throws(FleetError) {
    self.init()
    pickupPoint = p.hasPickupPoint ? try TerminalLocation(p.pickupPoint, field: "pickup_point") : nil
    dropoffPoint = p.hasDropoffPoint ? try TerminalLocation(p.dropoffPoint, field: "dropoff_point") : nil
    intermediateDestinations = try p.intermediateDestinations.enumerated().map { (i, stop) throws(FleetError) in
      try TerminalLocation(stop, field: "intermediate_destinations[\(i)]")
    }
    numberOfPassengers = p.numberOfPassengers
    pickupTime = p.hasPickupTime ? Date(p.pickupTime) : nil
  }
}

extension Fleetkit_V1_Quote {
  init(_ quote: RideQuote) {
    self.init()
    quoteID = quote.id
    product = quote.terms.product
    pricing = quote.pricing.proto
    if let seconds = quote.pickupSeconds {
      pickupEta = Swift.Duration.seconds(seconds.rounded()).proto
    }
    pickupEtaUnavailableReason = quote.pickupUnavailableReason ?? ""
    tripDistanceMeters = Int32(clamping: Int64(quote.terms.route.metres.rounded()))
    tripDuration = Swift.Duration.seconds(quote.terms.route.seconds.rounded()).proto
    fare = quote.terms.fare.total.proto
    fareBreakdown = quote.terms.fare.itemsProto
    surgeMultiplier = quote.surge.multiplier.doubleValue
    surgeZone = quote.surge.zone
    surgeReason = quote.surge.reason
    expireTime = quote.terms.expireTime.proto
    if let seconds = quote.maximumTripSeconds {
      maximumTripDuration = Swift.Duration.seconds(seconds.rounded()).proto
    }
  }
}

extension Fleetkit_V1_Area {
  init(_ view: AreaView) {
    self.init()
    name = view.region.name
    kind = view.region.kind == .zone ? .zone : .serviceArea
    polygons = view.area.polygons.map { rings in
      var polygon = Fleetkit_V1_Area.Polygon()
      polygon.rings = rings.map { points in
        var ring = Fleetkit_V1_Area.Ring()
        ring.points = points.map(\.proto)
        return ring
      }
      return polygon
    }
    if let fee = view.fee { self.fee = fee.proto }
    if let reading = view.surge {
      surge = true
      surgeMultiplier = reading.multiplier.doubleValue
      surgeReason = reading.reason
    }
  }
}
