import FleetGeometry
import Foundation

/// What a client sent for a delivery vehicle: the values, and which top-level fields it set
/// (CreateDeliveryVehicle refuses most of them).
public struct DeliveryVehicleInput: Sendable, Hashable {
  public var vehicle: DeliveryVehicle
  /// Input only: positions recorded while offline.
  public var pastLocations: [VehicleLocation] = []
  /// The wire's field names of the fields set (`last_location`, `attributes`, …).
  public var fieldsSet: Set<String> = []

  public init(vehicle: DeliveryVehicle, pastLocations: [VehicleLocation] = [], fieldsSet: Set<String> = []) {
    self.vehicle = vehicle
    self.pastLocations = pastLocations
    self.fieldsSet = fieldsSet
  }
}

extension Fleet {
  /// Fleet Engine: "you may set the following optional fields: type, last_location, attributes";
  /// the Driver SDK's own create also sends its route segment, which Fleet Engine accepts.
  static let deliveryVehicleCreatable: Set<String> = [
    "type", "last_location", "attributes", "current_route_segment", "current_route_segment_end_point",
  ]
  static let deliveryVehicleUpdatable: Set<String> = [
    "last_location", "past_locations", "navigation_status", "current_route_segment",
    "current_route_segment_end_point", "remaining_distance_meters", "remaining_duration",
    "remaining_vehicle_journey_segments", "attributes", "type",
  ]
  /// What an untrusted driver may change: the location and navigation of its vehicle
  /// (`fleetengine.deliveryvehicles.updateLocation`), never its stops or attributes.
  static let deliveryVehicleLocationFields: Set<String> = [
    "last_location", "past_locations", "navigation_status", "current_route_segment",
    "current_route_segment_end_point", "remaining_distance_meters", "remaining_duration",
  ]
  /// Stops on one vehicle, and tasks over its stops, at most (the list is rewritten whole).
  static let maximumStops = 300
  static let maximumStopTasks = 500
  /// ListDeliveryVehicles' and ListTasks' page size: 100 by default and at most (Fleet Engine).
  static let maximumDeliveryPage = 100

  // MARK: - CreateDeliveryVehicle

  public func createDeliveryVehicle(caller: Caller, provider: String, id: String, input: DeliveryVehicleInput)
    async throws(FleetError) -> DeliveryVehicle
  {
    try caller.mayCall(.createDeliveryVehicle)
    try caller.checkProvider(provider)
    try ResourceID.validate(id, field: "delivery_vehicle_id")
    try caller.checkDeliveryVehicleAccess(id)
    if let field = input.fieldsSet.subtracting(Self.deliveryVehicleCreatable).subtracting(["name"]).sorted().first {
      throw .invalid(
        "delivery_vehicle.\(field) must not be set on CreateDeliveryVehicle (only type, last_location and attributes)")
    }
    let v = input.vehicle
    try Self.validateDeliveryType(v.type, required: false)
    try Attribute.validate(v.attributes, field: "delivery_vehicle.attributes")
    try v.lastLocation?.validate("delivery_vehicle.last_location")
    let created = try await write { s, now throws(FleetError) in
      guard s.deliveryVehicles[provider]?[id] == nil else {
        throw FleetError(.alreadyExists, "delivery vehicle providers/\(provider)/deliveryVehicles/\(id) already exists")
      }
      var vehicle = DeliveryVehicle(provider: provider, id: id)
      vehicle.type = v.type == .unspecified ? .auto : v.type
      vehicle.attributes = v.attributes
      vehicle.lastLocation = v.lastLocation.map { Self.received($0, now: now) }
      vehicle.currentRouteSegment = v.currentRouteSegment
      vehicle.currentRouteSegmentEndPoint = v.currentRouteSegment.isEmpty ? nil : v.currentRouteSegmentEndPoint
      vehicle.createTime = now
      vehicle.updateTime = now
      let change = s.put(vehicle)
      return (Self.deliveryVehicleShown(s.deliveryVehicles[provider]![id]!, in: s), [change])
    }
    return created
  }

  // MARK: - A delivery vehicle's location report

