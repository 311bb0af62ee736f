import FleetGeometry
import Foundation

/// What a client sent for a task: the values, and which top-level fields it set (CreateTask
/// refuses most of them).
public struct TaskInput: Sendable, Hashable {
  public var task: DeliveryTask
  /// The wire's field names of the fields set (`type`, `tracking_id`, …).
  public var fieldsSet: Set<String> = []

  public init(task: DeliveryTask, fieldsSet: Set<String> = []) {
    self.task = task
    self.fieldsSet = fieldsSet
  }
}

extension Fleet {
  /// Fleet Engine CreateTask: "the following fields are required: type, state (OPEN),
  /// tracking_id (…), planned_location (…), task_duration. The following fields can be optionally
  /// set: target_time_window, task_tracking_view_config, attributes. … All other Task fields must
  /// not be set".
  static let taskCreatable: Set<String> = [
    "type", "state", "tracking_id", "planned_location", "task_duration", "target_time_window",
    "task_tracking_view_config", "attributes",
  ]
  static let taskUpdatable: Set<String> = [
    "state", "task_outcome", "task_outcome_time", "task_outcome_location", "target_time_window",
    "task_tracking_view_config", "attributes",
  ]
  /// Immutable once created, or the server's own.
  static let taskNotUpdatable: Set<String> = [
    "name", "type", "tracking_id", "planned_location", "task_duration", "delivery_vehicle_id", "journey_sharing_info",
    "task_outcome_location_source",
  ]
  /// Fleet Engine: "You can create a maximum of 500 tasks in a batch."
  public static let maximumBatch = 500
  /// The properties ListTasks' filter may name besides `attributes.KEY`.
  static let taskFilterProperties: [String: AttributeFilter.PropertyKind] = [
    "state": .text, "type": .text, "tracking_id": .text, "delivery_vehicle_id": .text, "task_outcome": .text,
    "name": .text, "task_outcome_time": .time,
  ]

  // MARK: - CreateTask, BatchCreateTasks

  public func createTask(caller: Caller, provider: String, id: String, input: TaskInput) async throws(FleetError)
    -> DeliveryTask
  {
    try caller.mayCall(.createTask)
    try caller.checkProvider(provider)
    let task = try Self.newTask(provider: provider, id: id, input: input, field: "task")
    try caller.checkTaskAccess(id, assignedVehicle: nil)
    return try await write { s, now throws(FleetError) in
      let change = try Self.create(task, in: &s, now: now)
      return (s.tasks[provider]![id]!, [change])
    }
  }

  /// All or nothing: every task is checked before any is made.
  public func batchCreateTasks(caller: Caller, provider: String, tasks requests: [(id: String, input: TaskInput)])
    async throws(FleetError) -> [DeliveryTask]
  {
    try caller.mayCall(.batchCreateTasks)
    try caller.checkProvider(provider)
    guard !requests.isEmpty else { throw .invalid("requests is required: at least one CreateTaskRequest") }
    guard requests.count <= Self.maximumBatch else {
      throw .invalid("requests may hold at most \(Self.maximumBatch) tasks, got \(requests.count)")
    }
    var tasks: [DeliveryTask] = []
    var ids = Set<String>()
    for (i, request) in requests.enumerated() {
      let task = try Self.newTask(
        provider: provider, id: request.id, input: request.input, field: "requests[\(i)].task",
        idField: "requests[\(i)].task_id")
      guard ids.insert(task.id).inserted else {
        throw .invalid("requests[\(i)].task_id '\(task.id)' is in the batch twice")
      }
      try caller.checkTaskAccess(task.id, batch: true, assignedVehicle: nil)
      tasks.append(task)
    }
    return try await write { s, now throws(FleetError) in
      var changes: [StoredChange] = []
      for task in tasks { changes.append(try Self.create(task, in: &s, now: now)) }
      return (tasks.map { s.tasks[provider]![$0.id]! }, changes)
    }
  }

