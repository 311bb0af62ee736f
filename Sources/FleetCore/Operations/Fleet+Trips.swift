import Foundation

extension Fleet {
  // Fleet Engine's UpdateTrip rules: what a client may set, and what the server maintains.
  static let tripUpdatable: Set<String> = [
    "trip_status", "vehicle_id", "trip_type", "pickup_point", "actual_pickup_point", "actual_pickup_arrival_point",
    "intermediate_destinations", "intermediate_destination_index", "actual_intermediate_destination_arrival_points",
    "actual_intermediate_destinations", "dropoff_point", "actual_dropoff_point", "vehicle_waypoints", "attributes",
  ]
  static let tripServerOwned: Set<String> = [
    "name", "current_route_segment", "current_route_segment_end_point", "current_route_segment_traffic",
    "current_route_segment_traffic_version", "current_route_segment_version", "dropoff_time", "eta_to_first_waypoint",
    "intermediate_destinations_version", "last_location", "number_of_passengers", "pickup_time",
    "remaining_distance_meters", "remaining_time_to_first_waypoint", "remaining_waypoints",
    "remaining_waypoints_version", "remaining_waypoints_route_version", "route", "last_location_snappable", "view",
  ]
  /// What a driver may change on a trip assigned to its vehicle: progress, not the booking.
  static let tripDriverUpdatable: Set<String> = [
    "trip_status", "intermediate_destination_index", "actual_pickup_point", "actual_pickup_arrival_point",
    "actual_intermediate_destination_arrival_points", "actual_intermediate_destinations", "actual_dropoff_point",
  ]
  /// Feedback a provider may still record after a trip ended.
  static let tripTerminalUpdatable: Set<String> = [
    "attributes", "actual_pickup_point", "actual_pickup_arrival_point",
    "actual_intermediate_destination_arrival_points",
    "actual_intermediate_destinations", "actual_dropoff_point",
  ]

  // MARK: - CreateTrip

  /// Fleet Engine CreateTrip: trip_type and pickup_point are required; number_of_passengers,
  /// vehicle_id, dropoff_point, intermediate_destinations, vehicle_waypoints and attributes are
  /// used; everything else is ignored, and every trip starts NEW.
  public func createTrip(
    caller: Caller, provider: String, tripID: String, trip input: Trip, vehicleWaypoints: [TripWaypoint] = []
  ) async throws(FleetError) -> TripSnapshot {
    try caller.mayCall(.createTrip)
    try caller.checkProvider(provider)
    try ResourceID.validate(tripID, field: "trip_id")
    guard input.type != .unknown else { throw .invalid("trip.trip_type is required (SHARED or EXCLUSIVE)") }
    guard let pickup = input.pickupPoint else { throw .invalid("trip.pickup_point is required") }
    try pickup.point.validate("trip.pickup_point.point")
    try input.dropoffPoint?.point.validate("trip.dropoff_point.point")
    try Self.validateIntermediates(input.intermediateDestinations, type: input.type)
    guard input.numberOfPassengers >= 0 else {
      throw .invalid("trip.number_of_passengers must not be negative, got \(input.numberOfPassengers)")
    }
    try Attribute.validate(input.attributes, field: "trip.attributes")
    if !input.vehicleID.isEmpty { try ResourceID.validate(input.vehicleID, field: "trip.vehicle_id") }

    return try await write { s, now throws(FleetError) in
      guard s.trips[provider]?[tripID] == nil else {
        throw FleetError(.alreadyExists, "trip providers/\(provider)/trips/\(tripID) already exists")
      }
      var trip = Trip(provider: provider, id: tripID)
      trip.type = input.type
      trip.pickupPoint = pickup
      trip.dropoffPoint = input.dropoffPoint
      trip.intermediateDestinations = input.intermediateDestinations
      trip.intermediateDestinationsVersion = input.intermediateDestinations.isEmpty ? nil : now
      trip.numberOfPassengers = input.numberOfPassengers
      trip.attributes = input.attributes
      trip.vehicleID = input.vehicleID
      trip.createTime = now
      trip.updateTime = now
      trip.remainingWaypointsVersion = now
      let vehicles = try Self.syncVehicles(old: nil, new: trip, order: vehicleWaypoints, state: s, now: now)
      let changes = [s.put(trip)] + vehicles.map { s.put($0) }
      return (
        Self.snapshot(s.trips[trip.provider]![trip.id]!, view: .sdk, includeVehicleWaypoints: true, state: s), changes
      )
    }.withProgress(from: self)
  }

