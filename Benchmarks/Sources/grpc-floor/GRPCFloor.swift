import ArgumentParser
import FleetGRPCTransport
import FleetProto
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import NIOPosix
import SwiftProtobuf

/// The floor of the gRPC stack fleetd is built on: grpc-swift 2 over an HTTP/2 transport (its
/// own, or FleetGRPCTransport's `FrameServerTransport`), Swift's concurrency on the event loops as in
/// fleetd, and no authentication, no domain and no store. `serve` answers VehicleService's GetVehicle,
/// UpdateVehicle and SearchVehicles, the report stream and WatchTrip; `fleet-load` against it
/// shows what the stack alone costs per call, and `metro` drives it with a metro's message mix
/// (docs/benchmarks.md), so fleetd's own figures can be read against it.
@main
enum Main {
  static func main() async {
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    await GRPCFloor.main()
  }
}

struct GRPCFloor: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-floor", abstract: "grpc-swift 2 doing nothing: the stack's own ceiling.",
    subcommands: [Serve.self, ServeRaw.self, MetroLoad.self], defaultSubcommand: Serve.self)
}

struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve", abstract: "A do-nothing VehicleService, report stream and WatchTrip.")

  @Option(help: "gRPC port to listen on (loopback).")
  var grpcPort = 50171

  @Option(
    help: "The server transport: `nio` (grpc-swift's own HTTP/2 transport) or `frames` (FleetGRPCTransport's FrameServerTransport)."
  )
  var transport = "nio"

  func run() async throws {
    let watchers = FloorWatchers()
    let services: [any RegistrableRPCService] = [
      FloorVehicleService(), FloorVehicleUpdates(watchers: watchers), FloorTripUpdates(watchers: watchers),
    ]
    if transport == "frames" {
      try await GRPCServer(transport: FrameServerTransport(host: "127.0.0.1", port: grpcPort), services: services)
        .serve()
    } else {
      let transport = HTTP2ServerTransport.Posix(
        address: .ipv4(host: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext,
        config: .defaults { $0.rpc.maxRequestPayloadSize = 4 * 1024 * 1024 })
      try await GRPCServer(transport: transport, services: services).serve()
    }
  }
}

/// Answers like fleetd does (the stored vehicle, or the request's vehicle back), without doing anything.
struct FloorVehicleService: Maps_Fleetengine_V1_VehicleService.SimpleServiceProtocol {
  static let vehicle: Maps_Fleetengine_V1_Vehicle = {
    var vehicle = Maps_Fleetengine_V1_Vehicle()
    vehicle.vehicleState = .online
    vehicle.supportedTripTypes = [.exclusive]
    vehicle.maximumCapacity = 4
    vehicle.vehicleType.category = .auto
    vehicle.lastLocation.location = .with {
      $0.latitude = 43.7384
      $0.longitude = 7.4246
    }
    vehicle.lastLocation.updateTime = Google_Protobuf_Timestamp(date: .init())
    vehicle.lastLocation.serverTime = vehicle.lastLocation.updateTime
    return vehicle
  }()

  func getVehicle(request: Maps_Fleetengine_V1_GetVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  {
    var vehicle = Self.vehicle
    vehicle.name = request.name
    return vehicle
  }

  func updateVehicle(request: Maps_Fleetengine_V1_UpdateVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  {
    var vehicle = Self.vehicle
    vehicle.name = request.name
    vehicle.lastLocation = request.vehicle.lastLocation
    return vehicle
  }

  func createVehicle(request: Maps_Fleetengine_V1_CreateVehicleRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_Vehicle
  {
    var vehicle = request.vehicle
    vehicle.name = "\(request.parent)/vehicles/\(request.vehicleID)"
    return vehicle
  }

  func deleteVehicle(request: Maps_Fleetengine_V1_DeleteVehicleRequest, context: ServerContext) async throws
    -> Google_Protobuf_Empty
  {
    throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle, UpdateVehicle and SearchVehicles only")
  }

  func updateVehicleAttributes(
    request: Maps_Fleetengine_V1_UpdateVehicleAttributesRequest, context: ServerContext
  ) async throws -> Maps_Fleetengine_V1_UpdateVehicleAttributesResponse {
    throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle, UpdateVehicle and SearchVehicles only")
  }

  func listVehicles(request: Maps_Fleetengine_V1_ListVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_ListVehiclesResponse
  {
    throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle, UpdateVehicle and SearchVehicles only")
  }

  /// Ten matches, as fleetd answers the metro's searches (count 10), each a vehicle on its way
  /// to a pickup with its route.
  func searchVehicles(request: Maps_Fleetengine_V1_SearchVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_SearchVehiclesResponse
  {
    Self.matches(request)
  }

  static func matches(_ request: Maps_Fleetengine_V1_SearchVehiclesRequest)
    -> Maps_Fleetengine_V1_SearchVehiclesResponse
  {
    var response = Maps_Fleetengine_V1_SearchVehiclesResponse()
    response.matches = (0..<10).map { i in
      var match = Maps_Fleetengine_V1_VehicleMatch()
      match.vehicle = FloorMessages.acknowledgedVehicle
      match.vehicle.name = "\(request.parent)/vehicles/v-\(i)"
      match.vehicle.currentRouteSegment = FloorMessages.route
      match.vehiclePickupEta = FloorMessages.eta
      match.vehiclePickupDistanceMeters = .init(1200)
      match.vehicleTripsWaypoints = FloorMessages.waypoints
      match.vehicleMatchType = .exclusive
      match.requestedOrderedBy = request.orderBy
      match.orderedBy = request.orderBy
      return match
    }
    return response
  }
}