  /// A task as CreateTask would make it, every rule checked (outside the lock).
  static func newTask(provider: String, id: String, input: TaskInput, field: String, idField: String = "task_id")
    throws(FleetError) -> DeliveryTask
  {
    try ResourceID.validate(id, field: idField)
    if let extra = input.fieldsSet.subtracting(taskCreatable).subtracting(["name"]).sorted().first {
      throw .invalid(
        "\(field).\(extra) must not be set on CreateTask (only type, state, tracking_id, planned_location, task_duration, target_time_window, task_tracking_view_config and attributes)"
      )
    }
    let t = input.task
    guard t.type != .unspecified else {
      throw .invalid("\(field).type is required (PICKUP, DELIVERY, SCHEDULED_STOP or UNAVAILABLE)")
    }
    guard t.state == .open else { throw .invalid("\(field).state is required and must be OPEN") }
    switch t.type {
    case .pickup, .delivery:
      guard !t.trackingID.isEmpty else {
        throw .invalid("\(field).tracking_id is required for \(t.type.wireName) tasks")
      }
      try ResourceID.validate(t.trackingID, field: "\(field).tracking_id")
    case .scheduledStop, .unavailable, .unspecified:
      guard t.trackingID.isEmpty else {
        throw .invalid("\(field).tracking_id must not be set for \(t.type.wireName) tasks")
      }
    }
    if t.type != .unavailable, t.plannedLocation == nil {
      throw .invalid("\(field).planned_location is required for \(t.type.wireName) tasks")
    }
    try t.plannedLocation?.validate("\(field).planned_location.point")
    guard input.fieldsSet.contains("task_duration") else { throw .invalid("\(field).task_duration is required") }
    guard t.duration.isFinite, t.duration >= 0 else {
      throw .invalid("\(field).task_duration must not be negative")
    }
    if let window = t.targetTimeWindow { try validate(window, field: "\(field).target_time_window") }
    try Attribute.validate(t.attributes, field: "\(field).attributes")
    var task = DeliveryTask(provider: provider, id: id)
    task.type = t.type
    task.state = .open
    task.trackingID = t.trackingID
    task.plannedLocation = t.plannedLocation
    task.duration = t.duration
    task.targetTimeWindow = t.targetTimeWindow
    task.trackingViewConfig = t.trackingViewConfig
    task.attributes = t.attributes
    return task
  }

  static func create(_ task: DeliveryTask, in s: inout State, now: Date) throws(FleetError) -> StoredChange {
    guard s.tasks[task.provider]?[task.id] == nil else {
      throw FleetError(.alreadyExists, "task \(task.name) already exists")
    }
    var task = task
    task.createTime = now
    task.updateTime = now
    return s.put(task)
  }

  static func validate(_ window: TimeWindow, field: String) throws(FleetError) {
    guard window.start <= window.end else { throw .invalid("\(field).start_time must not be after end_time") }
  }

  // MARK: - GetTask

  public func getTask(caller: Caller, name: ResourceName) throws(FleetError) -> TaskView {
    try caller.mayCall(.getTask)
    try caller.checkProvider(name.provider)
    return try read { s throws(FleetError) in
      let task = try Self.existingTask(name, in: s)
      try caller.checkTaskAccess(task.id, assignedVehicle: task.deliveryVehicleID)
      return TaskView(task: task, journey: Self.journey(of: task, in: s))
    }
  }

  // MARK: - UpdateTask