  // MARK: - GetTrip

  /// Fleet Engine GetTrip. A consumer always gets the JOURNEY_SHARING_V1S view. Route parts the
  /// caller already has (`versions`) are left out when they have not changed since.
  public func getTrip(
    caller: Caller, name: ResourceName, view: TripView = .unspecified, versions: TripVersions = TripVersions()
  ) throws(FleetError) -> TripSnapshot {
    try caller.mayCall(.getTrip)
    try caller.checkProvider(name.provider)
    if caller.role == .consumer { try caller.checkTripAccess(tripID: name.id, assignedVehicle: nil) }
    let effectiveView: TripView = caller.role == .consumer ? .journeySharingV1S : (view == .unspecified ? .sdk : view)
    let now = now()
    return try read { s throws(FleetError) in
      let trip = try Self.existingTrip(name, in: s)
      try caller.checkTripAccess(tripID: trip.id, assignedVehicle: trip.vehicleID)
      var snapshot = Self.snapshot(trip, view: effectiveView, includeVehicleWaypoints: false, state: s)
      if var progress = snapshot.progress {
        progress.readAt = now
        progress.includesRoute = versions.currentRouteSegment.map { progress.routeVersion > $0 } ?? true
        progress.includesTraffic = versions.currentRouteSegmentTraffic.map { progress.trafficVersion > $0 } ?? true
        progress.includesWaypointPaths = versions.remainingWaypointsRoute.map { progress.routeVersion > $0 } ?? true
        snapshot.progress = progress
      }
      return snapshot
    }
  }

  // MARK: - UpdateTrip

