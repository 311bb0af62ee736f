import FleetGeometry
import Foundation

extension Fleet {
  // Fleet Engine's UpdateVehicle rules.
  static let vehicleUpdatable: Set<String> = [
    "vehicle_state", "supported_trip_types", "last_location", "past_locations", "maximum_capacity", "attributes",
    "vehicle_type", "license_plate", "route", "current_route_segment", "current_route_segment_traffic",
    "current_route_segment_end_point", "remaining_distance_meters", "eta_to_first_waypoint", "remaining_time_seconds",
    "waypoints", "back_to_back_enabled", "navigation_status", "device_settings",
  ]
  static let vehicleServerOwned: Set<String> = [
    "name", "current_trips", "available_capacity", "current_route_segment_version", "waypoints_version",
  ]
  /// What only the provider's backend may change: the vehicle's identity and capabilities.
  static let vehicleDriverForbidden: Set<String> = [
    "supported_trip_types", "maximum_capacity", "vehicle_type", "license_plate", "back_to_back_enabled",
  ]

  // MARK: - CreateVehicle

  /// Fleet Engine CreateVehicle: vehicle_state, supported_trip_types, maximum_capacity and
  /// vehicle_type are required; server-maintained fields are ignored.
  public func createVehicle(caller: Caller, provider: String, vehicleID: String, vehicle input: VehicleInput)
    async throws(FleetError) -> Vehicle
  {
    try caller.mayCall(.createVehicle)
    try caller.checkProvider(provider)
    try ResourceID.validate(vehicleID, field: "vehicle_id")
    let v = input.vehicle
    guard v.state != .unknown else { throw .invalid("vehicle.vehicle_state is required (ONLINE or OFFLINE)") }
    try Self.validateTripTypes(v.supportedTripTypes)
    try Self.validateCapacity(v.maximumCapacity)
    guard v.category != .unknown else { throw .invalid("vehicle.vehicle_type.category is required") }
    try Attribute.validate(v.attributes, field: "vehicle.attributes")
    try Self.validatePlate(v.licensePlate)
    try v.lastLocation?.validate("vehicle.last_location")
    // Refused before its position reaches the trace of the vehicle that exists (a client making
    // its vehicles again after a restart would move each back to where it was first made).
    guard !state.withLock({ $0.vehicles[provider]?[vehicleID] != nil }) else {
      throw Self.vehicleAlreadyExists(provider, vehicleID)
    }
    let located = locate(ResourceName(provider: provider, kind: .vehicles, id: vehicleID), v.lastLocation, past: [])

    let created = try await write { s, now throws(FleetError) in
      guard s.vehicles[provider]?[vehicleID] == nil else { throw Self.vehicleAlreadyExists(provider, vehicleID) }
      var vehicle = Vehicle(provider: provider, id: vehicleID)
      vehicle.state = v.state
      vehicle.supportedTripTypes = v.supportedTripTypes
      vehicle.maximumCapacity = v.maximumCapacity
      vehicle.category = v.category
      vehicle.attributes = v.attributes
      vehicle.licensePlate = v.licensePlate
      vehicle.backToBackEnabled = v.backToBackEnabled
      vehicle.lastLocation = located.last.map { Self.received($0, now: now) }
      if let position = vehicle.lastLocation?.location {
        Self.advance(&vehicle.odometer, to: position, accuracy: vehicle.lastLocation?.latlngAccuracy)
      }
      vehicle.createTime = now
      vehicle.updateTime = now
      let change = s.put(vehicle)
      return (s.vehicles[provider]![vehicleID]!, [change])
    }
    return shown(created)
  }

  // MARK: - GetVehicle