  /// Fleet Engine UpdateTask: the masked fields change. A task on a vehicle is closed by
  /// removing its stop, not here; the outcome is set once; an outcome without a location takes
  /// the vehicle's last (raw) location.
  public func updateTask(caller: Caller, name: ResourceName, input: TaskInput, mask rawMask: [String])
    async throws(FleetError) -> TaskView
  {
    try caller.mayCall(.updateTask)
    try caller.checkProvider(name.provider)
    let mask = try UpdateMask(
      rawMask, updatable: Self.taskUpdatable, serverOwned: Self.taskNotUpdatable, resource: "task")
    let t = input.task
    if mask.contains("state"), t.state == .unspecified { throw .invalid("task.state must be OPEN or CLOSED") }
    if mask.contains("task_outcome"), t.outcome == .unspecified {
      throw .invalid("task.task_outcome must be SUCCEEDED or FAILED")
    }
    if mask.contains("task_outcome_location") {
      guard let location = t.outcomeLocation else {
        throw .invalid("task.task_outcome_location is required by update_mask")
      }
      try location.validate("task.task_outcome_location.point")
    }
    if mask.contains("target_time_window"), let window = t.targetTimeWindow {
      try Self.validate(window, field: "task.target_time_window")
    }
    if mask.contains("attributes") { try Attribute.validate(t.attributes, field: "task.attributes") }

    return try await write { s, now throws(FleetError) in
      var task = try Self.existingTask(name, in: s)
      try caller.checkTaskAccess(task.id, assignedVehicle: task.deliveryVehicleID)
      if mask.contains("state"), t.state != task.state {
        guard task.state == .open else { throw .precondition("task '\(task.id)' is CLOSED and cannot be reopened") }
        guard task.deliveryVehicleID.isEmpty || !Self.isOnStops(task, in: s) else {
          throw .precondition(
            "task '\(task.id)' is on delivery vehicle '\(task.deliveryVehicleID)': remove its stop from the vehicle to close it"
          )
        }
        task.state = t.state
      }
      if mask.contains("task_outcome") {
        guard task.outcome == .unspecified || task.outcome == t.outcome else {
          throw .precondition("task '\(task.id)' already has outcome \(task.outcome.wireName); it cannot change")
        }
        if task.outcome == .unspecified {
          task.outcome = t.outcome
          // Not given with it (below when given): now, and the vehicle's last raw location.
          if !mask.contains("task_outcome_time") { task.outcomeTime = now }
          if !mask.contains("task_outcome_location"),
            let vehicle = s.deliveryVehicles[task.provider]?[task.deliveryVehicleID],
            let location = vehicle.lastLocation?.rawLocation ?? vehicle.lastLocation?.location
          {
            task.outcomeLocation = location
            task.outcomeLocationSource = .lastVehicleLocation
          }
        }
      }
      if mask.contains("task_outcome_time") { task.outcomeTime = t.outcomeTime }
      if mask.contains("task_outcome_location"), let location = t.outcomeLocation {
        task.outcomeLocation = location
        task.outcomeLocationSource = .provider
      }
      if mask.contains("target_time_window") { task.targetTimeWindow = t.targetTimeWindow }
      if mask.contains("task_tracking_view_config") { task.trackingViewConfig = t.trackingViewConfig }
      if mask.contains("attributes") { task.attributes = t.attributes }
      task.updateTime = now
      let change = s.put(task)
      return (TaskView(task: task, journey: Self.journey(of: task, in: s)), [change])
    }
  }

  // MARK: - ListTasks

  public struct TaskQuery: Sendable, Hashable {
    public var pageSize: Int32 = 0
    public var pageToken = ""
    public var filter = ""
    public init() {}
  }

  /// Fleet Engine ListTasks: AIP-160 over the task's state, type, tracking ID, vehicle, outcome,
  /// outcome time and attributes; pages of at most 100.
  public func listTasks(caller: Caller, provider: String, query: TaskQuery) throws(FleetError)
    -> (tasks: [TaskView], nextPageToken: String, totalSize: Int)
  {
    try caller.mayCall(.listTasks)
    try caller.checkProvider(provider)
    let filter =
      query.filter.isEmpty ? nil : try AttributeFilter(parsing: query.filter, properties: Self.taskFilterProperties)
    let pageSize = min(try PageToken.pageSize(query.pageSize), Self.maximumDeliveryPage)
    var fingerprintQuery = query
    fingerprintQuery.pageToken = ""
    fingerprintQuery.pageSize = 0
    let fingerprint = "tasks|\(String(describing: fingerprintQuery).hashValueStable)"
    let after = try PageToken.decode(query.pageToken, query: fingerprint)
    return try read { s in
      let matching = (s.tasks[provider] ?? [:]).values.filter { task in
        filter?.matches(task.attributes) { Self.filterProperty($0, of: task) } ?? true
      }.sorted { $0.id < $1.id }
      let (page, next) = PageToken.page(matching, id: \.id, size: pageSize, after: after, query: fingerprint)
      return (page.map { TaskView(task: $0, journey: Self.journey(of: $0, in: s)) }, next, matching.count)
    }
  }

  /// A task's property as ListTasks' filter compares it: enums by their wire names.
  static func filterProperty(_ name: String, of task: DeliveryTask) -> String? {
    switch name {
    case "state": task.state.wireName
    case "type": task.type.wireName
    case "tracking_id": task.trackingID
    case "delivery_vehicle_id": task.deliveryVehicleID
    case "task_outcome": task.outcome.wireName
    case "name": task.name.description
    case "task_outcome_time": task.outcomeTime.map { String($0.timeIntervalSince1970) }
    default: nil
    }
  }

  // MARK: - DeleteTask