  /// A delivery vehicle's report on FleetKit's location stream: UpdateDeliveryVehicle of what a
  /// device reports — its position and navigation, never its stops or attributes. An empty mask
  /// means the positions sent.
  public func reportDeliveryLocation(caller: Caller, name: ResourceName, input: DeliveryVehicleInput, mask: [String])
    async throws(FleetError) -> DeliveryVehicle
  {
    var mask = mask
    if mask.isEmpty { mask = input.pastLocations.isEmpty ? ["last_location"] : ["last_location", "past_locations"] }
    if let field = mask.first(where: { !Self.deliveryVehicleLocationFields.contains($0) }) {
      throw .invalid(
        "update_mask.\(field) is not reported on the location stream (only the position and navigation): use UpdateDeliveryVehicle"
      )
    }
    return try await updateDeliveryVehicle(caller: caller, name: name, input: input, mask: mask)
  }

  // MARK: - GetDeliveryVehicle

  public func getDeliveryVehicle(caller: Caller, name: ResourceName) throws(FleetError) -> DeliveryVehicle {
    try caller.mayCall(.getDeliveryVehicle)
    try caller.checkProvider(name.provider)
    try caller.checkDeliveryVehicleAccess(name.id)
    return try read { s throws(FleetError) in
      Self.deliveryVehicleShown(try Self.existingDeliveryVehicle(name, in: s), in: s)
    }
  }

  // MARK: - UpdateDeliveryVehicle

  /// Fleet Engine UpdateDeliveryVehicle: only the fields in `mask` change. A new
  /// `remaining_vehicle_journey_segments` replaces the list: the tasks it names are assigned to
  /// the vehicle, and the tasks it no longer names are closed (their stop was made).
  public func updateDeliveryVehicle(
    caller: Caller, name: ResourceName, input: DeliveryVehicleInput, mask rawMask: [String]
  ) async throws(FleetError) -> DeliveryVehicle {
    try await updateDeliveryVehicle(caller: caller, name: name, input: input, mask: rawMask, expectingStops: nil)
  }

