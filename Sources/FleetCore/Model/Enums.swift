// Domain enums. Raw values are Fleet Engine's wire numbers so that conversions at the transport
// boundary are lossless; `unrecognized` keeps unknown numbers visible to validation.

public enum TripType: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case shared = 1
  case exclusive = 2

  /// Fleet Engine's enum value name.
  public var wireName: String {
    switch self {
    case .unknown: "UNKNOWN_TRIP_TYPE"
    case .shared: "SHARED"
    case .exclusive: "EXCLUSIVE"
    }
  }
}

public enum TripStatus: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case new = 1
  case enrouteToPickup = 2
  case arrivedAtPickup = 3
  case enrouteToDropoff = 4
  case complete = 5
  case canceled = 6
  case arrivedAtIntermediateDestination = 7
  case enrouteToIntermediateDestination = 8

  public var isTerminal: Bool { self == .complete || self == .canceled }

  /// Fleet Engine's enum value name, used in messages.
  public var wireName: String {
    switch self {
    case .unknown: "UNKNOWN_TRIP_STATUS"
    case .new: "NEW"
    case .enrouteToPickup: "ENROUTE_TO_PICKUP"
    case .arrivedAtPickup: "ARRIVED_AT_PICKUP"
    case .enrouteToDropoff: "ENROUTE_TO_DROPOFF"
    case .complete: "COMPLETE"
    case .canceled: "CANCELED"
    case .arrivedAtIntermediateDestination: "ARRIVED_AT_INTERMEDIATE_DESTINATION"
    case .enrouteToIntermediateDestination: "ENROUTE_TO_INTERMEDIATE_DESTINATION"
    }
  }
}

public enum WaypointType: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case pickup = 1
  case dropOff = 2
  case intermediateDestination = 3
}

public enum VehicleState: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case offline = 1
  case online = 2
}

public enum VehicleCategory: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case auto = 1
  case taxi = 2
  case truck = 3
  case twoWheeler = 4
  case bicycle = 5
  case pedestrian = 6

  /// Fleet Engine's enum value name (`Vehicle.VehicleType.Category`).
  public var wireName: String {
    switch self {
    case .unknown: "UNKNOWN"
    case .auto: "AUTO"
    case .taxi: "TAXI"
    case .truck: "TRUCK"
    case .twoWheeler: "TWO_WHEELER"
    case .bicycle: "BICYCLE"
    case .pedestrian: "PEDESTRIAN"
    }
  }
}

public enum NavigationStatus: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case noGuidance = 1
  case enrouteToDestination = 2
  case offRoute = 3
  case arrivedAtDestination = 4
}

public enum LocationSensor: Int, Sendable, Codable, CaseIterable {
  case unknown = 0
  case gps = 1
  case network = 2
  case passive = 3
  case roadSnappedLocationProvider = 4
  case customerSuppliedLocation = 5
  /// Output only: Fleet Engine rejects it on input.
  case fleetEngineLocation = 6
  case fusedLocationProvider = 100
  case coreLocation = 200
}

public enum TripView: Int, Sendable, Codable, CaseIterable {
  case unspecified = 0
  case sdk = 1
  case journeySharingV1S = 2
}