  /// Fleet Engine UpdateTrip: only the fields in `mask` change; the lifecycle only moves forward;
  /// `intermediate_destinations_version`, when given, must match the stored one.
  public func updateTrip(
    caller: Caller, name: ResourceName, trip input: Trip, vehicleWaypoints: [TripWaypoint] = [], mask rawMask: [String]
  ) async throws(FleetError) -> TripSnapshot {
    try caller.mayCall(.updateTrip)
    try caller.checkProvider(name.provider)
    let mask = try UpdateMask(
      rawMask, updatable: Self.tripUpdatable, serverOwned: Self.tripServerOwned, resource: "trip")
    if caller.role == .driver, let path = mask.paths.first(where: { !Self.tripDriverUpdatable.contains($0) }) {
      throw .denied("role 'driver' may not update trip.\(path)")
    }
    if mask.contains("pickup_point") {
      guard let pickup = input.pickupPoint else { throw .invalid("trip.pickup_point is required") }
      try pickup.point.validate("trip.pickup_point.point")
    }
    if mask.contains("dropoff_point") { try input.dropoffPoint?.point.validate("trip.dropoff_point.point") }
    if mask.contains("attributes") { try Attribute.validate(input.attributes, field: "trip.attributes") }
    if mask.contains("trip_type"), input.type == .unknown {
      throw .invalid("trip.trip_type must be SHARED or EXCLUSIVE")
    }
    if mask.contains("vehicle_id"), !input.vehicleID.isEmpty {
      try ResourceID.validate(input.vehicleID, field: "trip.vehicle_id")
    }
    for (path, stops) in [
      ("actual_intermediate_destination_arrival_points", input.actualIntermediateDestinationArrivalPoints),
      ("actual_intermediate_destinations", input.actualIntermediateDestinations),
    ] where mask.contains(path) {
      for (i, stop) in stops.enumerated() { try stop.point.validate("trip.\(path)[\(i)].point") }
    }
    for (path, stop) in [
      ("actual_pickup_point", input.actualPickupPoint), ("actual_pickup_arrival_point", input.actualPickupArrivalPoint),
      ("actual_dropoff_point", input.actualDropoffPoint),
    ] where mask.contains(path) {
      try stop?.point.validate("trip.\(path).point")
    }

    // A priced ride whose points change is routed again now, outside the lock, so that its
    // fare can be priced anew at completion.
    let rerouted = reroute(
      name, pickup: mask.contains("pickup_point") ? .some(input.pickupPoint) : nil,
      stops: mask.contains("intermediate_destinations") ? input.intermediateDestinations : nil,
      dropoff: mask.contains("dropoff_point") ? .some(input.dropoffPoint) : nil)
    return try await write { s, now throws(FleetError) in
      let old = try Self.existingTrip(name, in: s)
      try caller.checkTripAccess(tripID: old.id, assignedVehicle: old.vehicleID)
      if old.status.isTerminal, let path = mask.paths.first(where: { !Self.tripTerminalUpdatable.contains($0) }) {
        throw .precondition("trip is \(old.status.wireName); trip.\(path) can no longer be updated")
      }
      var trip = old
      if mask.contains("trip_type") { trip.type = input.type }
      if mask.contains("pickup_point") { trip.pickupPoint = input.pickupPoint }
      if mask.contains("dropoff_point") { trip.dropoffPoint = input.dropoffPoint }
      if mask.contains("attributes") { trip.attributes = input.attributes }
      if mask.contains("actual_pickup_point") { trip.actualPickupPoint = input.actualPickupPoint }
      if mask.contains("actual_pickup_arrival_point") { trip.actualPickupArrivalPoint = input.actualPickupArrivalPoint }
      if mask.contains("actual_dropoff_point") { trip.actualDropoffPoint = input.actualDropoffPoint }
      if mask.contains("actual_intermediate_destination_arrival_points") {
        trip.actualIntermediateDestinationArrivalPoints = input.actualIntermediateDestinationArrivalPoints
      }
      if mask.contains("actual_intermediate_destinations") {
        trip.actualIntermediateDestinations = input.actualIntermediateDestinations
      }
      if mask.contains("intermediate_destinations") {
        trip.intermediateDestinations = input.intermediateDestinations
        trip.intermediateDestinationsVersion = now
      }
      try Self.validateIntermediates(trip.intermediateDestinations, type: trip.type)
      if mask.contains("vehicle_id") {
        if input.vehicleID.isEmpty && !old.vehicleID.isEmpty && old.status != .new {
          throw .precondition("trip.vehicle_id can only be cleared while the trip is NEW")
        }
        trip.vehicleID = input.vehicleID
      }
      if mask.contains("trip_status") || mask.contains("intermediate_destination_index") {
        let target = TripLifecycle(
          status: mask.contains("trip_status") ? input.status : old.status,
          intermediateIndex: mask.contains("intermediate_destination_index")
            ? input.intermediateDestinationIndex : old.intermediateDestinationIndex)
        if target.status == .enrouteToIntermediateDestination, let given = input.intermediateDestinationsVersion,
          !Self.sameVersion(given, old.intermediateDestinationsVersion)
        {
          throw .precondition(
            "trip.intermediate_destinations_version does not match the stored version: intermediate_destinations changed since it was read"
          )
        }
        let next = try TripLifecycle(status: old.status, intermediateIndex: old.intermediateDestinationIndex)
          .moving(to: target, intermediateCount: trip.intermediateDestinations.count, isAssigned: trip.isAssigned)
        trip.status = next.status
        trip.intermediateDestinationIndex = next.intermediateIndex
      }
      if trip.status.usesIntermediateIndex,
        !(0..<Int32(trip.intermediateDestinations.count)).contains(trip.intermediateDestinationIndex)
      {
        throw .invalid("trip.intermediate_destination_index is out of range for trip.intermediate_destinations")
      }
      Self.recordStopTimes(&trip, old: old, now: now)
      if trip.ownRemainingWaypoints != old.ownRemainingWaypoints || trip.vehicleID != old.vehicleID {
        trip.remainingWaypointsVersion = now
      }
      let order = mask.contains("vehicle_waypoints") ? vehicleWaypoints : []
      let vehicles = try Self.syncVehicles(old: old, new: trip, order: order, state: s, now: now)
      trip.updateTime = now
      var changes = [s.put(trip)] + vehicles.map { s.put($0) }
      if let rerouted, rerouted.points == Self.routePoints(of: trip), var ride = s.rides[name.provider]?[name.id] {
        ride.route = rerouted
        ride.updateTime = now
        changes.append(s.put(ride))
      }
      return (
        Self.snapshot(s.trips[trip.provider]![trip.id]!, view: .sdk, includeVehicleWaypoints: true, state: s), changes
      )
    }.withProgress(from: self)
  }

