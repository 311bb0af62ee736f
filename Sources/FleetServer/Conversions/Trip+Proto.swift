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
    intermediateDestinationsVersion =
      p.hasIntermediateDestinationsVersion ? Date(p.intermediateDestinationsVersion) : nil
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
  /// The wire Trip for a response. Input-only fields are never returned. `format`
  /// ENCODED_POLYLINE_TYPE leaves out the paths' lists of points (the encoded paths remain).
  init(_ snapshot: TripSnapshot, format: PolylineFormat = .latLngList) {
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
    if let progress = snapshot.progress { add(progress, view: snapshot.view, format: format) }
  }

  /// The server's route and ETAs. Each remaining waypoint gets its path, distance, duration, ETA
  /// and traffic; the SDK view also has the trip-level route fields, which
  /// JOURNEY_SHARING_V1S leaves out as Fleet Engine does.
  mutating func add(_ progress: TripRouteProgress, view: TripView, format: PolylineFormat) {
    let points = format != .encodedPolyline
    for (i, leg) in progress.legs.enumerated() where i < remainingWaypoints.count {
      remainingWaypoints[i].distanceMeters = .init(Int32(clamping: Int(leg.distanceMeters.rounded())))
      remainingWaypoints[i].duration = Swift.Duration.seconds(leg.duration).proto
      remainingWaypoints[i].eta = leg.eta.proto
      if progress.includesWaypointPaths {
        if points { remainingWaypoints[i].pathToWaypoint = leg.path.map(\.proto) }
        remainingWaypoints[i].encodedPathToWaypoint = leg.encodedPath
        remainingWaypoints[i].trafficToWaypoint = .init(leg)
      }
    }
    guard view != .journeySharingV1S, let first = progress.legs.first else { return }
    if progress.includesRoute {
      if points { route = first.path.map(\.proto) }
      currentRouteSegment = first.encodedPath
    }
    currentRouteSegmentVersion = progress.routeVersion.proto
    remainingWaypointsRouteVersion = progress.routeVersion.proto
    if progress.includesTraffic { currentRouteSegmentTraffic = .init(first) }
    currentRouteSegmentTrafficVersion = progress.trafficVersion.proto
    if let end = remainingWaypoints.first { currentRouteSegmentEndPoint = end }
    currentRouteSegmentEndPoint.pathToWaypoint = []
    currentRouteSegmentEndPoint.encodedPathToWaypoint = ""
    currentRouteSegmentEndPoint.clearTrafficToWaypoint()
    remainingDistanceMeters = .init(Int32(clamping: Int(first.distanceMeters.rounded())))
    etaToFirstWaypoint = first.eta.proto
    remainingTimeToFirstWaypoint = Swift.Duration.seconds(max(0, first.eta.timeIntervalSince(progress.readAt))).proto
    lastLocationSnappable = progress.isLocationSnappable
  }
}

extension Maps_Fleetengine_V1_ConsumableTrafficPolyline {
  /// A leg's traffic: speed intervals over its path's points, and the path itself.
  init(_ leg: WaypointProgress) {
    self.init()
    speedReadingInterval = leg.traffic.map { interval in
      var wire = Maps_Fleetengine_V1_SpeedReadingInterval()
      wire.startPolylinePointIndex = Int32(interval.start)
      wire.endPolylinePointIndex = Int32(interval.end)
      wire.speed = Maps_Fleetengine_V1_SpeedReadingInterval.Speed(rawValue: interval.speed.rawValue) ?? .normal
      return wire
    }
    encodedPathToWaypoint = leg.encodedPath
  }
}
