import FleetCore
import FleetProto

/// fleetkit.v1.Rides, FleetKit's booking API: decode → one domain call → encode, as the
/// Fleet Engine RPCs. Served only when fleetd dispatches (`fleetd serve --dispatch`).
extension FleetRPCs {
  func checkDispatching() throws(FleetError) {
    guard dispatching else {
      throw FleetError(
        .unimplemented, "the booking API needs the dispatcher: start fleetd with `fleetd serve --dispatch`")
    }
  }

  /// Checked and priced off the event loops (the fare routes the ride, like a quote), then
  /// written.
  func createRide(_ r: Fleetkit_V1_CreateRideRequest, _ caller: Caller) async throws(FleetError) -> Fleetkit_V1_Ride {
    try checkDispatching()
    let parent = try ProviderName(parsing: r.parent)
    guard r.hasRide else { throw .invalid("ride is required") }
    let (request, rideID, fleet) = (try RideRequest(r.ride), r.rideID, self.fleet)
    let prepared = try await OffLoop.run { () throws(FleetError) in
      try fleet.prepareRide(caller: caller, provider: parent.provider, rideID: rideID, request: request)
    }
    return Fleetkit_V1_Ride(try await fleet.createRide(prepared))
  }

  func getRide(_ r: Fleetkit_V1_GetRideRequest, _ caller: Caller) throws(FleetError) -> Fleetkit_V1_Ride {
    try checkDispatching()
    return Fleetkit_V1_Ride(try fleet.getRide(caller: caller, name: try ResourceName(parsing: r.name, kind: .rides)))
  }

  func listRides(_ r: Fleetkit_V1_ListRidesRequest, _ caller: Caller) throws(FleetError)
    -> Fleetkit_V1_ListRidesResponse
  {
    try checkDispatching()
    let parent = try ProviderName(parsing: r.parent)
    let (rides, next) = try fleet.listRides(
      caller: caller, provider: parent.provider, pageSize: r.pageSize, pageToken: r.pageToken)
    var response = Fleetkit_V1_ListRidesResponse()
    response.rides = rides.map(Fleetkit_V1_Ride.init)
    response.nextPageToken = next
    return response
  }

  func cancelRide(_ r: Fleetkit_V1_CancelRideRequest, _ caller: Caller) async throws(FleetError) -> Fleetkit_V1_Ride {
    try checkDispatching()
    return Fleetkit_V1_Ride(
      try await fleet.cancelRide(caller: caller, name: try ResourceName(parsing: r.name, kind: .rides)))
  }

  /// Off the event loops: a quote routes the ride and its nearest cars.
  func quoteRide(_ r: Fleetkit_V1_QuoteRideRequest, _ caller: Caller) async throws(FleetError)
    -> Fleetkit_V1_QuoteRideResponse
  {
    try checkDispatching()
    let parent = try ProviderName(parsing: r.parent)
    let request = try QuoteRequest(r)
    let fleet = self.fleet
    let quotes = try await OffLoop.run { () throws(FleetError) in
      try fleet.quoteRide(caller: caller, provider: parent.provider, request: request)
    }
    var response = Fleetkit_V1_QuoteRideResponse()
    response.quotes = quotes.map(Fleetkit_V1_Quote.init)
    return response
  }

  func listAreas(_ r: Fleetkit_V1_ListAreasRequest, _ caller: Caller) throws(FleetError)
    -> Fleetkit_V1_ListAreasResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var response = Fleetkit_V1_ListAreasResponse()
    response.areas = try fleet.listAreas(caller: caller, provider: parent.provider).map(Fleetkit_V1_Area.init)
    return response
  }
}
