import FleetCore
import FleetGeometry
import FleetRouting
import Foundation
import Synchronization

/// The one entry point to trip progress: turns each vehicle's reported positions into its road
/// position, its route through its remaining waypoints, ETAs with learned traffic, and its
/// navigation status. `Fleet` calls it through the `TripProgressEngine` port.
///
/// Each vehicle has its own state behind its own lock, so vehicles are computed in parallel;
/// only the traffic model is shared.
public final class ProgressEngine: TripProgressEngine {
  public struct Configuration: Sendable, Hashable {
    /// Farther than this from its route (beyond the fix's own accuracy), a vehicle is off route.
    public var offRouteDistance = 40.0
    /// Within this of a waypoint, a vehicle has arrived there (Fleet Engine: about 50 m).
    public var arrivalDistance = 50.0
    /// Observations closer than this to a waypoint are not learned: stopping there is not traffic.
    public var waypointQuietZone = 80.0
    /// Gaps longer than this between two positions teach nothing about traffic.
    public var longestObservation: TimeInterval = 120
    /// Whether driven speeds are learned and used (off: free-flow ETAs).
    public var learnsTraffic = true
    /// Metres per second no car exceeds: a fix farther from the last trusted one than that speed
    /// reaches is not trusted (`VehicleTrace`; OSRM's map-matching bound, 180 km/h). A simulation
    /// whose clock runs faster than real time drives its cars that many times faster.
    public var maximumSpeed = 50.0

    public init() {}
  }

  public let routing: RoutingEngine
  public let traffic: TrafficModel
  public let configuration: Configuration
  let vehicles = Mutex<[ResourceName: VehicleSlot]>([:])

  public init(
    routing: RoutingEngine, traffic: TrafficModel = TrafficModel(), configuration: Configuration = Configuration()
  ) {
    self.routing = routing
    self.traffic = traffic
    self.configuration = configuration
  }

  final class VehicleSlot: Sendable {
    let state: Mutex<VehicleNavigation>

    init(maximumSpeed: Double) { state = Mutex(VehicleNavigation(trace: VehicleTrace(maximumSpeed: maximumSpeed))) }
  }

  /// What is kept per vehicle between its updates.
  struct VehicleNavigation: Sendable {
    var trace: VehicleTrace
    var plan: PlannedRoute?
    /// The position the plan's offset was last advanced to.
    var lastFix: VehicleTrace.Fix?
    var traffic: [[SpeedInterval]] = []
    var trafficVersion: Date?
    /// The last fix snapped off the plan and where it snapped: a car that has not moved since
    /// is where it was, without snapping again.
    var lastSnap: (raw: LatLng, snapped: LatLng)?
  }

  func slot(_ vehicle: ResourceName) -> VehicleSlot {
    vehicles.withLock { all in
      if let slot = all[vehicle] { return slot }
      let slot = VehicleSlot(maximumSpeed: configuration.maximumSpeed)
      all[vehicle] = slot
      return slot
    }
  }

  public func forget(_ vehicle: ResourceName) {
    _ = vehicles.withLock { $0.removeValue(forKey: vehicle) }
  }

  /// How far from the road a fix may be and still be read as on it.
  func tolerance(_ accuracy: Double?) -> Double {
    min(100, max(configuration.offRouteDistance, 2 * (accuracy ?? 0)))
  }
}
