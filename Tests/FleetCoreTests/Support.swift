import FleetCore
import FleetGeometry
import Foundation
import Synchronization

/// A store double for unit tests: keeps what is committed, can be told to fail.
final class MemoryStore: FleetStore {
  let committed = Mutex<[StoredChange]>([])
  let failing = Mutex(false)

  func loadTrips() async throws -> [Trip] { [] }
  func loadVehicles() async throws -> [Vehicle] { [] }
  func loadRides() async throws -> [Ride] { [] }
  func loadDeliveryVehicles() async throws -> [DeliveryVehicle] { [] }
  func loadTasks() async throws -> [DeliveryTask] { [] }
  func highestRevision() async throws -> UInt64 { 0 }
  func purgeTombstones(olderThan age: Duration, limit: Int) async throws -> Int { 0 }
  func commit(_ commit: FleetCommit) async throws {
    if failing.withLock({ $0 }) { throw CocoaError(.fileWriteUnknown) }
    committed.withLock { $0 += commit.changes }
  }
  /// Entity changes committed so far (events for webhooks left out).
  var entityWrites: Int {
    committed.withLock { changes in changes.filter { $0.entity != nil }.count }
  }
  func signingKey(id: String) async throws -> SigningKey? { nil }
  func signingKeys() async throws -> [SigningKey] { [] }
  func saveSigningKey(_ key: SigningKey) async throws {}
}

/// A clock tests move by hand.
final class TestClock: Sendable {
  let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
  func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
  var read: @Sendable () -> Date { { self.now.withLock { $0 } } }
}

let provider = "acme"
let admin = Caller.admin(of: provider)
let monaco = LatLng(latitude: 43.7384, longitude: 7.4246)
let casino = LatLng(latitude: 43.7396, longitude: 7.4275)
let port = LatLng(latitude: 43.7350, longitude: 7.4210)

func makeFleet(clock: TestClock = TestClock()) async throws -> (Fleet, MemoryStore) {
  let store = MemoryStore()
  return (try await Fleet(store: store, clock: clock.read), store)
}

func vehicleInput(_ id: String = "car-1", types: [TripType] = [.exclusive, .shared], capacity: Int32 = 4)
  -> VehicleInput
{
  var v = Vehicle(provider: provider, id: id)
  v.state = .online
  v.supportedTripTypes = types
  v.maximumCapacity = capacity
  v.category = .auto
  return VehicleInput(vehicle: v)
}

func tripInput(
  _ id: String = "trip-1", type: TripType = .exclusive, vehicle: String = "", intermediates: [LatLng] = []
) -> Trip {
  var t = Trip(provider: provider, id: id)
  t.type = type
  t.pickupPoint = TerminalLocation(point: monaco)
  t.dropoffPoint = TerminalLocation(point: casino)
  t.vehicleID = vehicle
  t.intermediateDestinations = intermediates.map(TerminalLocation.init)
  return t
}

/// A location report of vehicle `id` at `point`, taken at `time` by the device's clock; with
/// `state`, the vehicle's state too.
func locationReport(_ point: LatLng, at time: Date, state: VehicleState? = nil, vehicle id: String = "car-1")
  -> LocationReport
{
  var input = vehicleInput(id)
  var location = VehicleLocation(location: point)
  location.updateTime = time
  input.vehicle.lastLocation = location
  if let state { input.vehicle.state = state }
  return LocationReport(
    name: vehicleName(id), vehicle: input, mask: state == nil ? [] : ["last_location", "vehicle_state"])
}

func tripName(_ id: String) -> ResourceName { ResourceName(provider: provider, kind: .trips, id: id) }
func vehicleName(_ id: String) -> ResourceName { ResourceName(provider: provider, kind: .vehicles, id: id) }

func status(_ s: TripStatus, index: Int32 = 0) -> Trip {
  var t = Trip(provider: provider, id: "x")
  t.status = s
  t.intermediateDestinationIndex = index
  return t
}

/// Runs `body` and returns the FleetError it threw, or nil.
func fleetError(_ body: () async throws -> Void) async -> FleetError? {
  do {
    try await body()
    return nil
  } catch let error as FleetError {
    return error
  } catch {
    return FleetError(.internal, "unexpected \(error)")
  }
}
