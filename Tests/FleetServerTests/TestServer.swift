import FleetAuth
import FleetCore
import FleetDispatch
import FleetProto
import FleetRouting
import FleetServer
import FleetStoreSQLite
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Logging

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A real fleetd on loopback (port 0) with a fresh data directory, and clients for it.
struct TestServer {
  let daemon: FleetDaemon
  let grpcPort: Int
  let httpPort: Int
  let dataDirectory: String
  let admin: TokenSigner

  static func run(
    quotas: QuotaConfiguration = QuotaConfiguration(), maximumRequestBytes: Int = 4 * 1024 * 1024,
    graph: String? = nil, routing: RoutingEngine? = nil, fleet: FleetConfiguration = FleetConfiguration(),
    dispatch: DispatchConfiguration? = nil, reportWindow: Int = 1024, _ body: (TestServer) async throws -> Void
  ) async throws {
    let dir = NSTemporaryDirectory() + "fleetkit-server-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var configuration = ServerConfiguration()
    configuration.dataDirectory = dir
    configuration.grpcPort = 0
    configuration.httpPort = 0
    configuration.quotas = quotas
    configuration.maximumRequestBytes = maximumRequestBytes
    configuration.graphPath = graph
    if let graph { configuration.routing = try await sharedRoutingEngine(graph: graph) }
    if let routing { configuration.routing = routing }
    configuration.fleet = fleet
    configuration.dispatch = dispatch
    configuration.reportWindow = reportWindow
    var logger = Logger(label: "fleetd-test")
    logger.logLevel = .warning
    let daemon = try await FleetDaemon.build(configuration: configuration, logger: logger)
    let adminKey = try await KeyRing(store: daemon.store).add(provider: "acme", role: .admin)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await daemon.run(shutdownSignals: []) }
      let server = TestServer(
        daemon: daemon, grpcPort: try await daemon.grpcPort(), httpPort: await daemon.restPort(), dataDirectory: dir,
        admin: try TokenSigner(key: adminKey))
      do {
        try await body(server)
      } catch {
        await daemon.shutdown()
        throw error
      }
      await daemon.shutdown()
      try await group.waitForAll()
    }
  }

  func signer(role: Role, provider: String = "acme") async throws -> TokenSigner {
    try TokenSigner(key: try await KeyRing(store: daemon.store).add(provider: provider, role: role))
  }

  func withClients(
    _ body: (
      Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>,
      Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>
    ) async throws -> Void
  ) async throws {
    try await withGRPCClient(
      transport: .http2NIOPosix(target: .ipv4(address: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext)
    ) { client in
      try await body(.init(wrapping: client), .init(wrapping: client))
    }
  }

  /// One HTTP exchange; returns the status and the parsed JSON body.
  func http(
    _ method: String, _ path: String, token: String?, body: String? = nil, headers: [String: String] = [:]
  ) async throws -> (Int, [String: Any], [AnyHashable: Any]) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(httpPort)\(path)")!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
    if let body { request.httpBody = Data(body.utf8) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return (http.statusCode, json, http.allHeaderFields)
  }
}

func auth(_ token: String) -> Metadata { ["authorization": "Bearer \(token)"] }

func rpcCode(_ body: () async throws -> Void) async -> RPCError.Code? {
  do {
    try await body()
    return nil
  } catch let error as RPCError {
    return error.code
  } catch {
    return .unknown
  }
}

func latLng(_ lat: Double, _ lng: Double) -> Google_Type_LatLng {
  var p = Google_Type_LatLng()
  p.latitude = lat
  p.longitude = lng
  return p
}

func newVehicleRequest(_ id: String) -> Maps_Fleetengine_V1_CreateVehicleRequest {
  var r = Maps_Fleetengine_V1_CreateVehicleRequest()
  r.parent = "providers/acme"
  r.vehicleID = id
  r.vehicle.vehicleState = .online
  r.vehicle.supportedTripTypes = [.exclusive, .shared]
  r.vehicle.maximumCapacity = 4
  r.vehicle.vehicleType.category = .auto
  return r
}

func newLocationUpdate(_ vehicle: String, _ lat: Double = 1, _ lng: Double = 1)
  -> Maps_Fleetengine_V1_UpdateVehicleRequest
{
  var r = Maps_Fleetengine_V1_UpdateVehicleRequest()
  r.name = "providers/acme/vehicles/\(vehicle)"
  r.vehicle.lastLocation.location = latLng(lat, lng)
  r.updateMask.paths = ["last_location"]
  return r
}

func newTripRequest(_ id: String, vehicle: String = "") -> Maps_Fleetengine_V1_CreateTripRequest {
  var r = Maps_Fleetengine_V1_CreateTripRequest()
  r.parent = "providers/acme"
  r.tripID = id
  r.trip.tripType = .exclusive
  r.trip.pickupPoint.point = latLng(43.7384, 7.4246)
  r.trip.dropoffPoint.point = latLng(43.7396, 7.4275)
  r.trip.vehicleID = vehicle
  return r
}
