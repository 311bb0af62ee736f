/// Fleet Engine's JWT roles. Each signing key belongs to one provider and one role.
public enum Role: String, Sendable, Codable, CaseIterable {
  /// Everything within the provider (Fleet Engine's super user).
  case admin
  /// Everything within the provider (a provider's backend).
  case server
  /// Its own vehicle and the trips assigned to it (Driver SDK).
  case driver
  /// Only the trip named in its token, in the journey-sharing view (Consumer SDK).
  case consumer
  /// Reads everything within the provider, writes nothing.
  case viewer
  // The Deliveries API's roles: Google's IAM role names, lower-cased.
  /// Every delivery vehicle and task within the provider (Fleet Engine Delivery Admin).
  case deliveryAdmin = "deliveryadmin"
  /// Reads delivery vehicles, tasks and tracking info, writes nothing.
  case deliveryFleetReader = "deliveryfleetreader"
  /// Its own delivery vehicle (created, located, its stops) and tasks it creates and closes.
  case deliveryTrustedDriver = "deliverytrusteddriver"
  /// Reads its own delivery vehicle and reports its location, nothing else.
  case deliveryUntrustedDriver = "deliveryuntrusteddriver"
  /// Only the tracking info of the tracking ID in its token.
  case deliveryConsumer = "deliveryconsumer"

  /// Roles whose tokens' claims are not checked against the resource (Fleet Engine: admin
  /// principals' custom claims are ignored).
  var isAdministrator: Bool { self == .admin || self == .server || self == .deliveryAdmin }
}

/// Every RPC, with the quota bucket it draws from.
public enum FleetOperation: String, Sendable, CaseIterable {
  case createTrip = "CreateTrip"
  case getTrip = "GetTrip"
  case updateTrip = "UpdateTrip"
  case searchTrips = "SearchTrips"
  case deleteTrip = "DeleteTrip"
  case reportBillableTrip = "ReportBillableTrip"
  case createVehicle = "CreateVehicle"
  case getVehicle = "GetVehicle"
  case updateVehicle = "UpdateVehicle"
  case updateVehicleAttributes = "UpdateVehicleAttributes"
  case listVehicles = "ListVehicles"
  case deleteVehicle = "DeleteVehicle"
  case searchVehicles = "SearchVehicles"
  /// FleetKit's push stream of a trip (fleetkit.v1.TripUpdates).
  case watchTrip = "WatchTrip"
  /// FleetKit's booking API (fleetkit.v1.Rides), for the provider's backend.
  case createRide = "CreateRide"
  case getRide = "GetRide"
  case listRides = "ListRides"
  case cancelRide = "CancelRide"
  /// Prices a ride per product (fleetkit.v1.Rides/QuoteRide).
  case quoteRide = "QuoteRide"
  /// The provider's service areas and zones (fleetkit.v1.Rides/ListAreas).
  case listAreas = "ListAreas"
  /// FleetKit's location reports (fleetkit.v1.VehicleUpdates and its REST batch): an
  /// UpdateVehicle of what a device reports, one quota token per report.
  case reportLocations = "ReportLocations"
  // maps.fleetengine.delivery.v1.DeliveryService.
  case createDeliveryVehicle = "CreateDeliveryVehicle"
  case getDeliveryVehicle = "GetDeliveryVehicle"
  case updateDeliveryVehicle = "UpdateDeliveryVehicle"
  case listDeliveryVehicles = "ListDeliveryVehicles"
  case deleteDeliveryVehicle = "DeleteDeliveryVehicle"
  case createTask = "CreateTask"
  case batchCreateTasks = "BatchCreateTasks"
  case getTask = "GetTask"
  case updateTask = "UpdateTask"
  case listTasks = "ListTasks"
  case deleteTask = "DeleteTask"
  case getTaskTrackingInfo = "GetTaskTrackingInfo"
  /// FleetKit's stop ordering of a delivery vehicle (fleetkit.v1.StopOrdering).
  case optimizeStops = "OptimizeStops"
  /// FleetKit's push stream of a shipment's tracking (fleetkit.v1.TaskTracking).
  case watchTaskTrackingInfo = "WatchTaskTrackingInfo"