  // MARK: - DeleteTrip

  /// Fleet Engine DeleteTrip: FAILED_PRECONDITION while the trip is active and assigned.
  public func deleteTrip(caller: Caller, name: ResourceName) async throws(FleetError) {
    try caller.mayCall(.deleteTrip)
    try caller.checkProvider(name.provider)
    try await write { s, _ throws(FleetError) in
      let trip = try Self.existingTrip(name, in: s)
      if !trip.status.isTerminal && trip.isAssigned {
        throw .precondition(
          "trip \(name) is active and assigned to vehicle '\(trip.vehicleID)'; complete or cancel it, or clear trip.vehicle_id, first"
        )
      }
      return ((), [s.removeTrip(provider: name.provider, id: trip.id)])
    }
  }

  // MARK: - SearchTrips

  public struct TripSearch: Sendable, Hashable {
    public var vehicleID = ""
    public var activeTripsOnly = false
    public var pageSize: Int32 = 0
    public var pageToken = ""
    /// Only trips not updated within this long.
    public var minimumStaleness: Duration?

    public init() {}
  }

  /// Fleet Engine SearchTrips. Without a vehicle_id the route-derived fields are left out.
  public func searchTrips(caller: Caller, provider: String, query: TripSearch) throws(FleetError)
    -> (trips: [TripSnapshot], nextPageToken: String)
  {
    try caller.mayCall(.searchTrips)
    try caller.checkProvider(provider)
    if !query.vehicleID.isEmpty { try ResourceID.validate(query.vehicleID, field: "vehicle_id") }
    if caller.role == .driver {
      guard !query.vehicleID.isEmpty else { throw .denied("a driver must search by its own vehicle_id") }
      try caller.checkVehicleAccess(vehicleID: query.vehicleID)
    }
    if let staleness = query.minimumStaleness, staleness < .zero {
      throw .invalid("minimum_staleness must not be negative")
    }
    let pageSize = try PageToken.pageSize(query.pageSize)
    let fingerprint = "trips|\(query.vehicleID)|\(query.activeTripsOnly)|\(String(describing: query.minimumStaleness))"
    let after = try PageToken.decode(query.pageToken, query: fingerprint)
    let now = now()
    return try read { s in
      let cutoff = query.minimumStaleness.map { now.addingTimeInterval(-$0.seconds) }
      let matching = (s.trips[provider] ?? [:]).values.filter { trip in
        (query.vehicleID.isEmpty || trip.vehicleID == query.vehicleID)
          && (!query.activeTripsOnly || !trip.status.isTerminal)
          && (cutoff.map { trip.updateTime <= $0 } ?? true)
          && (after.map { trip.id > $0 } ?? true)
      }.sorted { $0.id < $1.id }
      let page = matching.prefix(pageSize)
      let next = matching.count > pageSize ? PageToken.encode(after: page.last!.id, query: fingerprint) : ""
      let trips = page.map { trip in
        var snapshot = Self.snapshot(trip, view: .sdk, includeVehicleWaypoints: false, state: s)
        if query.vehicleID.isEmpty { snapshot.remainingWaypoints = [] }
        return snapshot
      }
      return (trips, next)
    }
  }

  // MARK: - ReportBillableTrip

  public func reportBillableTrip(caller: Caller, report: BillableTripReport) async throws(FleetError) {
    try caller.mayCall(.reportBillableTrip)
    try caller.checkProvider(report.provider)
    try ResourceID.validate(report.billableTripID, field: "name")
    guard report.countryCode.count == 2, report.countryCode.allSatisfy({ $0.isASCII && $0.isLetter }) else {
      throw .invalid("country_code must be a two-letter country code, got '\(report.countryCode)'")
    }
    guard report.relatedIDs.count <= 50 else {
      throw .invalid("related_ids may hold at most 50 IDs, got \(report.relatedIDs.count)")
    }
    var stored = report
    try await write { _, now in
      stored.reportTime = now
      return ((), [.putBillableTrip(stored)])
    }
  }