  /// `expectingStops`: the stops the vehicle must still have (in any order), else ABORTED; what
  /// a new order of them was computed from.
  func updateDeliveryVehicle(
    caller: Caller, name: ResourceName, input: DeliveryVehicleInput, mask rawMask: [String],
    expectingStops: [VehicleStop]?
  ) async throws(FleetError) -> DeliveryVehicle {
    try caller.mayCall(.updateDeliveryVehicle)
    try caller.checkProvider(name.provider)
    try caller.checkDeliveryVehicleAccess(name.id)
    let mask = try UpdateMask(
      rawMask, updatable: Self.deliveryVehicleUpdatable, serverOwned: ["name"], resource: "delivery_vehicle")
    if caller.role == .deliveryUntrustedDriver,
      let path = mask.paths.subtracting(Self.deliveryVehicleLocationFields).sorted().first
    {
      throw .denied(
        "role 'deliveryuntrusteddriver' may only update the vehicle's location, not delivery_vehicle.\(path)")
    }
    let v = input.vehicle
    if mask.contains("last_location") {
      guard let location = v.lastLocation else {
        throw .invalid("delivery_vehicle.last_location is required by update_mask")
      }
      try location.validate("delivery_vehicle.last_location")
    }
    if mask.contains("past_locations") {
      for (i, location) in input.pastLocations.enumerated() {
        try location.validate("delivery_vehicle.past_locations[\(i)]")
      }
    }
    if mask.contains("attributes") { try Attribute.validate(v.attributes, field: "delivery_vehicle.attributes") }
    if mask.contains("type") { try Self.validateDeliveryType(v.type, required: true) }
    var journey = v.journey
    if mask.contains("remaining_vehicle_journey_segments") {
      try Self.validateJourney(journey)
      // Each drive as estimated now, from where the vehicle is (Fleet Engine: "the vehicle's
      // location recorded at the time that this stop was added"); outside the lock.
      let from =
        mask.contains("last_location")
        ? v.lastLocation?.location
        : try read { s throws(FleetError) in try Self.existingDeliveryVehicle(name, in: s).lastLocation?.location }
      estimateDrives(&journey, from: from)
    }
    // A new position with the stops kept: the drive to the first stop is estimated again from
    // it, so that the tracking of the tasks there moves with the vehicle.
    var firstDrive: (from: LatLng, stop: VehicleStop, segment: JourneySegment)?
    let moved = mask.contains("last_location") || mask.contains("past_locations")
    if moved, !mask.contains("remaining_vehicle_journey_segments"),
      let position = v.lastLocation?.location ?? input.pastLocations.last?.location,
      let first = try read({ s throws(FleetError) in try Self.existingDeliveryVehicle(name, in: s).journey.first })
    {
      var drive = [first]
      estimateDrives(&drive, from: position)
      firstDrive = (position, first.stop, drive[0])
    }

    return try await write { s, now throws(FleetError) in
      var vehicle = try Self.existingDeliveryVehicle(name, in: s)
      if let expectingStops, Set(vehicle.journey.map(\.stop)) != Set(expectingStops) {
        throw FleetError(.aborted, "the stops of delivery vehicle \(name) changed meanwhile; order them again")
      }
      var changes: [StoredChange] = []
      if mask.contains("remaining_vehicle_journey_segments") {
        changes += try Self.assignJourney(journey, to: vehicle, in: &s, now: now)
        vehicle.journey = journey
      }
      if mask.contains("last_location"), let location = v.lastLocation {
        vehicle.lastLocation = Self.received(location, now: now)
      }
      if mask.contains("past_locations") {
        Self.ingestPastLocations(input.pastLocations, into: &vehicle.lastLocation, now: now)
      }
      // Only when made from the position now held (an old past location is not taken).
      if let firstDrive, vehicle.journey.first?.stop == firstDrive.stop,
        vehicle.lastLocation?.location == firstDrive.from
      {
        vehicle.journey[0] = firstDrive.segment
      }
      if mask.contains("navigation_status") { vehicle.navigationStatus = v.navigationStatus }
      if mask.contains("current_route_segment") { vehicle.currentRouteSegment = v.currentRouteSegment }
      if mask.contains("current_route_segment_end_point") {
        vehicle.currentRouteSegmentEndPoint = v.currentRouteSegmentEndPoint
      }
      if mask.contains("remaining_distance_meters") { vehicle.remainingDistanceMeters = v.remainingDistanceMeters }
      if mask.contains("remaining_duration") { vehicle.remainingDuration = v.remainingDuration }
      // Fleet Engine ignores the segment's end point, distance and duration without a segment.
      if vehicle.currentRouteSegment.isEmpty {
        vehicle.currentRouteSegmentEndPoint = nil
        vehicle.remainingDistanceMeters = nil
        vehicle.remainingDuration = nil
      }
      if mask.contains("attributes") { vehicle.attributes = v.attributes }
      if mask.contains("type") { vehicle.type = v.type }
      vehicle.updateTime = now
      changes.insert(s.put(vehicle), at: 0)
      return (Self.deliveryVehicleShown(s.deliveryVehicles[name.provider]![name.id]!, in: s), changes)
    }
  }

  /// A new stop list's own rules, before the tasks are looked at: each stop has a place, its
  /// tasks and a state; only the first stop may be under way or reached.
  static func validateJourney(_ journey: [JourneySegment]) throws(FleetError) {
    let field = "delivery_vehicle.remaining_vehicle_journey_segments"
    guard journey.count <= maximumStops else {
      throw .invalid("\(field) may hold at most \(maximumStops) stops, got \(journey.count)")
    }
    var seen = Set<String>()
    for (i, segment) in journey.enumerated() {
      let stop = segment.stop
      try stop.plannedLocation.validate("\(field)[\(i)].stop.planned_location.point")
      guard !stop.tasks.isEmpty else { throw .invalid("\(field)[\(i)].stop.tasks is required: a stop has tasks") }
      guard stop.state != .unspecified else {
        throw .invalid("\(field)[\(i)].stop.state is required (NEW, ENROUTE or ARRIVED)")
      }
      if i > 0, stop.state != .new {
        throw .invalid("\(field)[\(i)].stop.state must be NEW: only the first stop can be ENROUTE or ARRIVED")
      }
      for (j, info) in stop.tasks.enumerated() {
        try ResourceID.validate(info.taskID, field: "\(field)[\(i)].stop.tasks[\(j)].task_id")
        guard seen.insert(info.taskID).inserted else {
          throw .invalid("\(field)[\(i)].stop.tasks[\(j)]: task '\(info.taskID)' is on the list twice")
        }
      }
    }
    guard seen.count <= maximumStopTasks else {
      throw .invalid("\(field) may hold at most \(maximumStopTasks) tasks, got \(seen.count)")
    }
  }