  /// Fleet Engine GetVehicle. The version arguments leave out the route segment or the waypoints
  /// when they have not changed since the given time.
  public func getVehicle(
    caller: Caller, name: ResourceName, currentRouteSegmentVersion: Date? = nil, waypointsVersion: Date? = nil
  ) throws(FleetError) -> Vehicle {
    try caller.mayCall(.getVehicle)
    try caller.checkProvider(name.provider)
    try caller.checkVehicleAccess(vehicleID: name.id)
    var vehicle = try read { s throws(FleetError) in Self.decorated(try Self.existingVehicle(name, in: s), in: s) }
    if let since = currentRouteSegmentVersion, let version = vehicle.currentRouteSegmentVersion, version <= since {
      vehicle.currentRouteSegment = ""
    }
    if let since = waypointsVersion, let version = vehicle.waypointsVersion, version <= since {
      vehicle.waypoints = []
    }
    return vehicle
  }

  // MARK: - UpdateVehicle

  /// Fleet Engine UpdateVehicle: only the fields in `mask` change; `attributes` replaces them all;
  /// `waypoints` may only reorder the vehicle's current waypoints.
  public func updateVehicle(caller: Caller, name: ResourceName, vehicle input: VehicleInput, mask rawMask: [String])
    async throws(FleetError) -> Vehicle
  {
    let update = try prepareUpdate(
      caller: caller, name: name, input: input, mask: rawMask, updatable: Self.vehicleUpdatable)
    let updated = try await write { s, now throws(FleetError) in
      try Self.apply(update, to: &s, now: now)
    }
    return shown(updated)
  }

  /// An UpdateVehicle checked and with its positions located, ready to apply under the lock.
  struct VehicleUpdate: Sendable {
    let name: ResourceName
    let input: VehicleInput
    let mask: UpdateMask
    /// The past locations located, in order.
    let pastLocated: [VehicleLocation]
    /// The new last location located, when the mask has it.
    let lastLocated: VehicleLocation?
    /// Keep the stored position when this one is older (the streaming channel's rule; unary
    /// UpdateVehicle is last-write-wins as in Fleet Engine).
    var keepsNewerPosition = false
  }

  /// UpdateVehicle's checks, in Fleet Engine's order, and map matching of the positions (outside
  /// the lock: it is the costly part). `operation`: the call the caller must be allowed to make.
  func prepareUpdate(
    caller: Caller, name: ResourceName, input: VehicleInput, mask rawMask: [String], updatable: Set<String>,
    operation: FleetOperation = .updateVehicle
  ) throws(FleetError) -> VehicleUpdate {
    try caller.mayCall(operation)
    try caller.checkProvider(name.provider)
    try caller.checkVehicleAccess(vehicleID: name.id)
    let mask = try UpdateMask(rawMask, updatable: updatable, serverOwned: Self.vehicleServerOwned, resource: "vehicle")
    if caller.role == .driver, let path = mask.paths.first(where: { Self.vehicleDriverForbidden.contains($0) }) {
      throw .denied("role 'driver' may not update vehicle.\(path)")
    }
    let v = input.vehicle
    if mask.contains("vehicle_state"), v.state == .unknown {
      throw .invalid("vehicle.vehicle_state must be ONLINE or OFFLINE")
    }
    if mask.contains("supported_trip_types") { try Self.validateTripTypes(v.supportedTripTypes) }
    if mask.contains("maximum_capacity") { try Self.validateCapacity(v.maximumCapacity) }
    if mask.contains("vehicle_type"), v.category == .unknown {
      throw .invalid("vehicle.vehicle_type.category is required")
    }
    if mask.contains("attributes") { try Attribute.validate(v.attributes, field: "vehicle.attributes") }
    if mask.contains("license_plate") { try Self.validatePlate(v.licensePlate) }
    if mask.contains("last_location") {
      guard let location = v.lastLocation else { throw .invalid("vehicle.last_location is required by update_mask") }
      try location.validate("vehicle.last_location")
    }
    if mask.contains("past_locations") || mask.contains("last_location") {
      for (i, location) in input.pastLocations.enumerated() { try location.validate("vehicle.past_locations[\(i)]") }
    }
    if mask.contains("remaining_distance_meters"), let meters = v.remainingDistanceMeters, meters < 0 {
      throw .invalid("vehicle.remaining_distance_meters must not be negative, got \(meters)")
    }
    if mask.contains("remaining_time_seconds"), let seconds = input.remainingTimeSeconds, seconds < 0 {
      throw .invalid("vehicle.remaining_time_seconds must not be negative, got \(seconds)")
    }
    try v.currentRouteSegmentEndPoint?.location.point.validate("vehicle.current_route_segment_end_point.location.point")
    let locationsGiven = mask.contains("past_locations") || mask.contains("last_location")
    if locationsGiven {
      // Only a vehicle that exists has a trace: every unknown name would keep one.
      _ = try state.withLock { s throws(FleetError) in try Self.existingVehicle(name, in: s) }
    }
    let located =
      locationsGiven
      ? locate(name, mask.contains("last_location") ? v.lastLocation : nil, past: input.pastLocations)
      : []
    // `locate` returns the past locations first, then the new last location.
    let pastLocated = Array(located.prefix(input.pastLocations.count))
    let lastLocated = mask.contains("last_location") ? located.last : nil
    return VehicleUpdate(name: name, input: input, mask: mask, pastLocated: pastLocated, lastLocated: lastLocated)
  }