  public var bucket: QuotaBucket {
    switch self {
    case .createTrip, .createVehicle, .createRide, .createDeliveryVehicle, .createTask, .batchCreateTasks: .create
    case .getTrip, .getVehicle, .watchTrip, .getRide, .getDeliveryVehicle, .getTask, .getTaskTrackingInfo,
      .watchTaskTrackingInfo:
      .read
    case .updateTrip, .updateVehicle, .updateVehicleAttributes, .deleteTrip, .deleteVehicle, .cancelRide,
      .reportLocations, .updateDeliveryVehicle, .deleteDeliveryVehicle, .updateTask, .deleteTask:
      .update
    case .searchTrips, .searchVehicles, .quoteRide, .optimizeStops: .search
    case .listVehicles, .listRides, .listAreas, .listDeliveryVehicles, .listTasks: .list
    case .reportBillableTrip: .billing
    }
  }

  /// Which roles may call the RPC at all; resource checks follow in `Caller`.
  public func isAllowed(for role: Role) -> Bool {
    // Watching a shipment is allowed wherever reading it is.
    if self == .watchTaskTrackingInfo { return Self.getTaskTrackingInfo.isAllowed(for: role) }
    return switch role {
    case .admin, .server: true
    case .viewer:
      [
        .getTrip, .watchTrip, .searchTrips, .getVehicle, .listVehicles, .searchVehicles, .listAreas,
        .getDeliveryVehicle, .listDeliveryVehicles, .getTask, .listTasks, .getTaskTrackingInfo,
      ].contains(self)
    case .driver:
      [
        .getTrip, .watchTrip, .updateTrip, .searchTrips, .getVehicle, .updateVehicle, .updateVehicleAttributes,
        .reportLocations,
      ].contains(self)
    // Fleet Engine's Consumer SDK User role may search vehicles (a rider app's nearby cars);
    // FleetKit's rider also reads the ride of its trip (its fare) and the areas served.
    case .consumer: [.getTrip, .watchTrip, .searchVehicles, .getRide, .listAreas].contains(self)
    // Google's IAM permissions for each delivery role (fleetengine.deliveryvehicles.*, tasks.*,
    // tasktrackinginfo.*).
    case .deliveryAdmin: isDelivery
    case .deliveryFleetReader:
      [.getDeliveryVehicle, .listDeliveryVehicles, .getTask, .listTasks, .getTaskTrackingInfo].contains(self)
    case .deliveryTrustedDriver:
      [
        .createDeliveryVehicle, .getDeliveryVehicle, .updateDeliveryVehicle, .createTask, .batchCreateTasks,
        .updateTask, .optimizeStops,
      ]
      .contains(self)
    case .deliveryUntrustedDriver: [.getDeliveryVehicle, .updateDeliveryVehicle].contains(self)
    case .deliveryConsumer: self == .getTaskTrackingInfo
    }
  }

  /// The Deliveries API's operations.
  public var isDelivery: Bool {
    switch self {
    case .createDeliveryVehicle, .getDeliveryVehicle, .updateDeliveryVehicle, .listDeliveryVehicles,
      .deleteDeliveryVehicle, .createTask, .batchCreateTasks, .getTask, .updateTask, .listTasks, .deleteTask,
      .getTaskTrackingInfo, .watchTaskTrackingInfo, .optimizeStops:
      true
    default: false
    }
  }
}

/// Who is calling, from a verified token.
public struct Caller: Sendable, Hashable {
  public var provider: String
  public var role: Role
  /// `authorization.tripid`: a trip ID, "*" or nil.
  public var tripID: String?
  /// `authorization.vehicleid`: a vehicle ID, "*" or nil.
  public var vehicleID: String?
  /// The Deliveries API's claims: `authorization.deliveryvehicleid`, `taskid`, `taskids` (for
  /// BatchCreateTasks) and `trackingid`; each an ID, "*" or nil.
  public var deliveryVehicleID: String?
  public var taskID: String?
  public var taskIDs: [String]?
  public var trackingID: String?
  /// The token's subject, for logs.
  public var subject: String