  /// Assigns the tasks of a new stop list to `vehicle` and closes those it dropped; returns
  /// the tasks' changes. A task must exist, be open, and be on no other vehicle (Fleet Engine:
  /// to move a shipment, close its task and create a new one).
  static func assignJourney(
    _ journey: [JourneySegment], to vehicle: DeliveryVehicle, in s: inout State, now: Date
  ) throws(FleetError) -> [StoredChange] {
    let provider = vehicle.provider
    let field = "delivery_vehicle.remaining_vehicle_journey_segments"
    var listed = Set<String>()
    var assign: [DeliveryTask] = []
    for (i, segment) in journey.enumerated() {
      for (j, info) in segment.stop.tasks.enumerated() {
        listed.insert(info.taskID)
        guard let task = s.tasks[provider]?[info.taskID] else {
          throw .notFound("\(field)[\(i)].stop.tasks[\(j)]: task providers/\(provider)/tasks/\(info.taskID) not found")
        }
        if task.deliveryVehicleID == vehicle.id {
          // Already this vehicle's: still on its list, or closed earlier and cannot come back.
          guard task.state == .open || vehicle.taskIDs.contains(task.id) else {
            throw .precondition("task '\(task.id)' is CLOSED and cannot be put on a stop again; create a new task")
          }
          continue
        }
        guard task.deliveryVehicleID.isEmpty else {
          throw .precondition(
            "task '\(task.id)' is assigned to delivery vehicle '\(task.deliveryVehicleID)'; close it and create a new task to move the shipment"
          )
        }
        guard task.state == .open else {
          throw .precondition("task '\(task.id)' is CLOSED and cannot be put on a stop; create a new task")
        }
        assign.append(task)
      }
    }
    var changes: [StoredChange] = []
    for var task in assign {
      task.deliveryVehicleID = vehicle.id
      task.updateTime = now
      changes.append(s.put(task))
    }
    // Fleet Engine: removing a stop marks its tasks CLOSED.
    for id in vehicle.taskIDs where !listed.contains(id) {
      guard var task = s.tasks[provider]?[id], task.state == .open else { continue }
      task.state = .closed
      task.updateTime = now
      changes.append(s.put(task))
    }
    return changes
  }

  /// Fills each segment's drive and its shape: from `start` (the vehicle) to the first stop,
  /// then stop to stop, on the road graph when there is one. A segment without a route keeps no
  /// estimate.
  func estimateDrives(_ journey: inout [JourneySegment], from start: LatLng?) {
    guard !journey.isEmpty else { return }
    let estimator = travel ?? StraightLineTravel()
    let stops = journey.map(\.stop.plannedLocation)
    let points = (start.map { [$0] } ?? []) + stops
    let offset = start == nil ? 1 : 0
    let now = now()
    for i in journey.indices {
      journey[i].drivingDistanceMeters = nil
      journey[i].drivingDuration = nil
      journey[i].path = []
    }
    guard points.count >= 2 else { return }
    for (k, pair) in zip(points, points.dropFirst()).enumerated() {
      guard let drive = estimator.drive(from: pair.0, to: pair.1, now: now) else { continue }
      let i = k + offset
      journey[i].drivingDistanceMeters = Int32(clamping: Int(drive.estimate.metres.rounded()))
      journey[i].drivingDuration = drive.estimate.seconds
      journey[i].path = drive.path
    }
  }

  // MARK: - ListDeliveryVehicles

