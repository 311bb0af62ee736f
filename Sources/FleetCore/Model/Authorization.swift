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

  public var bucket: QuotaBucket {
    switch self {
    case .createTrip, .createVehicle, .createRide: .create
    case .getTrip, .getVehicle, .watchTrip, .getRide: .read
    case .updateTrip, .updateVehicle, .updateVehicleAttributes, .deleteTrip, .deleteVehicle, .cancelRide,
      .reportLocations:
      .update
    case .searchTrips, .searchVehicles, .quoteRide: .search
    case .listVehicles, .listRides, .listAreas: .list
    case .reportBillableTrip: .billing
    }
  }

  /// Which roles may call the RPC at all; resource checks follow in `Caller`.
  public func isAllowed(for role: Role) -> Bool {
    switch role {
    case .admin, .server: true
    case .viewer:
      [.getTrip, .watchTrip, .searchTrips, .getVehicle, .listVehicles, .searchVehicles, .listAreas].contains(self)
    case .driver:
      [
        .getTrip, .watchTrip, .updateTrip, .searchTrips, .getVehicle, .updateVehicle, .updateVehicleAttributes,
        .reportLocations,
      ].contains(self)
    // Fleet Engine's Consumer SDK User role may search vehicles (a rider app's nearby cars);
    // FleetKit's rider also reads the ride of its trip (its fare) and the areas served.
    case .consumer: [.getTrip, .watchTrip, .searchVehicles, .getRide, .listAreas].contains(self)
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
  /// The token's subject, for logs.
  public var subject: String

  public init(provider: String, role: Role, tripID: String? = nil, vehicleID: String? = nil, subject: String = "") {
    self.provider = provider
    self.role = role
    self.tripID = tripID
    self.vehicleID = vehicleID
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

  /// A driver may only touch the vehicle in its token.
  public func checkVehicleAccess(vehicleID: String) throws(FleetError) {
    guard role == .driver else { return }
    guard claimMatches(self.vehicleID, vehicleID) else {
      throw .denied("the driver token is for vehicle '\(self.vehicleID ?? "")', not '\(vehicleID)'")
    }
  }
}
