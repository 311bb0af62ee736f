import FleetCore
import Testing

@Suite("Authorization matrix")
struct AuthorizationTests {
  // WatchTrip (FleetKit's push stream) is allowed wherever GetTrip is.
  // The fleet page, on a viewer token, also draws the service areas and zones.
  static let reads: Set<FleetOperation> = [
    .getTrip, .watchTrip, .searchTrips, .getVehicle, .listVehicles, .searchVehicles, .listAreas,
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
      case .viewer: Self.reads.contains(operation)
      case .driver: Self.driverOps.contains(operation)
      // Fleet Engine's Consumer SDK User role also searches vehicles (nearby cars); FleetKit's
      // rider reads its own ride (the fare) and the areas served.
      case .consumer: [.getTrip, .watchTrip, .searchVehicles, .getRide, .listAreas].contains(operation)
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

  @Test func providersAreSeparate() {
    let error = #expect(throws: FleetError.self) { try Caller.admin(of: "a").checkProvider("b") }
    #expect(error?.code == .permissionDenied)
  }
}