  public struct DeliveryVehicleQuery: Sendable, Hashable {
    public var pageSize: Int32 = 0
    public var pageToken = ""
    public var filter = ""
    public var viewport: Viewport?
    public init() {}
  }

  /// Fleet Engine ListDeliveryVehicles: by attribute filter and viewport, in pages of at most
  /// 100, without the vehicles' stops and route (Fleet Engine leaves them out of lists).
  public func listDeliveryVehicles(caller: Caller, provider: String, query: DeliveryVehicleQuery)
    throws(FleetError) -> (vehicles: [DeliveryVehicle], nextPageToken: String, totalSize: Int)
  {
    try caller.mayCall(.listDeliveryVehicles)
    try caller.checkProvider(provider)
    let filter = query.filter.isEmpty ? nil : try AttributeFilter(parsing: query.filter)
    try query.viewport?.validate("viewport")
    let pageSize = min(try PageToken.pageSize(query.pageSize), Self.maximumDeliveryPage)
    var fingerprintQuery = query
    fingerprintQuery.pageToken = ""
    fingerprintQuery.pageSize = 0
    let fingerprint = "deliveryVehicles|\(String(describing: fingerprintQuery).hashValueStable)"
    let after = try PageToken.decode(query.pageToken, query: fingerprint)
    return try read { s in
      let matching = (s.deliveryVehicles[provider] ?? [:]).values.filter { v in
        if let viewport = query.viewport {
          guard let point = v.lastLocation?.location, viewport.contains(point) else { return false }
        }
        return filter?.matches(v.attributes) ?? true
      }.sorted { $0.id < $1.id }
      let (page, next) = PageToken.page(matching, id: \.id, size: pageSize, after: after, query: fingerprint)
      let listed = page.map { v in
        var listed = v
        listed.journey = []
        listed.currentRouteSegment = []
        return listed
      }
      return (listed, next, matching.count)
    }
  }

  // MARK: - DeleteDeliveryVehicle

  /// Fleet Engine: FAILED_PRECONDITION while the vehicle has OPEN tasks assigned.
  public func deleteDeliveryVehicle(caller: Caller, name: ResourceName) async throws(FleetError) {
    try caller.mayCall(.deleteDeliveryVehicle)
    try caller.checkProvider(name.provider)
    try await write { s, _ throws(FleetError) in
      _ = try Self.existingDeliveryVehicle(name, in: s)
      if let open = (s.tasks[name.provider] ?? [:]).values.filter({
        $0.deliveryVehicleID == name.id && $0.state == .open
      }).map(\.id).sorted().first {
        throw .precondition("delivery vehicle \(name) has OPEN tasks assigned (task '\(open)'); close them first")
      }
      return ((), [s.removeDeliveryVehicle(provider: name.provider, id: name.id)])
    }
  }

  // MARK: - Helpers

  static func existingDeliveryVehicle(_ name: ResourceName, in s: State) throws(FleetError) -> DeliveryVehicle {
    guard let vehicle = s.deliveryVehicles[name.provider]?[name.id] else {
      throw .notFound("delivery vehicle \(name) not found")
    }
    return vehicle
  }

  static func validateDeliveryType(_ type: DeliveryVehicleType, required: Bool) throws(FleetError) {
    if required, type == .unspecified {
      throw .invalid("delivery_vehicle.type must be AUTO, TWO_WHEELER, BICYCLE or PEDESTRIAN")
    }
  }

  /// The vehicle as answered: each stop's tasks with their durations and time windows.
  static func deliveryVehicleShown(_ vehicle: DeliveryVehicle, in s: State) -> DeliveryVehicle {
    var shown = vehicle
    for i in shown.journey.indices {
      for j in shown.journey[i].stop.tasks.indices {
        let info = shown.journey[i].stop.tasks[j]
        guard let task = s.tasks[vehicle.provider]?[info.taskID] else { continue }
        shown.journey[i].stop.tasks[j].duration = task.duration
        shown.journey[i].stop.tasks[j].targetTimeWindow = task.targetTimeWindow
      }
    }
    return shown
  }
}