  public init(
    provider: String, role: Role, tripID: String? = nil, vehicleID: String? = nil, deliveryVehicleID: String? = nil,
    taskID: String? = nil, taskIDs: [String]? = nil, trackingID: String? = nil, subject: String = ""
  ) {
    self.provider = provider
    self.role = role
    self.tripID = tripID
    self.vehicleID = vehicleID
    self.deliveryVehicleID = deliveryVehicleID
    self.taskID = taskID
    self.taskIDs = taskIDs
    self.trackingID = trackingID
    self.subject = subject
  }

  /// A caller with every right in one provider (for the CLI and tests of the domain).
  public static func admin(of provider: String) -> Caller { Caller(provider: provider, role: .admin, subject: "admin") }

  public func mayCall(_ operation: FleetOperation) throws(FleetError) {
    guard operation.isAllowed(for: role) else {
      throw .denied("role '\(role.rawValue)' may not call \(operation.rawValue)")
    }
  }

  public func checkProvider(_ provider: String) throws(FleetError) {
    guard provider == self.provider else {
      throw .denied("the token is for provider '\(self.provider)', not '\(provider)'")
    }
  }

  func claimMatches(_ claim: String?, _ id: String) -> Bool { claim == "*" || claim == id }

  /// A consumer may only see the trip in its token; a driver only trips on its vehicle.
  public func checkTripAccess(tripID: String, assignedVehicle: String?) throws(FleetError) {
    switch role {
    case .admin, .server, .viewer: return
    case .deliveryAdmin, .deliveryFleetReader, .deliveryTrustedDriver, .deliveryUntrustedDriver, .deliveryConsumer:
      throw .denied("role '\(role.rawValue)' has no access to trips")
    case .consumer:
      guard claimMatches(self.tripID, tripID) else {
        throw .denied("the consumer token is for trip '\(self.tripID ?? "")', not '\(tripID)'")
      }
    case .driver:
      guard let assignedVehicle, !assignedVehicle.isEmpty, claimMatches(vehicleID, assignedVehicle) else {
        throw .denied("trip '\(tripID)' is not assigned to the driver's vehicle '\(vehicleID ?? "")'")
      }
    }
  }

  /// A delivery driver (trusted or not) may only touch the delivery vehicle in its token.
  public func checkDeliveryVehicleAccess(_ id: String) throws(FleetError) {
    guard role == .deliveryTrustedDriver || role == .deliveryUntrustedDriver else { return }
    guard claimMatches(deliveryVehicleID, id) else {
      throw .denied("the \(role.rawValue) token is for delivery vehicle '\(deliveryVehicleID ?? "")', not '\(id)'")
    }
  }

  /// A consumer may only see the tracking ID in its token.
  public func checkTrackingAccess(_ trackingID: String) throws(FleetError) {
    guard role == .deliveryConsumer else { return }
    guard claimMatches(self.trackingID, trackingID) else {
      throw .denied("the deliveryconsumer token is for tracking ID '\(self.trackingID ?? "")', not '\(trackingID)'")
    }
  }

  /// A trusted driver's token names the task it may create or update (`taskid`), or the tasks
  /// of a batch (`taskids`); without either, its vehicle's tasks.
  public func checkTaskAccess(_ taskID: String, batch: Bool = false, assignedVehicle: String?) throws(FleetError) {
    guard role == .deliveryTrustedDriver else { return }
    if batch, let taskIDs {
      guard taskIDs == ["*"] || taskIDs.contains(taskID) else {
        throw .denied("the deliverytrusteddriver token's taskids do not name task '\(taskID)'")
      }
      return
    }
    if let claim = self.taskID {
      guard claimMatches(claim, taskID) else {
        throw .denied("the deliverytrusteddriver token is for task '\(claim)', not '\(taskID)'")
      }
      return
    }
    if let assignedVehicle, !assignedVehicle.isEmpty, !claimMatches(deliveryVehicleID, assignedVehicle) {
      throw .denied("task '\(taskID)' is assigned to delivery vehicle '\(assignedVehicle)', not the driver's")
    }
  }

  /// A driver may only touch the vehicle in its token.
  public func checkVehicleAccess(vehicleID: String) throws(FleetError) {
    guard role == .driver else { return }
    guard claimMatches(self.vehicleID, vehicleID) else {
      throw .denied("the driver token is for vehicle '\(self.vehicleID ?? "")', not '\(vehicleID)'")
    }
  }
}
