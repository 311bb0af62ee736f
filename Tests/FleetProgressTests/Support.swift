import FleetCore
import FleetGeometry
import FleetProgress
import FleetRouting
import FleetStoreSQLite
import FleetTestSupport
import Foundation
import Synchronization

/// The shared Monaco road network (`data/monaco.osm.pbf`), built once per test process on a
/// thread of its own.
func monacoRouting() async throws -> RoutingEngine { try await sharedRoutingEngine(graph: try await monacoGraph()) }

/// Real places in Monaco.
enum Place {
  static let palace = LatLng(latitude: 43.7300, longitude: 7.4200)
  static let port = LatLng(latitude: 43.7350, longitude: 7.4230)
  static let casino = LatLng(latitude: 43.7395, longitude: 7.4280)
  static let larvotto = LatLng(latitude: 43.7400, longitude: 7.4300)
}

/// A fleet on real SQLite store in a fresh directory, computing progress on Monaco's roads.
func makeFleet(clock: TestTime, configuration: ProgressEngine.Configuration = .init()) async throws -> Fleet {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "fleetkit-progress-\(UUID().uuidString)")
  let store = try SQLiteStore(directory: directory.path)
  return try await Fleet(
    store: store, progress: ProgressEngine(routing: try await monacoRouting(), configuration: configuration),
    clock: clock.read)
}

let provider = "acme"
let admin = Caller.admin(of: provider)
func tripName(_ id: String) -> ResourceName { ResourceName(provider: provider, kind: .trips, id: id) }
func vehicleName(_ id: String) -> ResourceName { ResourceName(provider: provider, kind: .vehicles, id: id) }

func createVehicle(_ fleet: Fleet, _ id: String, at point: LatLng) async throws {
  var v = Vehicle(provider: provider, id: id)
  v.state = .online
  v.supportedTripTypes = [.exclusive, .shared]
  v.maximumCapacity = 4
  v.category = .auto
  v.lastLocation = VehicleLocation(location: point)
  _ = try await fleet.createVehicle(caller: admin, provider: provider, vehicleID: id, vehicle: VehicleInput(vehicle: v))
}

@discardableResult
func createTrip(
  _ fleet: Fleet, _ id: String, type: TripType = .exclusive, vehicle: String, pickup: LatLng, dropoff: LatLng
) async throws -> TripSnapshot {
  var t = Trip(provider: provider, id: id)
  t.type = type
  t.vehicleID = vehicle
  t.pickupPoint = TerminalLocation(point: pickup)
  t.dropoffPoint = TerminalLocation(point: dropoff)
  return try await fleet.createTrip(caller: admin, provider: provider, tripID: id, trip: t)
}

func setStatus(_ fleet: Fleet, _ trip: String, _ status: TripStatus) async throws {
  var t = Trip(provider: provider, id: trip)
  t.status = status
  _ = try await fleet.updateTrip(caller: admin, name: tripName(trip), trip: t, mask: ["trip_status"])
}

func report(_ fleet: Fleet, _ vehicle: String, at point: LatLng, time: Date) async throws -> Vehicle {
  var v = Vehicle(provider: provider, id: vehicle)
  var location = VehicleLocation(location: point)
  location.updateTime = time
  v.lastLocation = location
  return try await fleet.updateVehicle(
    caller: admin, name: vehicleName(vehicle), vehicle: VehicleInput(vehicle: v), mask: ["last_location"])
}
