import FleetGeometry
import Foundation

// Fleet Engine's Deliveries API (maps.fleetengine.delivery.v1): delivery vehicles that make
// stops, and the tasks (pickups, deliveries, scheduled stops, breaks) done at them.

/// What a delivery vehicle is; the raw values are the wire's (not `VehicleCategory`'s).
public enum DeliveryVehicleType: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  case auto = 1
  case twoWheeler = 2
  case bicycle = 3
  case pedestrian = 4
}

/// A delivery vehicle as fleetd stores it.
public struct DeliveryVehicle: Sendable, Hashable {
  public var provider: String
  public var id: String
  public var lastLocation: VehicleLocation?
  public var navigationStatus: NavigationStatus = .unknown
  /// The driver app's route to the next stop: an encoded polyline's bytes.
  public var currentRouteSegment: [UInt8] = []
  public var currentRouteSegmentEndPoint: LatLng?
  public var remainingDistanceMeters: Int32?
  /// Seconds of driving left on `currentRouteSegment`.
  public var remainingDuration: Double?
  /// The stops still to make, in order.
  public var journey: [JourneySegment] = []
  public var attributes: [Attribute] = []
  public var type: DeliveryVehicleType = .auto
  public var createTime: Date = .distantPast
  public var updateTime: Date = .distantPast
  /// Store revision; increases with every change (see `FleetStore`).
  public var revision: UInt64 = 0

  public init(provider: String, id: String) {
    self.provider = provider
    self.id = id
  }

  public var name: ResourceName { ResourceName(provider: provider, kind: .deliveryVehicles, id: id) }

  /// Every task ID on the vehicle's remaining stops, in stop order.
  public var taskIDs: [String] { journey.flatMap { $0.stop.tasks.map(\.taskID) } }
}

/// The drive to one stop, and the stop.
public struct JourneySegment: Sendable, Hashable {
  public var stop: VehicleStop
  /// The drive from the previous stop (the vehicle, for the first), as estimated when the list
  /// was last set; nil when no estimate could be made.
  public var drivingDistanceMeters: Int32?
  public var drivingDuration: Double?
  public var path: [LatLng] = []

  public init(stop: VehicleStop) { self.stop = stop }
}

/// One stop: where, which tasks, how far the driver got with it.
public struct VehicleStop: Sendable, Hashable {
  public enum State: Int, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = 0
    case new = 1
    case enroute = 2
    case arrived = 3
  }

  public struct TaskInfo: Sendable, Hashable {
    public var taskID: String
    /// Answered, never stored: the task's own duration (seconds) and time window.
    public var duration: Double?
    public var targetTimeWindow: TimeWindow?
    /// Answered, never stored: an UNAVAILABLE task (the driver's break).
    public var isBreak = false

    public init(taskID: String) { self.taskID = taskID }
  }

  public var plannedLocation: LatLng
  public var tasks: [TaskInfo]
  public var state: State

  public init(plannedLocation: LatLng, tasks: [TaskInfo], state: State) {
    self.plannedLocation = plannedLocation
    self.tasks = tasks
    self.state = state
  }
}

public enum TaskType: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  case pickup = 1
  case delivery = 2
  case scheduledStop = 3
  case unavailable = 4

  public var wireName: String {
    switch self {
    case .unspecified: "TYPE_UNSPECIFIED"
    case .pickup: "PICKUP"
    case .delivery: "DELIVERY"
    case .scheduledStop: "SCHEDULED_STOP"
    case .unavailable: "UNAVAILABLE"
    }
  }
}

public enum TaskState: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  case open = 1
  case closed = 2

  public var wireName: String {
    switch self {
    case .unspecified: "STATE_UNSPECIFIED"
    case .open: "OPEN"
    case .closed: "CLOSED"
    }
  }
}

public enum TaskOutcome: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  case succeeded = 1
  case failed = 2

  public var wireName: String {
    switch self {
    case .unspecified: "TASK_OUTCOME_UNSPECIFIED"
    case .succeeded: "SUCCEEDED"
    case .failed: "FAILED"
    }
  }
}

/// Where a task's outcome location came from (the wire has no value 1).
public enum TaskOutcomeLocationSource: Int, Sendable, Hashable, Codable, CaseIterable {
  case unspecified = 0
  case provider = 2
  case lastVehicleLocation = 3
}

