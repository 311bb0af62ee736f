import FleetCore
import FleetGeometry
import FleetProto
import FleetRideStatus
import Foundation
import SwiftProtobuf

/// Every RPC as decode → one domain call → encode, over the wire messages. The gRPC services and
/// the REST routes both call these, so the two transports cannot drift apart.
struct FleetRPCs: Sendable {
  let fleet: Fleet
  var rideStatusMapping = RideStatusMapping()
  /// Whether fleetd runs the dispatcher, which the booking API needs.
  var dispatching = false

  // MARK: Ride status (FleetKit's own, over REST)

  /// The trip's live ride status in SiriKit's shape, with GetTrip's authorization; the ride
  /// identifier defaults to the trip ID. A status that breaks a ride-status rule (a trip in
  /// an unknown state) is refused, never sent: FAILED_PRECONDITION names the rule.
  func rideStatus(name: String, rideIdentifier: String?, _ caller: Caller, now: Date = Date()) throws(FleetError)
    -> RideStatus
  {
    let trip = try ResourceName(parsing: name, kind: .trips)
    let (snapshot, vehicle) = try fleet.tripAndVehicle(caller: caller, name: trip)
    let identifier = rideIdentifier ?? trip.id
    let status = rideStatusMapping.status(
      for: RideFacts(snapshot: snapshot, vehicle: vehicle), rideIdentifier: identifier, now: now)
    do {
      try RideStatusValidator(rideIdentifier: identifier).validate(status)
    } catch {
      throw .precondition("trip '\(trip.id)' has no valid ride status now: \(error.message)")
    }
    return status
  }

  // MARK: TripService