  /// Fleet Engine: FAILED_PRECONDITION while the task is OPEN and assigned to a vehicle.
  public func deleteTask(caller: Caller, name: ResourceName) async throws(FleetError) {
    try caller.mayCall(.deleteTask)
    try caller.checkProvider(name.provider)
    try await write { s, _ throws(FleetError) in
      let task = try Self.existingTask(name, in: s)
      if task.state == .open, !task.deliveryVehicleID.isEmpty {
        throw .precondition("task \(name) is OPEN and assigned to delivery vehicle '\(task.deliveryVehicleID)'")
      }
      return ((), [s.removeTask(provider: name.provider, id: name.id)])
    }
  }

  // MARK: - GetTaskTrackingInfo

  /// What a consumer may see of a shipment.
  public func getTaskTrackingInfo(caller: Caller, provider: String, trackingID: String) throws(FleetError)
    -> TaskTrackingInfo
  {
    try caller.mayCall(.getTaskTrackingInfo)
    try caller.checkProvider(provider)
    try ResourceID.validate(trackingID, field: "name")
    try caller.checkTrackingAccess(trackingID)
    let now = now()
    return try read { s throws(FleetError) in
      try Self.trackingInfo(provider: provider, trackingID: trackingID, in: s, now: now)
    }
  }

  /// fleetkit.v1.TaskTracking/WatchTaskTrackingInfo: GetTaskTrackingInfo now and after every change
  /// that moves it; the stream ends once the shipment's task is closed.
  public func watchTaskTrackingInfo(caller: Caller, provider: String, trackingID: String) throws(FleetError)
    -> TrackingWatch
  {
    try caller.mayCall(.watchTaskTrackingInfo)
    try caller.checkProvider(provider)
    try ResourceID.validate(trackingID, field: "name")
    try caller.checkTrackingAccess(trackingID)
    let name = ResourceName(provider: provider, kind: .taskTrackingInfo, id: trackingID)
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: TaskTrackingInfo.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
    let watcher = TrackingWatcher(caller: caller, continuation: continuation)
    // Registered before the first read, so that no change between the two is missed.
    trackingWatchers.add(watcher, for: name)
    continuation.onTermination = { [trackingWatchers] _ in trackingWatchers.remove(watcher, for: name) }
    let watch = TrackingWatch(updates: stream) { [trackingWatchers] in
      trackingWatchers.remove(watcher, for: name)
      continuation.finish()
    }
    let now = now()
    do {
      let (info, sequence) = try read { s throws(FleetError) in
        (try Self.trackingInfo(provider: provider, trackingID: trackingID, in: s, now: now), s.sequence)
      }
      watcher.send(info, sequence: sequence)
    } catch {
      watch.stop()
      throw error
    }
    return watch
  }

  /// The tracking info of a tracking ID. Several tasks may share one (a pickup and its delivery,
  /// a redelivery): the one shown is the open one whose stop comes first, else an open unassigned
  /// one, else the one closed last.
  static func trackingInfo(provider: String, trackingID: String, in s: State, now: Date) throws(FleetError)
    -> TaskTrackingInfo
  {
    let tasks = (s.tasksByTrackingID[provider]?[trackingID] ?? []).compactMap { s.tasks[provider]?[$0] }
    guard !tasks.isEmpty else {
      throw .notFound("no task has tracking ID '\(trackingID)' (providers/\(provider)/taskTrackingInfo/\(trackingID))")
    }
    let journeys = tasks.map { ($0, journey(of: $0, in: s)) }
    let chosen =
      journeys.filter { $0.1 != nil }.min { a, b in
        (a.1!.segments.count, a.0.id) < (b.1!.segments.count, b.0.id)
      }
      ?? journeys.filter { $0.0.state == .open }.min { $0.0.id < $1.0.id }
      ?? journeys.max { a, b in
        (a.0.outcomeTime ?? a.0.updateTime, a.0.id) < (b.0.outcomeTime ?? b.0.updateTime, b.0.id)
      }!
    return trackingInfo(chosen.0, journey: chosen.1, now: now)
  }

