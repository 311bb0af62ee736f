import ArgumentParser
import FleetProto
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf

/// The floor of the gRPC stack fleetd is built on: grpc-swift 2 over its NIO HTTP/2 transport,
/// configured as fleetd configures it, serving VehicleService's GetVehicle and UpdateVehicle with
/// no authentication, no domain and no store. `fleet-load` against this server shows what the
/// stack alone costs per call on this machine, so fleetd's own figures can be read against it.
@main
struct GRPCFloor: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-floor", abstract: "A do-nothing VehicleService on grpc-swift 2: the stack's own ceiling.")

  @Option(help: "gRPC port to listen on (loopback).")
  var grpcPort = 50171

  func run() async throws {
    let transport = HTTP2ServerTransport.Posix(
      address: .ipv4(host: "127.0.0.1", port: grpcPort), transportSecurity: .plaintext,
      config: .defaults { $0.rpc.maxRequestPayloadSize = 4 * 1024 * 1024 })
    let server = GRPCServer(transport: transport, services: [FloorVehicleService()])
    try await server.serve()
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
  { throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle and UpdateVehicle only") }

  func updateVehicleAttributes(
    request: Maps_Fleetengine_V1_UpdateVehicleAttributesRequest, context: ServerContext
  ) async throws -> Maps_Fleetengine_V1_UpdateVehicleAttributesResponse {
    throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle and UpdateVehicle only")
  }

  func listVehicles(request: Maps_Fleetengine_V1_ListVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_ListVehiclesResponse
  { throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle and UpdateVehicle only") }

  func searchVehicles(request: Maps_Fleetengine_V1_SearchVehiclesRequest, context: ServerContext) async throws
    -> Maps_Fleetengine_V1_SearchVehiclesResponse
  { throw RPCError(code: .unimplemented, message: "grpc-floor serves GetVehicle and UpdateVehicle only") }
}