  // MARK: - Helpers

  static func existingTrip(_ name: ResourceName, in s: State) throws(FleetError) -> Trip {
    guard let trip = s.trips[name.provider]?[name.id] else { throw .notFound("trip \(name) not found") }
    return trip
  }

  static func validateIntermediates(_ stops: [TerminalLocation], type: TripType) throws(FleetError) {
    // Fleet Engine: only EXCLUSIVE trips support intermediate destinations.
    if !stops.isEmpty && type == .shared {
      throw .invalid("trip.intermediate_destinations are only supported for EXCLUSIVE trips")
    }
    for (i, stop) in stops.enumerated() { try stop.point.validate("trip.intermediate_destinations[\(i)].point") }
  }

  static func sameVersion(_ a: Date, _ b: Date?) -> Bool {
    guard let b else { return false }
    return abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) < 0.000_002
  }

  /// pickup_time and dropoff_time become actual times once the stop is passed.
  static func recordStopTimes(_ trip: inout Trip, old: Trip, now: Date) {
    let pickedUp: Set<TripStatus> = [
      .enrouteToIntermediateDestination, .arrivedAtIntermediateDestination, .enrouteToDropoff, .complete,
    ]
    if pickedUp.contains(trip.status) && !pickedUp.contains(old.status) && old.status != .canceled {
      trip.pickupTime = trip.actualPickupPoint?.timestamp ?? now
    }
    if trip.status == .complete && old.status != .complete {
      trip.dropoffTime = trip.actualDropoffPoint?.timestamp ?? now
    }
  }

  /// Brings the vehicles a trip left or joined in step with it: current_trips and waypoints.
  /// Returns the vehicles that changed.
  static func syncVehicles(
    old: Trip?, new trip: Trip, order: [TripWaypoint], state s: State, now: Date
  ) throws(FleetError) -> [Vehicle] {
    var changed: [Vehicle] = []
    let provider = trip.provider
    if let old, !old.vehicleID.isEmpty, old.vehicleID != trip.vehicleID,
      var previous = s.vehicles[provider]?[old.vehicleID]
    {
      previous.currentTrips.removeAll { $0 == trip.id }
      let waypoints = previous.waypoints.filter { $0.tripID != trip.id }
      if waypoints != previous.waypoints {
        previous.waypoints = waypoints
        previous.waypointsVersion = now
      }
      previous.updateTime = now
      changed.append(previous)
    }
    guard !trip.vehicleID.isEmpty else { return changed }
    guard var vehicle = s.vehicles[provider]?[trip.vehicleID] else {
      throw .notFound("trip.vehicle_id: vehicle providers/\(provider)/vehicles/\(trip.vehicleID) not found")
    }
    let joining = old?.vehicleID != trip.vehicleID
    if joining || old?.type != trip.type, !vehicle.supportedTripTypes.contains(trip.type) {
      throw .precondition(
        "vehicle '\(vehicle.id)' does not support \(trip.type == .shared ? "SHARED" : "EXCLUSIVE") trips (vehicle.supported_trip_types)"
      )
    }
    if joining && trip.status.isTerminal {
      throw .precondition("trip is \(trip.status.wireName) and cannot be assigned to a vehicle")
    }
    let before = vehicle
    if trip.status.isTerminal {
      vehicle.currentTrips.removeAll { $0 == trip.id }
    } else if !vehicle.currentTrips.contains(trip.id) {
      vehicle.currentTrips.append(trip.id)
    }
    vehicle.waypoints = WaypointPlanner.update(vehicle.waypoints, after: trip, onVehicle: vehicle.id)
    if !order.isEmpty {
      let active = vehicle.currentTrips.compactMap { id in id == trip.id ? trip : s.trips[provider]?[id] }
      vehicle.waypoints = try WaypointPlanner.validateOrder(order, trips: active, field: "trip.vehicle_waypoints")
    }
    if vehicle.waypoints != before.waypoints { vehicle.waypointsVersion = now }
    if vehicle != before {
      vehicle.updateTime = now
      changed.append(vehicle)
    }
    return changed
  }

  static func snapshot(_ trip: Trip, view: TripView, includeVehicleWaypoints: Bool, state s: State) -> TripSnapshot {
    let vehicle = trip.isAssigned ? s.vehicles[trip.provider]?[trip.vehicleID] : nil
    let active = !trip.status.isTerminal
    var snapshot = TripSnapshot(
      trip: trip,
      remainingWaypoints: active ? WaypointPlanner.remaining(for: trip.id, in: vehicle?.waypoints ?? []) : [],
      vehicleWaypoints: includeVehicleWaypoints ? vehicle?.waypoints ?? [] : nil,
      lastLocation: active ? vehicle?.lastLocation : nil,
      view: view)
    if let version = vehicle?.waypointsVersion, active {
      snapshot.trip.remainingWaypointsVersion = max(version, trip.remainingWaypointsVersion ?? version)
    }
    if active, let vehicle { addProgress(to: &snapshot, vehicle: vehicle, in: s) }
    return view == .journeySharingV1S ? snapshot.forJourneySharing() : snapshot
  }
}