  /// The tracking info of `task`, each element shown as its view config says.
  static func trackingInfo(_ task: DeliveryTask, journey: TaskJourney?, now: Date) -> TaskTrackingInfo {
    var info = TaskTrackingInfo(task: task)
    guard let journey else { return info }
    let stops = Int32(journey.segments.count)
    let known = journey.segments.allSatisfy { $0.drivingDuration != nil && $0.drivingDistanceMeters != nil }
    let metres = known ? journey.segments.reduce(Int32(0)) { $0 &+ ($1.drivingDistanceMeters ?? 0) } : nil
    // Driving to the stop, plus the tasks of the stops before it.
    var arrival: Date?
    if known {
      let driving = journey.segments.reduce(0.0) { $0 + ($1.drivingDuration ?? 0) }
      let earlierWork = journey.segments.dropLast().reduce(0.0) { total, segment in
        total + segment.stop.tasks.reduce(0.0) { $0 + ($1.duration ?? 0) }
      }
      arrival = now.addingTimeInterval(driving + earlierWork)
    }
    let config = task.trackingViewConfig ?? TaskTrackingViewConfig()
    func shown(_ option: Visibility?) -> Bool {
      switch option ?? defaultVisibility {
      case .always: true
      case .never: false
      case .remainingStopCountAtMost(let n): stops <= n
      case .remainingDrivingDistanceAtMost(let n): metres.map { $0 <= n } ?? false
      case .durationUntilArrivalAtMost(let seconds): arrival.map { $0.timeIntervalSince(now) <= seconds } ?? false
      }
    }
    // A break (an UNAVAILABLE task) before the stop hides where the vehicle is.
    let onBreakBefore = journey.segments.dropLast().contains { segment in segment.stop.tasks.contains { $0.isBreak } }
    if shown(config.vehicleLocation), !onBreakBefore { info.vehicleLocation = journey.vehicleLocation }
    // The route would give the vehicle away: shown only where the vehicle is.
    if shown(config.routePolylinePoints), info.vehicleLocation != nil {
      info.routePolylinePoints = journey.segments.flatMap(\.path)
    }
    if shown(config.remainingStopCount) { info.remainingStopCount = stops }
    if shown(config.remainingDrivingDistance) { info.remainingDrivingDistanceMeters = metres }
    if shown(config.estimatedArrivalTime) { info.estimatedArrivalTime = arrival }
    if shown(config.estimatedTaskCompletionTime) {
      info.estimatedTaskCompletionTime = arrival?.addingTimeInterval(task.duration)
    }
    return info
  }

  /// Fleet Engine's default for an element a task's config leaves unset: shown while the vehicle
  /// is within five stops of the task.
  static let defaultVisibility = Visibility.remainingStopCountAtMost(5)

  // MARK: - Helpers

  static func existingTask(_ name: ResourceName, in s: State) throws(FleetError) -> DeliveryTask {
    guard let task = s.tasks[name.provider]?[name.id] else { throw .notFound("task \(name) not found") }
    return task
  }

  /// Whether the task is on its vehicle's remaining stops.
  static func isOnStops(_ task: DeliveryTask, in s: State) -> Bool {
    s.deliveryVehicles[task.provider]?[task.deliveryVehicleID]?.taskIDs.contains(task.id) ?? false
  }

  /// An open task's way there: its vehicle's segments up to its stop; nil when it is closed or
  /// on no vehicle's stops.
  static func journey(of task: DeliveryTask, in s: State) -> TaskJourney? {
    guard task.state == .open, !task.deliveryVehicleID.isEmpty,
      let vehicle = s.deliveryVehicles[task.provider]?[task.deliveryVehicleID],
      let index = vehicle.journey.firstIndex(where: { $0.stop.tasks.contains { $0.taskID == task.id } })
    else { return nil }
    let shown = deliveryVehicleShown(vehicle, in: s)
    var segments = Array(shown.journey[...index])
    // Fleet Engine: the driver app's route to the next stop, and what it says is left of it,
    // stand for the first segment's drive when it sends them.
    if !vehicle.currentRouteSegment.isEmpty,
      let path = Polyline.decode(String(decoding: vehicle.currentRouteSegment, as: UTF8.self)), !path.isEmpty
    {
      segments[0].path = path
      if let metres = vehicle.remainingDistanceMeters { segments[0].drivingDistanceMeters = metres }
      if let seconds = vehicle.remainingDuration { segments[0].drivingDuration = seconds }
    }
    for i in segments.indices {
      for j in segments[i].stop.tasks.indices {
        let id = segments[i].stop.tasks[j].taskID
        segments[i].stop.tasks[j].isBreak = s.tasks[task.provider]?[id]?.type == .unavailable
      }
    }
    return TaskJourney(segments: segments, vehicleLocation: vehicle.lastLocation)
  }
}
