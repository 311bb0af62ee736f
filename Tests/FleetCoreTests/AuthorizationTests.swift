import FleetCore
import Testing

@Suite("Authorization matrix")
struct AuthorizationTests {
  // WatchTrip (FleetKit's push stream) is allowed wherever GetTrip is.
  // The fleet page, on a viewer token, also draws the service areas and zones.
  static let reads: Set<FleetOperation> = [
    .getTrip, .watchTrip, .searchTrips, .getVehicle, .listVehicles, .searchVehicles, .listAreas,
  ]
  // Google's IAM permissions of the delivery roles (roles/fleetengine.delivery*): the fleet
  // reader's are also the Fleet Engine Viewer's delivery reads.
  static let deliveryReads: Set<FleetOperation> = [
    .getDeliveryVehicle, .listDeliveryVehicles, .getTask, .listTasks, .getTaskTrackingInfo, .watchTaskTrackingInfo,
  ]
  static let deliveryAll: Set<FleetOperation> = deliveryReads.union([
    .createDeliveryVehicle, .updateDeliveryVehicle, .deleteDeliveryVehicle, .createTask, .batchCreateTasks,
    .updateTask, .deleteTask, .optimizeStops,
  ])
  static let trustedDriverOps: Set<FleetOperation> = [
    .createDeliveryVehicle, .getDeliveryVehicle, .updateDeliveryVehicle, .createTask, .batchCreateTasks, .updateTask,
    .optimizeStops,
  ]
  // A driver's app reports its vehicle's positions over the stream as with UpdateVehicle.
  static let driverOps: Set<FleetOperation> = [
    .getTrip, .watchTrip, .updateTrip, .searchTrips, .getVehicle, .updateVehicle, .updateVehicleAttributes,
    .reportLocations,
  ]

  @Test(arguments: Role.allCases, FleetOperation.allCases)
  func roleMayCall(role: Role, operation: FleetOperation) {
    let expected: Bool =
      switch role {
      case .admin, .server: true
      case .viewer: Self.reads.union(Self.deliveryReads).contains(operation)
      case .driver: Self.driverOps.contains(operation)
      // Fleet Engine's Consumer SDK User role also searches vehicles (nearby cars); FleetKit's
      // rider reads its own ride (the fare) and the areas served.
      case .consumer: [.getTrip, .watchTrip, .searchVehicles, .getRide, .listAreas].contains(operation)
      case .deliveryAdmin: Self.deliveryAll.contains(operation)
      case .deliveryFleetReader: Self.deliveryReads.contains(operation)
      case .deliveryTrustedDriver: Self.trustedDriverOps.contains(operation)
      case .deliveryUntrustedDriver: [.getDeliveryVehicle, .updateDeliveryVehicle].contains(operation)
      case .deliveryConsumer: operation == .getTaskTrackingInfo || operation == .watchTaskTrackingInfo
      }
    #expect(operation.isAllowed(for: role) == expected)
  }

  @Test func consumerSeesOnlyItsTrip() throws {
    let consumer = Caller(provider: "p", role: .consumer, tripID: "t1")
    try consumer.checkTripAccess(tripID: "t1", assignedVehicle: nil)
    #expect(throws: FleetError.self) { try consumer.checkTripAccess(tripID: "t2", assignedVehicle: nil) }
    try Caller(provider: "p", role: .consumer, tripID: "*").checkTripAccess(tripID: "t2", assignedVehicle: nil)
    #expect(throws: FleetError.self) {
      try Caller(provider: "p", role: .consumer).checkTripAccess(tripID: "t1", assignedVehicle: nil)
    }
  }

  @Test func driverSeesOnlyItsVehicleAndItsTrips() throws {
    let driver = Caller(provider: "p", role: .driver, vehicleID: "v1")
    try driver.checkVehicleAccess(vehicleID: "v1")
    #expect(throws: FleetError.self) { try driver.checkVehicleAccess(vehicleID: "v2") }
    try driver.checkTripAccess(tripID: "t", assignedVehicle: "v1")
    #expect(throws: FleetError.self) { try driver.checkTripAccess(tripID: "t", assignedVehicle: "v2") }
    #expect(throws: FleetError.self) { try driver.checkTripAccess(tripID: "t", assignedVehicle: "") }
  }

  @Test func deliveryClaimsNameTheirResources() throws {
    let untrusted = Caller(provider: "p", role: .deliveryUntrustedDriver, deliveryVehicleID: "van-1")
    try untrusted.checkDeliveryVehicleAccess("van-1")
    #expect(throws: FleetError.self) { try untrusted.checkDeliveryVehicleAccess("van-2") }
    #expect(throws: FleetError.self) {
      try Caller(provider: "p", role: .deliveryTrustedDriver).checkDeliveryVehicleAccess("van-1")
    }
    // Admin principals' claims are not checked.
    try Caller(provider: "p", role: .deliveryAdmin, deliveryVehicleID: "other").checkDeliveryVehicleAccess("van-1")

    let consumer = Caller(provider: "p", role: .deliveryConsumer, trackingID: "ship-1")
    try consumer.checkTrackingAccess("ship-1")
    #expect(throws: FleetError.self) { try consumer.checkTrackingAccess("ship-2") }

    let batch = Caller(provider: "p", role: .deliveryTrustedDriver, taskIDs: ["a", "b"])
    try batch.checkTaskAccess("a", batch: true, assignedVehicle: nil)
    #expect(throws: FleetError.self) { try batch.checkTaskAccess("c", batch: true, assignedVehicle: nil) }
    let driver = Caller(provider: "p", role: .deliveryTrustedDriver, deliveryVehicleID: "van-1")
    try driver.checkTaskAccess("t", assignedVehicle: "van-1")
    #expect(throws: FleetError.self) { try driver.checkTaskAccess("t", assignedVehicle: "van-2") }
  }

  @Test func providersAreSeparate() {
    let error = #expect(throws: FleetError.self) { try Caller.admin(of: "a").checkProvider("b") }
    #expect(error?.code == .permissionDenied)
  }
}