  /// Applies a prepared update to the vehicle in memory; returns it and the change to commit.
  static func apply(_ update: VehicleUpdate, to s: inout State, now: Date) throws(FleetError)
    -> (Vehicle, [StoredChange])
  {
    let (name, mask, v) = (update.name, update.mask, update.input.vehicle)
    var vehicle = try existingVehicle(name, in: s)
    let before = vehicle
    if mask.contains("vehicle_state") { vehicle.state = v.state }
    if mask.contains("supported_trip_types") { vehicle.supportedTripTypes = v.supportedTripTypes }
    if mask.contains("maximum_capacity") { vehicle.maximumCapacity = v.maximumCapacity }
    if mask.contains("vehicle_type") { vehicle.category = v.category }
    if mask.contains("attributes") { vehicle.attributes = v.attributes }
    if mask.contains("license_plate") { vehicle.licensePlate = v.licensePlate }
    if mask.contains("back_to_back_enabled") { vehicle.backToBackEnabled = v.backToBackEnabled }
    if mask.contains("navigation_status") { vehicle.navigationStatus = v.navigationStatus }
    if let location = update.lastLocated {
      let stored = vehicle.lastLocation?.updateTime ?? .distantPast
      if !update.keepsNewerPosition || (location.updateTime ?? now) >= stored {
        vehicle.lastLocation = received(location, now: now)
      }
    }
    if mask.contains("past_locations") || mask.contains("last_location") {
      ingestPastLocations(update.pastLocated, into: &vehicle.lastLocation, now: now)
    }
    if let position = vehicle.lastLocation?.location, vehicle.lastLocation != before.lastLocation {
      advance(&vehicle.odometer, to: position, accuracy: vehicle.lastLocation?.latlngAccuracy)
    }
    if mask.contains("current_route_segment") {
      if vehicle.currentRouteSegment != v.currentRouteSegment {
        vehicle.currentRouteSegment = v.currentRouteSegment
        vehicle.currentRouteSegmentVersion = now
      }
    }
    // Fleet Engine: the end point is ignored unless current_route_segment is also given.
    if mask.contains("current_route_segment_end_point") && mask.contains("current_route_segment") {
      vehicle.currentRouteSegmentEndPoint = v.currentRouteSegmentEndPoint
    }
    if mask.contains("remaining_distance_meters") { vehicle.remainingDistanceMeters = v.remainingDistanceMeters }
    if mask.contains("eta_to_first_waypoint") { vehicle.etaToFirstWaypoint = v.etaToFirstWaypoint }
    // Fleet Engine: remaining_time_seconds takes precedence over eta_to_first_waypoint.
    if mask.contains("remaining_time_seconds"), let seconds = update.input.remainingTimeSeconds {
      vehicle.etaToFirstWaypoint = now.addingTimeInterval(TimeInterval(seconds))
    }
    if mask.contains("waypoints") {
      let trips = vehicle.currentTrips.compactMap { s.trips[name.provider]?[$0] }.filter { !$0.status.isTerminal }
      let ordered = try WaypointPlanner.validateOrder(v.waypoints, trips: trips, field: "vehicle.waypoints")
      if ordered != vehicle.waypoints {
        vehicle.waypoints = ordered
        vehicle.waypointsVersion = now
      }
    }
    // A report that changes nothing (its position older than the stored one, nothing else
    // new) writes nothing: no revision, no commit, no push to riders. Not while a write of the
    // vehicle is in flight: the report must not be acknowledged before that write is durable,
    // and if it fails, the report is applied again on what was stored, where it may be newest.
    if update.keepsNewerPosition, vehicle == before,
      s.uncommitted[EntityKey(.vehicle, provider: name.provider, id: name.id)] == nil
    {
      return (before, [])
    }
    vehicle.updateTime = now
    let change = s.put(vehicle)
    return (s.vehicles[name.provider]![name.id]!, [change])
  }

