import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// Vehicles on trips over real Monaco roads, for the progress benchmarks: vehicle i starts at the
/// origin of route query i, picks its rider up at that query's destination and drops them at
/// the next query's origin. Each vehicle's road to its pickup (the trip's `route`, computed by
/// fleetd) is what it then drives along.
struct MonacoTrips {
  /// Per vehicle: the route to its pickup, as fleetd computed it.
  var routes: [[(latitude: Double, longitude: Double)]] = []

  /// Origin and destination of each `/route/v1/driving/lon,lat;lon,lat` line.
  static func queries(_ path: String) throws -> [((Double, Double), (Double, Double))] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
      guard let coordinates = line.split(separator: "/").last?.split(separator: "?").first else { return nil }
      let points = coordinates.split(separator: ";").compactMap { pair -> (Double, Double)? in
        let parts = pair.split(separator: ",").compactMap { Double($0) }
        return parts.count == 2 ? (parts[1], parts[0]) : nil
      }
      return points.count == 2 ? (points[0], points[1]) : nil
    }
  }

  static func setUp(
    count: Int, requests: String, provider: String, prefix: String, clients: [GRPCClient<HTTP2ClientTransport.Posix>],
    metadata: Metadata
  ) async throws -> MonacoTrips {
    let queries = try queries(requests)
    var trips = MonacoTrips()
    for i in 0..<count {
      let client = clients[i % clients.count]
      let vehicles = Maps_Fleetengine_V1_VehicleService.Client(wrapping: client)
      let tripService = Maps_Fleetengine_V1_TripService.Client(wrapping: client)
      let (origin, destination) = queries[i % queries.count]
      let (next, _) = queries[(i + 1) % queries.count]
      var create = Maps_Fleetengine_V1_CreateVehicleRequest()
      create.parent = "providers/\(provider)"
      create.vehicleID = "\(prefix)-\(i)"
      create.vehicle.vehicleState = .online
      create.vehicle.supportedTripTypes = [.exclusive]
      create.vehicle.maximumCapacity = 4
      create.vehicle.vehicleType.category = .auto
      create.vehicle.lastLocation.location = .with {
        $0.latitude = origin.0
        $0.longitude = origin.1
      }
      // A data directory kept from an earlier run has them already.
      do {
        _ = try await vehicles.createVehicle(create, metadata: metadata)
      } catch let error as RPCError where error.code == .alreadyExists {}
      var trip = Maps_Fleetengine_V1_CreateTripRequest()
      trip.parent = "providers/\(provider)"
      trip.tripID = "\(prefix)-trip-\(i)"
      trip.trip.tripType = .exclusive
      trip.trip.vehicleID = "\(prefix)-\(i)"
      trip.trip.pickupPoint.point = .with {
        $0.latitude = destination.0
        $0.longitude = destination.1
      }
      trip.trip.dropoffPoint.point = .with {
        $0.latitude = next.0
        $0.longitude = next.1
      }
      let created: Maps_Fleetengine_V1_Trip
      do {
        created = try await tripService.createTrip(trip, metadata: metadata)
      } catch let error as RPCError where error.code == .alreadyExists {
        created = try await tripService.getTrip(
          .with { $0.name = "providers/\(provider)/trips/\(trip.tripID)" }, metadata: metadata)
      }
      let route = created.route.map { ($0.latitude, $0.longitude) }
      trips.routes.append(route.isEmpty ? [origin] : route)
    }
    return trips
  }

  /// Where vehicle `i` is after `step` moves of `stride` metres along its route (it stops at the
  /// end: arrived at the pickup).
  func position(vehicle i: Int, step: Int, stride: Double = 10) -> (latitude: Double, longitude: Double) {
    let route = routes[i]
    var left = Double(step) * stride
    for (a, b) in zip(route, route.dropFirst()) {
      let dLat = (b.latitude - a.latitude) * 111_195
      let dLng = (b.longitude - a.longitude) * 111_195 * cos(a.latitude * .pi / 180)
      let length = (dLat * dLat + dLng * dLng).squareRoot()
      if left <= length, length > 0 {
        let f = left / length
        return (a.latitude + f * (b.latitude - a.latitude), a.longitude + f * (b.longitude - a.longitude))
      }
      left -= length
    }
    return route.last!
  }
}