/// When a task is meant to be done.
public struct TimeWindow: Sendable, Hashable {
  public var start: Date
  public var end: Date

  public init(start: Date, end: Date) {
    self.start = start
    self.end = end
  }
}

/// When one element of a task's tracking is shown to its consumer.
public enum Visibility: Sendable, Hashable {
  /// While the task's stop is at most this many stops away.
  case remainingStopCountAtMost(Int32)
  /// While the estimated arrival is at most this many seconds away.
  case durationUntilArrivalAtMost(Double)
  /// While the remaining drive is at most this many metres.
  case remainingDrivingDistanceAtMost(Int32)
  case always
  case never
}

/// Per element of task tracking, when it is shown; nil: the default (shown).
public struct TaskTrackingViewConfig: Sendable, Hashable {
  public var routePolylinePoints: Visibility?
  public var estimatedArrivalTime: Visibility?
  public var estimatedTaskCompletionTime: Visibility?
  public var remainingDrivingDistance: Visibility?
  public var remainingStopCount: Visibility?
  public var vehicleLocation: Visibility?

  public init() {}
}

/// A task as fleetd stores it (`Task` in Fleet Engine; named apart from Swift's `Task`).
public struct DeliveryTask: Sendable, Hashable {
  public var provider: String
  public var id: String
  public var type: TaskType = .unspecified
  public var state: TaskState = .unspecified
  public var outcome: TaskOutcome = .unspecified
  public var outcomeTime: Date?
  public var outcomeLocation: LatLng?
  public var outcomeLocationSource: TaskOutcomeLocationSource = .unspecified
  public var trackingID: String = ""
  /// The vehicle it is assigned to; empty while unassigned.
  public var deliveryVehicleID: String = ""
  public var plannedLocation: LatLng?
  /// Seconds the task takes at its stop.
  public var duration: Double = 0
  public var targetTimeWindow: TimeWindow?
  public var trackingViewConfig: TaskTrackingViewConfig?
  public var attributes: [Attribute] = []
  public var createTime: Date = .distantPast
  public var updateTime: Date = .distantPast
  /// Store revision; increases with every change (see `FleetStore`).
  public var revision: UInt64 = 0

  public init(provider: String, id: String) {
    self.provider = provider
    self.id = id
  }

  public var name: ResourceName { ResourceName(provider: provider, kind: .tasks, id: id) }
}

/// Where a task's vehicle is on its way to the task's stop: what journey sharing shows.
public struct TaskJourney: Sendable, Hashable {
  /// The vehicle's remaining segments up to and including the task's stop.
  public var segments: [JourneySegment]
  public var vehicleLocation: VehicleLocation?

  public init(segments: [JourneySegment], vehicleLocation: VehicleLocation?) {
    self.segments = segments
    self.vehicleLocation = vehicleLocation
  }
}

/// A task with what journey sharing adds to it when read.
public struct TaskView: Sendable, Hashable {
  public var task: DeliveryTask
  /// While the task is open and on a vehicle's remaining stops.
  public var journey: TaskJourney?

  public init(task: DeliveryTask, journey: TaskJourney?) {
    self.task = task
    self.journey = journey
  }
}

/// What a consumer may see of a shipment (GetTaskTrackingInfo): each element nil when hidden
/// by the task's view config or unknown.
public struct TaskTrackingInfo: Sendable, Hashable {
  public var provider: String
  public var trackingID: String
  public var vehicleLocation: VehicleLocation?
  public var routePolylinePoints: [LatLng]?
  public var remainingStopCount: Int32?
  public var remainingDrivingDistanceMeters: Int32?
  public var estimatedArrivalTime: Date?
  public var estimatedTaskCompletionTime: Date?
  public var state: TaskState
  public var outcome: TaskOutcome
  public var outcomeTime: Date?
  public var plannedLocation: LatLng?
  public var targetTimeWindow: TimeWindow?
  public var attributes: [Attribute]

  public init(task: DeliveryTask) {
    provider = task.provider
    trackingID = task.trackingID
    state = task.state
    outcome = task.outcome
    outcomeTime = task.outcomeTime
    plannedLocation = task.plannedLocation
    targetTimeWindow = task.targetTimeWindow
    attributes = task.attributes
  }
}
