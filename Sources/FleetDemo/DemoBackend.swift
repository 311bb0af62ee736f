import FleetClient
import FleetCore
import FleetGeometry
import FleetProto
import FleetRouting
import FleetSimulator
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf

/// The demo's provider backend: its calls to fleetd over one gRPC client (its connection kept,
/// as a backend's is) with the server key's tokens, each reused until near its expiry.
struct DemoBackend: Sendable {
  let client: GRPCClient<HTTP2ClientTransport.Posix>
  let provider: String
  let keys: DemoKeys
  let tokens: ServiceAccountTokenProvider

  static let vehiclePrefix = "car"
  static func vehicleID(_ index: Int) -> String { "\(vehiclePrefix)-\(index)" }

  func metadata() throws -> Metadata { ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"] }

  /// Vehicles car-1 … car-N where they do not exist yet, on roads spread over the city; every
  /// fourth is an XL car (six seats, attribute class=xl), the others class=standard; every
  /// fifth is a taxi.
  func createVehicles(count: Int, places: CityPlaces) async throws {
    let vehicles = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
    for index in 1...count {
      var request = Maps_Fleetengine_V1_CreateVehicleRequest()
      request.parent = "providers/\(provider)"
      request.vehicleID = Self.vehicleID(index)
      let xl = index % 4 == 0
      request.vehicle.vehicleState = .offline
      request.vehicle.supportedTripTypes = [.exclusive, .shared]
      request.vehicle.maximumCapacity = xl ? 6 : 4
      // Every fifth a taxi, for the sample tariff's metered taxi product.
      request.vehicle.vehicleType.category = index % 5 == 0 ? .taxi : .auto
      var attribute = Maps_Fleetengine_V1_VehicleAttribute()
      attribute.key = "class"
      attribute.value = xl ? "xl" : "standard"
      request.vehicle.attributes = [attribute]
      let start = places.start(for: index)
      request.vehicle.lastLocation.location.latitude = start.latitude
      request.vehicle.lastLocation.location.longitude = start.longitude
      do {
        _ = try await vehicles.createVehicle(request, metadata: try metadata())
      } catch let error as RPCError where error.code == .alreadyExists {
        // From an earlier run in the same data directory: its drivers carry on.
      }
    }
  }

  /// The quotes for a trip (one per product that can carry the party); none when fleetd has
  /// no tariffs.
  func quotes(from pickup: LatLng, to dropoff: LatLng, passengers: Int32, at pickupTime: Date?) async throws
    -> [Fleetkit_V1_Quote]
  {
    var request = Fleetkit_V1_QuoteRideRequest()
    request.parent = "providers/\(provider)"
    request.pickupPoint.point.latitude = pickup.latitude
    request.pickupPoint.point.longitude = pickup.longitude
    request.dropoffPoint.point.latitude = dropoff.latitude
    request.dropoffPoint.point.longitude = dropoff.longitude
    request.numberOfPassengers = passengers
    if let pickupTime { request.pickupTime = Google_Protobuf_Timestamp(date: pickupTime) }
    return try await Fleetkit_V1_Rides.Client(wrapping: client).quoteRide(request, metadata: try metadata()).quotes
  }

  /// Books a ride: at a quote's price when there is one (its points, party and time must be the
  /// quote's), else priced at booking.
  func bookRide(
    from pickup: LatLng, to dropoff: LatLng, passengers: Int32, at pickupTime: Date? = nil,
    quote: Fleetkit_V1_Quote? = nil
  ) async throws -> Fleetkit_V1_Ride {
    var request = Fleetkit_V1_CreateRideRequest()
    request.parent = "providers/\(provider)"
    request.rideID = "ride-\(UUID().uuidString.prefix(8).lowercased())"
    request.ride.pickupPoint.point.latitude = pickup.latitude
    request.ride.pickupPoint.point.longitude = pickup.longitude
    request.ride.dropoffPoint.point.latitude = dropoff.latitude
    request.ride.dropoffPoint.point.longitude = dropoff.longitude
    request.ride.numberOfPassengers = passengers
    if let pickupTime { request.ride.pickupTime = Google_Protobuf_Timestamp(date: pickupTime) }
    if let quote { request.ride.quoteID = quote.quoteID } else { request.ride.tripType = .exclusive }
    return try await Fleetkit_V1_Rides.Client(wrapping: client).createRide(request, metadata: try metadata())
  }

  func rides() async throws -> [Fleetkit_V1_Ride] {
    let rides = Fleetkit_V1_Rides.Client(wrapping: client)
    var all: [Fleetkit_V1_Ride] = []
    var request = Fleetkit_V1_ListRidesRequest()
    request.parent = "providers/\(provider)"
    request.pageSize = 1000
    repeat {
      let page = try await rides.listRides(request, metadata: try metadata())
      all += page.rides
      request.pageToken = page.nextPageToken
    } while !request.pageToken.isEmpty
    return all
  }

  func onlineVehicles() async throws -> Int {
    let vehicles = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
    var request = Maps_Fleetengine_V1_ListVehiclesRequest()
    request.parent = "providers/\(provider)"
    request.pageSize = 500
    request.vehicleState = .online
    request.vehicleTypeCategories = [.auto, .taxi, .truck, .twoWheeler, .bicycle, .pedestrian]
    var count = 0
    repeat {
      let page = try await vehicles.listVehicles(request, metadata: try metadata())
      count += page.vehicles.count
      request.pageToken = page.nextPageToken
    } while !request.pageToken.isEmpty
    return count
  }
}