  /// A vehicle just written, as the response shows it: with the progress computed after the
  /// write, unless a later change replaced it meanwhile.
  func shown(_ written: Vehicle) -> Vehicle {
    state.withLock { s in
      guard let current = s.vehicles[written.provider]?[written.id], current.revision == written.revision else {
        return written
      }
      return Self.decorated(current, in: s)
    }
  }

  /// Lets the progress engine snap reported positions on the vehicle's trace. Past locations
  /// come first, the new last location (if any) last, stamped with the server's time when the
  /// device gave none; past locations without a time are kept out of the trace.
  func locate(_ vehicle: ResourceName, _ last: VehicleLocation?, past: [VehicleLocation]) -> [VehicleLocation] {
    var stamped = past
    if var last {
      if last.updateTime == nil { last.updateTime = now() }
      stamped.append(last)
    }
    guard let engine = progressEngine, !stamped.isEmpty else { return stamped }
    return engine.locate(vehicle, fixes: stamped)
  }

  // MARK: - UpdateVehicleAttributes

  /// Fleet Engine UpdateVehicleAttributes: merges by key; returns the full list.
  public func updateVehicleAttributes(caller: Caller, name: ResourceName, attributes: [Attribute])
    async throws(FleetError) -> [Attribute]
  {
    try caller.mayCall(.updateVehicleAttributes)
    try caller.checkProvider(name.provider)
    try caller.checkVehicleAccess(vehicleID: name.id)
    guard !attributes.isEmpty else { throw .invalid("attributes is required: give at least one attribute") }
    try Attribute.validate(attributes, field: "attributes")
    return try await write { s, now throws(FleetError) in
      var vehicle = try Self.existingVehicle(name, in: s)
      var merged = vehicle.attributes
      for attribute in attributes {
        if let i = merged.firstIndex(where: { $0.key == attribute.key }) {
          merged[i] = attribute
        } else {
          merged.append(attribute)
        }
      }
      try Attribute.validate(merged, field: "vehicle.attributes")
      vehicle.attributes = merged
      vehicle.updateTime = now
      return (merged, [s.put(vehicle)])
    }
  }

  // MARK: - DeleteVehicle

  /// Fleet Engine DeleteVehicle: FAILED_PRECONDITION while trips are assigned to it.
  public func deleteVehicle(caller: Caller, name: ResourceName) async throws(FleetError) {
    try caller.mayCall(.deleteVehicle)
    try caller.checkProvider(name.provider)
    try await write { s, _ throws(FleetError) in
      let vehicle = try Self.existingVehicle(name, in: s)
      guard vehicle.currentTrips.isEmpty else {
        throw .precondition(
          "vehicle \(name) has active trips (\(vehicle.currentTrips.joined(separator: ", "))); complete, cancel or reassign them first"
        )
      }
      return ((), [s.removeVehicle(provider: name.provider, id: name.id)])
    }
  }