  func createTrip(_ r: Maps_Fleetengine_V1_CreateTripRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_Trip
  {
    let parent = try ProviderName(parsing: r.parent)
    guard r.hasTrip else { throw .invalid("trip is required") }
    let trip = try Trip(input: r.trip, provider: parent.provider, id: r.tripID)
    let order = try tripWaypoints(r.trip.vehicleWaypoints, field: "trip.vehicle_waypoints")
    return Maps_Fleetengine_V1_Trip(
      try await fleet.createTrip(
        caller: caller, provider: parent.provider, tripID: r.tripID, trip: trip, vehicleWaypoints: order))
  }

  func getTrip(_ r: Maps_Fleetengine_V1_GetTripRequest, _ caller: Caller) throws(FleetError) -> Maps_Fleetengine_V1_Trip
  {
    let name = try ResourceName(parsing: r.name, kind: .trips)
    let view: TripView = try domainEnum(r.view, "view")
    let format: PolylineFormat = try domainEnum(r.routeFormatType, "route_format_type")
    let versions = TripVersions(
      currentRouteSegment: r.hasCurrentRouteSegmentVersion ? Date(r.currentRouteSegmentVersion) : nil,
      currentRouteSegmentTraffic: r.hasCurrentRouteSegmentTrafficVersion
        ? Date(r.currentRouteSegmentTrafficVersion) : nil,
      remainingWaypointsRoute: r.hasRemainingWaypointsRouteVersion ? Date(r.remainingWaypointsRouteVersion) : nil)
    // ENCODED_POLYLINE_TYPE: the paths only encoded (current_route_segment and each waypoint's
    // encoded_path_to_waypoint), not also as points.
    return Maps_Fleetengine_V1_Trip(
      try fleet.getTrip(caller: caller, name: name, view: view, versions: versions), format: format)
  }

  /// fleetkit.v1.TripUpdates/WatchTrip: the trip now and after every change.
  func watchTrip(_ r: Fleetkit_V1_WatchTripRequest, _ caller: Caller) throws(FleetError) -> WireTripWatch {
    let name = try ResourceName(parsing: r.name, kind: .trips)
    let view: TripView = try domainEnum(r.view, "view")
    let format: PolylineFormat = try domainEnum(r.routeFormatType, "route_format_type")
    return WireTripWatch(watch: try fleet.watchTrip(caller: caller, name: name, view: view), format: format)
  }

  func updateTrip(_ r: Maps_Fleetengine_V1_UpdateTripRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_Trip
  {
    let name = try ResourceName(parsing: r.name, kind: .trips)
    guard r.hasTrip else { throw .invalid("trip is required") }
    let trip = try Trip(input: r.trip, provider: name.provider, id: name.id)
    let order = try tripWaypoints(r.trip.vehicleWaypoints, field: "trip.vehicle_waypoints")
    return Maps_Fleetengine_V1_Trip(
      try await fleet.updateTrip(
        caller: caller, name: name, trip: trip, vehicleWaypoints: order, mask: r.updateMask.paths))
  }

  func deleteTrip(_ r: Maps_Fleetengine_V1_DeleteTripRequest, _ caller: Caller) async throws(FleetError)
    -> Google_Protobuf_Empty
  {
    try await fleet.deleteTrip(caller: caller, name: try ResourceName(parsing: r.name, kind: .trips))
    return Google_Protobuf_Empty()
  }

  func searchTrips(_ r: Maps_Fleetengine_V1_SearchTripsRequest, _ caller: Caller) throws(FleetError)
    -> Maps_Fleetengine_V1_SearchTripsResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var query = Fleet.TripSearch()
    query.vehicleID = r.vehicleID
    query.activeTripsOnly = r.activeTripsOnly
    query.pageSize = r.pageSize
    query.pageToken = r.pageToken
    query.minimumStaleness = r.hasMinimumStaleness ? Duration(r.minimumStaleness) : nil
    let (trips, next) = try fleet.searchTrips(caller: caller, provider: parent.provider, query: query)
    var response = Maps_Fleetengine_V1_SearchTripsResponse()
    response.trips = trips.map { Maps_Fleetengine_V1_Trip($0) }
    response.nextPageToken = next
    return response
  }

  func reportBillableTrip(_ r: Maps_Fleetengine_V1_ReportBillableTripRequest, _ caller: Caller) async throws(FleetError)
    -> Google_Protobuf_Empty
  {
    let name = try ResourceName(parsing: r.name, kind: .billableTrips)
    _ = try domainEnum(r.platform, "platform") as BillingPlatform
    _ = try domainEnum(r.solutionType, "solution_type") as SolutionType
    try await fleet.reportBillableTrip(
      caller: caller,
      report: BillableTripReport(
        provider: name.provider, billableTripID: name.id, countryCode: r.countryCode, platform: r.platform.rawValue,
        relatedIDs: r.relatedIds, solutionType: r.solutionType.rawValue, reportTime: Date()))
    return Google_Protobuf_Empty()
  }

  // MARK: VehicleService

  func createVehicle(_ r: Maps_Fleetengine_V1_CreateVehicleRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_Vehicle
  {
    let parent = try ProviderName(parsing: r.parent)
    guard r.hasVehicle else { throw .invalid("vehicle is required") }
    let input = try VehicleInput(r.vehicle, provider: parent.provider, id: r.vehicleID)
    return Maps_Fleetengine_V1_Vehicle(
      try await fleet.createVehicle(caller: caller, provider: parent.provider, vehicleID: r.vehicleID, vehicle: input))
  }

  func getVehicle(_ r: Maps_Fleetengine_V1_GetVehicleRequest, _ caller: Caller) throws(FleetError)
    -> Maps_Fleetengine_V1_Vehicle
  {
    let name = try ResourceName(parsing: r.name, kind: .vehicles)
    return Maps_Fleetengine_V1_Vehicle(
      try fleet.getVehicle(
        caller: caller, name: name,
        currentRouteSegmentVersion: r.hasCurrentRouteSegmentVersion ? Date(r.currentRouteSegmentVersion) : nil,
        waypointsVersion: r.hasWaypointsVersion ? Date(r.waypointsVersion) : nil))
  }

  func updateVehicle(_ r: Maps_Fleetengine_V1_UpdateVehicleRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_Vehicle
  {
    let name = try ResourceName(parsing: r.name, kind: .vehicles)
    guard r.hasVehicle else { throw .invalid("vehicle is required") }
    let input = try VehicleInput(r.vehicle, provider: name.provider, id: name.id)
    return Maps_Fleetengine_V1_Vehicle(
      try await fleet.updateVehicle(caller: caller, name: name, vehicle: input, mask: r.updateMask.paths))
  }

  func updateVehicleAttributes(_ r: Maps_Fleetengine_V1_UpdateVehicleAttributesRequest, _ caller: Caller)
    async throws(FleetError) -> Maps_Fleetengine_V1_UpdateVehicleAttributesResponse
  {
    let name = try ResourceName(parsing: r.name, kind: .vehicles)
    let attributes = try r.attributes.enumerated().map { (i, a) throws(FleetError) in
      try Attribute(a, field: "attributes[\(i)]")
    }
    var response = Maps_Fleetengine_V1_UpdateVehicleAttributesResponse()
    response.attributes = try await fleet.updateVehicleAttributes(caller: caller, name: name, attributes: attributes)
      .map(\.vehicleProto)
    return response
  }

  func deleteVehicle(_ r: Maps_Fleetengine_V1_DeleteVehicleRequest, _ caller: Caller) async throws(FleetError)
    -> Google_Protobuf_Empty
  {
    try await fleet.deleteVehicle(caller: caller, name: try ResourceName(parsing: r.name, kind: .vehicles))
    return Google_Protobuf_Empty()
  }

  /// Off the event loops: a filter may read every vehicle of a city's fleet.
  func listVehicles(_ r: Maps_Fleetengine_V1_ListVehiclesRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_ListVehiclesResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    var query = Fleet.VehicleListing()
    query.pageSize = r.pageSize
    query.pageToken = r.pageToken
    query.minimumCapacity = r.hasMinimumCapacity ? r.minimumCapacity.value : nil
    query.tripTypes = try r.tripTypes.enumerated().map { (i, t) throws(FleetError) in
      try domainEnum(t, "trip_types[\(i)]")
    }
    query.maximumStaleness = r.hasMaximumStaleness ? Duration(r.maximumStaleness) : nil
    query.categories = try r.vehicleTypeCategories.enumerated().map { (i, c) throws(FleetError) in
      try domainEnum(c, "vehicle_type_categories[\(i)]")
    }
    query.requiredAttributes = r.requiredAttributes
    query.requiredOneOfAttributes = r.requiredOneOfAttributes
    query.requiredOneOfAttributeSets = r.requiredOneOfAttributeSets
    query.state = try domainEnum(r.vehicleState, "vehicle_state")
    query.onTripOnly = r.onTripOnly
    query.filter = r.filter
    if r.hasViewport { query.viewport = Viewport(low: LatLng(r.viewport.low), high: LatLng(r.viewport.high)) }
    let (fleet, listing) = (self.fleet, query)
    return try await OffLoop.run { () throws(FleetError) in
      let (vehicles, next, total) = try fleet.listVehicles(caller: caller, provider: parent.provider, query: listing)
      var response = Maps_Fleetengine_V1_ListVehiclesResponse()
      response.vehicles = vehicles.map(Maps_Fleetengine_V1_Vehicle.init)
      response.nextPageToken = next
      response.totalSize = Int64(total)
      return response
    }
  }

  /// A light search (`Fleet.isLight`: at most 16 vehicles asked, no filter expression) is done
  /// where it arrived, in less time than the hop to NIO's thread pool and back costs a busy
  /// machine; a larger one, which routes hundreds of candidates, off the event loops.
  func searchVehicles(_ r: Maps_Fleetengine_V1_SearchVehiclesRequest, _ caller: Caller) async throws(FleetError)
    -> Maps_Fleetengine_V1_SearchVehiclesResponse
  {
    let parent = try ProviderName(parsing: r.parent)
    let search = try VehicleSearch(r)
    let fleet = self.fleet
    let matches =
      Fleet.isLight(search)
      ? try fleet.searchVehicles(caller: caller, provider: parent.provider, search: search)
      : try await OffLoop.run { () throws(FleetError) in
        try fleet.searchVehicles(caller: caller, provider: parent.provider, search: search)
      }
    var response = Maps_Fleetengine_V1_SearchVehiclesResponse()
    response.matches = matches.map(Maps_Fleetengine_V1_VehicleMatch.init)
    return response
  }
}

/// A WatchTrip stream as the transports send it: the domain's watch and the paths' format.
struct WireTripWatch: Sendable {
  let watch: TripWatch
  let format: PolylineFormat

  func trip(_ snapshot: TripSnapshot) -> Maps_Fleetengine_V1_Trip { Maps_Fleetengine_V1_Trip(snapshot, format: format) }
}

// Wire enums checked for unknown values but not otherwise used by the domain.
enum PolylineFormat: Int {
  case unknown = 0
  case latLngList = 1
  case encodedPolyline = 2
}
enum BillingPlatform: Int {
  case unspecified = 0
  case server, web, android, ios, others
}
enum SolutionType: Int {
  case unspecified = 0
  case onDemandRidesharingAndDeliveries = 1
}
