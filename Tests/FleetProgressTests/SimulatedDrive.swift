import FleetCore
import FleetProgress
import FleetRouting
import FleetStore
import Foundation
import Synchronization

/// The shared Monaco road network (built once from the real extract).
let monacoRouting: RoutingEngine = {
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
  return try! RoutingEngine(osm: root.appendingPathComponent("shared/data/monaco.osm.pbf").path)
}()

/// Real places in Monaco.
enum Place {
  static let palace = LatLng(latitude: 43.7300, longitude: 7.4200)
  static let port = LatLng(latitude: 43.7350, longitude: 7.4230)
  static let casino = LatLng(latitude: 43.7395, longitude: 7.4280)
  static let larvotto = LatLng(latitude: 43.7400, longitude: 7.4300)
}

/// A clock the simulation moves.
final class SimulatedClock: Sendable {
  let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
  func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
  var current: Date { now.withLock { $0 } }
  var read: @Sendable () -> Date { { self.now.withLock { $0 } } }
}

/// A fleet on real SQLite storage in a fresh directory, computing progress on Monaco's roads.
func makeFleet(clock: SimulatedClock, configuration: ProgressEngine.Configuration = .init()) async throws -> Fleet {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fleetkit-progress-\(UUID().uuidString)")
  let storage = try SQLiteFleetStore(directory: directory.path)
  return try await Fleet(
    storage: storage, progress: ProgressEngine(routing: monacoRouting, configuration: configuration), clock: clock.read)
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

/// A car driving a route's shape, each road at the given share of its free-flow speed: where it
/// is after any number of seconds.
struct SimulatedDrive {
  /// Along the shape: metres and seconds from the start at each point.
  var points: [LatLng] = []
  var metres: [Double] = []
  var seconds: [Double] = []

  init(route: Route, speedShare: (RouteSpan) -> Double = { _ in 1 }) {
    for leg in route.legs {
      for span in leg.spans {
        let share = speedShare(span)
        let spanPoints = Array(leg.geometry[span.firstPoint...span.lastPoint])
        let length = zip(spanPoints, spanPoints.dropFirst()).reduce(0) { $0 + $1.0.distance(to: $1.1) }
        for (k, point) in spanPoints.enumerated() {
          if k == 0, points.last == point { continue }
          if k == 0, points.isEmpty {
            points.append(point)
            metres.append(0)
            seconds.append(0)
            continue
          }
          let step = point.distance(to: points.last!)
          let time = length > 0 ? span.duration / share * step / length : 0
          points.append(point)
          metres.append(metres.last! + step)
          seconds.append(seconds.last! + time)
        }
      }
    }
  }

  var duration: Double { seconds.last ?? 0 }
  var distance: Double { metres.last ?? 0 }

  /// Where the car is `t` seconds after it set off.
  func position(after t: Double) -> LatLng {
    guard let k = seconds.lastIndex(where: { $0 <= t }), k + 1 < points.count else { return points.last! }
    let span = seconds[k + 1] - seconds[k]
    let f = span > 0 ? (t - seconds[k]) / span : 0
    let a = points[k]
    let b = points[k + 1]
    return LatLng(latitude: a.latitude + f * (b.latitude - a.latitude), longitude: a.longitude + f * (b.longitude - a.longitude))
  }

  /// How far along the car is after `t` seconds.
  func distance(after t: Double) -> Double {
    guard let k = seconds.lastIndex(where: { $0 <= t }), k + 1 < points.count else { return distance }
    let span = seconds[k + 1] - seconds[k]
    let f = span > 0 ? (t - seconds[k]) / span : 0
    return metres[k] + f * (metres[k + 1] - metres[k])
  }
}
