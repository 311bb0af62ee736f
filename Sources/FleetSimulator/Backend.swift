import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// The provider's backend calls a simulated driver needs: read its vehicle and trips, create
/// the vehicle, move trips through their statuses. Signed with the key's own role: a server key,
/// or the vehicle's own driver key (which may read and update its vehicle and the trips on it,
/// not create the vehicle), so tokens carry the vehicle's ID.
struct Backend: Sendable {
  let vehicles: Maps_Fleetengine_V1_VehicleService.Client<HTTP2ClientTransport.Posix>
  let trips: Maps_Fleetengine_V1_TripService.Client<HTTP2ClientTransport.Posix>
  let tokens: ServiceAccountTokenProvider
  let vehicleID: String
  let vehicleName: String

  func metadata() throws -> Metadata { ["authorization": "Bearer \(try tokens.token(vehicleID: vehicleID))"] }

  /// Every call has a deadline: a call left hanging on a stalled connection would leave the car
  /// online with nobody driving it.
  var options: CallOptions {
    var options = CallOptions.defaults
    options.timeout = .seconds(10)
    return options
  }

  /// The vehicle, or nil when fleetd does not know it.
  func vehicle() async throws -> Maps_Fleetengine_V1_Vehicle? {
    var request = Maps_Fleetengine_V1_GetVehicleRequest()
    request.name = vehicleName
    do {
      return try await vehicles.getVehicle(request, metadata: try metadata(), options: options)
    } catch let error as RPCError where error.code == .notFound {
      return nil
    }
  }

  func createVehicle(_ provider: String, _ id: String, at point: LatLng) async throws {
    var request = Maps_Fleetengine_V1_CreateVehicleRequest()
    request.parent = "providers/\(provider)"
    request.vehicleID = id
    request.vehicle.vehicleState = .offline
    request.vehicle.supportedTripTypes = [.exclusive, .shared]
    request.vehicle.maximumCapacity = 4
    request.vehicle.vehicleType.category = .auto
    request.vehicle.lastLocation.location.latitude = point.latitude
    request.vehicle.lastLocation.location.longitude = point.longitude
    _ = try await vehicles.createVehicle(request, metadata: try metadata(), options: options)
  }

  func trip(_ id: String) async throws -> Maps_Fleetengine_V1_Trip {
    var request = Maps_Fleetengine_V1_GetTripRequest()
    request.name = tripName(id)
    return try await trips.getTrip(request, metadata: try metadata(), options: options)
  }

  func setStatus(_ id: String, _ status: TripStatus, intermediateIndex: Int?) async throws {
    var request = Maps_Fleetengine_V1_UpdateTripRequest()
    request.name = tripName(id)
    request.trip.tripStatus = Maps_Fleetengine_V1_TripStatus(rawValue: status.rawValue) ?? .unknownTripStatus
    request.updateMask.paths = ["trip_status"]
    if let intermediateIndex {
      request.trip.intermediateDestinationIndex = Int32(intermediateIndex)
      request.updateMask.paths.append("intermediate_destination_index")
    }
    _ = try await trips.updateTrip(request, metadata: try metadata(), options: options)
  }

  func tripName(_ id: String) -> String {
    // "providers/{p}/vehicles/{v}" → "providers/{p}/trips/{id}"
    let provider = vehicleName.split(separator: "/")[1]
    return "providers/\(provider)/trips/\(id)"
  }
}
