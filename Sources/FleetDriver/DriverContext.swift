import FleetClient
import FleetCore
import FleetGeometry
import FleetPositioning
import Foundation

/// Everything the Driver SDK needs to know about the app, as Fleet Engine's
/// `GMTDDriverContext`: who signs the tokens, which provider and vehicle, which server, and
/// optionally where positions and the navigation route come from.
public struct DriverContext: Sendable {
  public var tokenProvider: any AuthorizationTokenProvider
  public var providerID: String
  public var vehicleID: String
  public var endpoint: FleetEndpoint
  /// Positions to report; the app may also hand fixes to `VehicleReporter.report(_:)`.
  public var locationProvider: (any LocationProvider)?
  /// The route being driven, sent with locations while it leads to the vehicle's next waypoint.
  public var navigation: (any NavigationSource)?
  public var reporting: ReportingConfiguration

  public init(
    tokenProvider: any AuthorizationTokenProvider, providerID: String, vehicleID: String, endpoint: FleetEndpoint,
    locationProvider: (any LocationProvider)? = nil, navigation: (any NavigationSource)? = nil,
    reporting: ReportingConfiguration = ReportingConfiguration()
  ) {
    self.tokenProvider = tokenProvider
    self.providerID = providerID
    self.vehicleID = vehicleID
    self.endpoint = endpoint
    self.locationProvider = locationProvider
    self.navigation = navigation
    self.reporting = reporting
  }

  public var vehicleName: String { "providers/\(providerID)/vehicles/\(vehicleID)" }
  /// The vehicle's name in the Deliveries API, when `vehicleID` is a delivery vehicle's.
  public var deliveryVehicleName: String { "providers/\(providerID)/deliveryVehicles/\(vehicleID)" }
}

/// How the reporter behaves on the network; defaults as documented on each field.
public struct ReportingConfiguration: Sendable {
  /// Fixes kept while fleetd cannot be reached (oldest dropped first beyond it).
  public var backlogCapacity = 500
  /// At most this many past locations go in one update; the rest follow in the next ones.
  public var pastLocationsPerUpdate = 100
  /// Where the backlog is kept across app restarts; nil keeps it in memory only.
  public var backlogFile: URL?
  /// The first retry waits about this long, each further one twice as long…
  public var initialRetryDelay: Duration = .seconds(1)
  /// …up to this.
  public var maximumRetryDelay: Duration = .seconds(60)
  /// Deadline of each UpdateVehicle call.
  public var callTimeout: Duration = .seconds(10)

  public init() {}
}

/// Route progress from the app's navigation: the route being driven and what is left of it.
public struct NavigationProgress: Sendable, Hashable {
  /// Where the route ends.
  public var destination: LatLng
  /// The route from the vehicle to the destination.
  public var path: [LatLng]
  public var remainingDistanceMeters: Double
  public var remainingTime: Duration

  public init(destination: LatLng, path: [LatLng], remainingDistanceMeters: Double, remainingTime: Duration) {
    self.destination = destination
    self.path = path
    self.remainingDistanceMeters = remainingDistanceMeters
    self.remainingTime = remainingTime
  }
}

/// The app's navigation, asked for its progress each time a location is sent.
public protocol NavigationSource: Sendable {
  func currentProgress() async -> NavigationProgress?
}
