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