  // MARK: - ListVehicles

  public struct VehicleListing: Sendable, Hashable {
    public var pageSize: Int32 = 0
    public var pageToken = ""
    public var minimumCapacity: Int32?
    public var tripTypes: [TripType] = []
    public var maximumStaleness: Duration?
    public var categories: [VehicleCategory] = []
    /// Each `key:value`; all must match.
    public var requiredAttributes: [String] = []
    /// Each `k1:v1|k2:v2`; in each, at least one must match.
    public var requiredOneOfAttributes: [String] = []
    /// Each `k1:v1|k2:v2`; all of at least one set must match.
    public var requiredOneOfAttributeSets: [String] = []
    public var state: VehicleState = .unknown
    public var onTripOnly = false
    public var filter = ""
    public var viewport: Viewport?

    public init() {}
  }

  /// Fleet Engine ListVehicles, ordered by vehicle ID, with stable opaque page tokens.
  public func listVehicles(caller: Caller, provider: String, query: VehicleListing) throws(FleetError)
    -> (vehicles: [Vehicle], nextPageToken: String, totalSize: Int)
  {
    try caller.mayCall(.listVehicles)
    try caller.checkProvider(provider)
    guard !query.categories.isEmpty else {
      throw .invalid("vehicle_type_categories is required: give at least one category")
    }
    if query.categories.contains(.unknown) { throw .invalid("vehicle_type_categories must not contain UNKNOWN") }
    if let minimum = query.minimumCapacity, minimum < 0 {
      throw .invalid("minimum_capacity must not be negative, got \(minimum)")
    }
    if query.tripTypes.contains(.unknown) { throw .invalid("trip_types must not contain UNKNOWN_TRIP_TYPE") }
    if let staleness = query.maximumStaleness, staleness <= .zero {
      throw .invalid("maximum_staleness must be positive")
    }
    try query.viewport?.validate("viewport")
    let requiredGiven =
      !query.requiredAttributes.isEmpty || !query.requiredOneOfAttributes.isEmpty
      || !query.requiredOneOfAttributeSets.isEmpty
    try AttributeQuery.checkExclusive(filter: query.filter, requiredGiven: requiredGiven)
    try AttributeQuery.checkSizes(
      all: query.requiredAttributes.count,
      oneOf: query.requiredOneOfAttributes.map { $0.split(separator: "|").count },
      sets: query.requiredOneOfAttributeSets.map { $0.split(separator: "|").count })
    var attributes = AttributeQuery()
    attributes.all = try Self.parseAttributeTerms(
      query.requiredAttributes, field: "required_attributes", alternatives: false
    ).flatMap { $0 }
    attributes.oneOf = try Self.parseAttributeTerms(query.requiredOneOfAttributes, field: "required_one_of_attributes")
    attributes.sets = try Self.parseAttributeTerms(
      query.requiredOneOfAttributeSets, field: "required_one_of_attribute_sets")
    if !query.filter.isEmpty { attributes.filter = try AttributeFilter(parsing: query.filter) }
    let pageSize = try PageToken.pageSize(query.pageSize)
    var fingerprintQuery = query
    fingerprintQuery.pageToken = ""
    fingerprintQuery.pageSize = 0
    let fingerprint = "vehicles|\(String(describing: fingerprintQuery).hashValueStable)"
    let after = try PageToken.decode(query.pageToken, query: fingerprint)
    let now = now()

    return try read { s in
      let cutoff = query.maximumStaleness.map { now.addingTimeInterval(-$0.seconds) }
      let matching = (s.vehicles[provider] ?? [:]).values.filter { v in
        guard query.categories.contains(v.category) else { return false }
        if let minimum = query.minimumCapacity, v.maximumCapacity < minimum { return false }
        if !query.tripTypes.isEmpty && !query.tripTypes.contains(where: v.supportedTripTypes.contains) { return false }
        if let cutoff, (v.lastLocation?.serverTime ?? .distantPast) < cutoff { return false }
        if query.state != .unknown && v.state != query.state { return false }
        if query.onTripOnly && v.currentTrips.isEmpty { return false }
        if let viewport = query.viewport {
          guard let point = v.lastLocation?.location, viewport.contains(point) else { return false }
        }
        return attributes.matches(v.attributes)
      }.sorted { $0.id < $1.id }
      let (page, next) = PageToken.page(matching, id: \.id, size: pageSize, after: after, query: fingerprint)
      return (page.map { Self.decorated($0, in: s) }, next, matching.count)
    }
  }

