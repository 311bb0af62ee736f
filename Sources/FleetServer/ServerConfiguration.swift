import FleetAuth
import FleetCore
import FleetDispatch
import FleetGeocoding
import FleetProgress
import FleetRouting
import FleetStorePostgres

/// Everything `fleetd serve` can be told, with documented defaults.
public struct ServerConfiguration: Sendable {
  /// Where the SQLite file lives (created if missing).
  public var dataDirectory = "./fleet-data"
  /// A PostgreSQL database to keep the fleet in instead of SQLite under `dataDirectory`.
  public var postgres: PostgresAddress?
  public var host = "127.0.0.1"
  /// 0 picks a free port (tests).
  public var grpcPort = 50051
  /// REST/JSON, /metrics and /healthz. 0 picks a free port (tests).
  public var httpPort = 8080
  public var auth = AuthConfiguration()
  public var quotas = QuotaConfiguration()
  /// Largest accepted request body, gRPC and REST alike.
  public var maximumRequestBytes = 4 * 1024 * 1024
  /// The most location reports a client of fleetkit.v1.VehicleUpdates may have unanswered
  /// (`--report-window`), and the most one REST batch may carry.
  public var reportWindow = 1024
  /// A road graph from `fleetd graph build`: serves OSRM's HTTP API (route, table, nearest).
  public var graphPath: String?
  /// A routing engine already built (tests share one); when nil, it is loaded from `graphPath`.
  public var routing: RoutingEngine?
  /// An OpenStreetMap extract for the geo endpoints: addresses, streets, boundaries, places.
  public var geoOSMPath: String?
  /// GeoNames' cities (`lat,lon,name,admin1,admin2,cc`) for city, region and country worldwide.
  public var geoNamesPath: String?
  /// An engine already built (tests share one); when nil, it is built from the two paths.
  public var geocoding: GeocodingEngine?
  /// An OpenStreetMap extract whose water and green areas the map tiles draw (`--osm`).
  public var mapAreasOSMPath: String?
  /// Origins whose pages may call fleetd from a browser (`--cors-origin`, e.g.
  /// `https://app.example.com`): REST, its event streams, the OSRM API, the pages' library
  /// and tiles answer them with CORS headers. None by default.
  public var corsOrigins: [String] = []
  /// Leaflet (and Leaflet.markercluster) for the web pages: Debian's libjs-leaflet.
  public var leafletDirectory = "/usr/share/javascript/leaflet"
  /// The domain's settings: SearchVehicles' COST weights.
  public var fleet = FleetConfiguration()
  /// When set, fleetd runs the dispatcher and serves the booking API (`fleetd serve --dispatch`).
  public var dispatch: DispatchConfiguration?
  /// How events reach the providers' webhook endpoints (`fleetd webhooks add`).
  public var webhooks = WebhookConfiguration()
  /// How often the traffic learned from the fleet re-customizes routing (`--traffic-interval`);
  /// nil: routes, tables and searches stay at free-flow speeds.
  public var trafficInterval: Duration? = .seconds(60)
  /// How trip progress reads the vehicles' positions (the fastest plausible car, off-route and
  /// arrival distances); Fleet Engine's figures by default.
  public var progress = ProgressEngine.Configuration()

  public init() {}
}

/// How fleetd delivers webhooks, with documented defaults.
public struct WebhookConfiguration: Sendable {
  /// Loopback, private and link-local targets are refused unless this is set
  /// (`--allow-private-webhooks`: development and tests).
  public var allowPrivateTargets = false
  /// When a failed delivery is tried again, and for how long (`--webhook-retry-hours`).
  public var retry = WebhookRetryPolicy()
  /// An endpoint that has not answered within this is a failed attempt.
  public var timeout: Duration = .seconds(10)
  /// Deliveries in flight at once (each the next of its endpoint and subject).
  public var concurrency = 32
  /// How often an idle worker looks for new events.
  public var poll: Duration = .milliseconds(100)
  /// Delivered and failed deliveries are kept this long (`fleetd webhooks list` counts them).
  public var keepFinished: Duration = .seconds(7 * 86_400)

  public init() {}
}