extension TripSnapshot {
  /// JOURNEY_SHARING_V1S is meant for riders: other riders' trip IDs, the vehicle's full
  /// waypoint list, trip attributes and the device's raw sensor data are hidden.
  func forJourneySharing() -> TripSnapshot {
    var copy = self
    copy.remainingWaypoints = remainingWaypoints.map { waypoint in
      var w = waypoint
      if w.tripID != trip.id { w.tripID = "" }
      return w
    }
    copy.vehicleWaypoints = nil
    copy.progress?.legs =
      progress?.legs.map { leg in
        var l = leg
        if l.waypoint.tripID != trip.id { l.waypoint.tripID = "" }
        return l
      } ?? []
    copy.trip.attributes = []
    copy.lastLocation = lastLocation.map { full in
      var shown = VehicleLocation(location: full.location)
      shown.heading = full.heading
      shown.speed = full.speed
      shown.updateTime = full.updateTime
      shown.serverTime = full.serverTime
      shown.isRoadSnapped = full.isRoadSnapped
      return shown
    }
    return copy
  }
}

extension Duration {
  /// The duration in (fractional) seconds.
  public var seconds: Double {
    let (s, atto) = components
    return Double(s) + Double(atto) / 1e18
  }
}

extension TripSnapshot {
  /// The same trip read again after the write that produced it, with the progress the write's
  /// vehicles now have (computed after the commit, so not in the write's own snapshot).
  func withProgress(from fleet: Fleet) -> TripSnapshot {
    fleet.state.withLock { s in
      guard let trip = s.trips[trip.provider]?[trip.id], trip.revision == self.trip.revision,
        let vehicle = trip.isAssigned ? s.vehicles[trip.provider]?[trip.vehicleID] : nil, !trip.status.isTerminal
      else { return self }
      var copy = self
      copy.progress = nil
      copy.trip.pickupTime = trip.pickupTime
      copy.trip.dropoffTime = trip.dropoffTime
      Fleet.addProgress(to: &copy, vehicle: vehicle, in: s)
      return view == .journeySharingV1S ? copy.forJourneySharing() : copy
    }
  }
}

extension Fleet {
  /// The trip (full view) and its assigned vehicle as stored, once the caller is shown to be
  /// allowed GetTrip on it: for views derived on the server (ride status) that expose only
  /// chosen fields, whoever asks.
  public func tripAndVehicle(caller: Caller, name: ResourceName) throws(FleetError) -> (
    snapshot: TripSnapshot, vehicle: Vehicle?
  ) {
    _ = try getTrip(caller: caller, name: name)
    return try read { s throws(FleetError) in
      let trip = try Self.existingTrip(name, in: s)
      let vehicle = trip.isAssigned ? s.vehicles[trip.provider]?[trip.vehicleID] : nil
      return (Self.snapshot(trip, view: .sdk, includeVehicleWaypoints: false, state: s), vehicle)
    }
  }
}