  // MARK: - Helpers

  static func vehicleAlreadyExists(_ provider: String, _ vehicleID: String) -> FleetError {
    FleetError(.alreadyExists, "vehicle providers/\(provider)/vehicles/\(vehicleID) already exists")
  }

  static func existingVehicle(_ name: ResourceName, in s: State) throws(FleetError) -> Vehicle {
    guard let vehicle = s.vehicles[name.provider]?[name.id] else { throw .notFound("vehicle \(name) not found") }
    return vehicle
  }

  static func validateTripTypes(_ types: [TripType]) throws(FleetError) {
    guard !types.isEmpty else {
      throw .invalid("vehicle.supported_trip_types is required: give SHARED and/or EXCLUSIVE")
    }
    guard !types.contains(.unknown) else {
      throw .invalid("vehicle.supported_trip_types must not contain UNKNOWN_TRIP_TYPE")
    }
  }

  static func validateCapacity(_ capacity: Int32) throws(FleetError) {
    guard capacity >= 1 else { throw .invalid("vehicle.maximum_capacity must be at least 1, got \(capacity)") }
  }

  static func validatePlate(_ plate: LicensePlate?) throws(FleetError) {
    if let plate, plate.countryCode.isEmpty {
      throw .invalid("vehicle.license_plate.country_code is required when a license plate is given")
    }
  }

  /// Stamps a client location with the time fleetd accepted it.
  static func received(_ location: VehicleLocation, now: Date) -> VehicleLocation {
    var stamped = location
    stamped.serverTime = now
    if stamped.updateTime == nil { stamped.updateTime = now }
    return stamped
  }

  /// Positions sent after an outage: the newest one is used, and only if it is newer than the
  /// vehicle's current position — an old fix never overrides a newer one.
  static func ingestPastLocations(_ past: [VehicleLocation], into last: inout VehicleLocation?, now: Date) {
    guard let newest = past.filter({ $0.updateTime != nil }).max(by: { $0.updateTime! < $1.updateTime! }) else {
      return
    }
    let current = last?.updateTime ?? .distantPast
    if newest.updateTime! > current { last = received(newest, now: now) }
  }

  /// Parses `key:value` terms, `|`-separated when `alternatives` is true.
  static func parseAttributeTerms(_ terms: [String], field: String, alternatives: Bool = true) throws(FleetError)
    -> [[AttributeTerm]]
  {
    try terms.enumerated().map { (i, term) throws(FleetError) -> [AttributeTerm] in
      let parts = alternatives ? term.split(separator: "|").map(String.init) : [term]
      return try parts.map { (part) throws(FleetError) -> AttributeTerm in
        guard let parsed = AttributeTerm(part) else {
          throw .invalid(
            "\(field)[\(i)] must be 'key:value'\(alternatives ? " terms separated by '|'" : ""), got '\(term)'")
        }
        return parsed
      }
    }
  }
}

extension String {
  /// FNV-1a, stable across processes (unlike `hashValue`), for page-token fingerprints.
  var hashValueStable: String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return String(hash, radix: 36)
  }
}
