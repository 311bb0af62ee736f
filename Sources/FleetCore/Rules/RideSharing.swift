/// How a vehicle serves a group of shared rides together with the stops it already has: the
/// request–trip–vehicle method's feasibility step (Alonso-Mora et al., PNAS 2017). Every order
/// of the stops that keeps the vehicle's own stops in their order, puts each new rider's pickup
/// before their drop-off, keeps the riders within the car's capacity and picks no one up before
/// an EXCLUSIVE rider's stops are done is tried (depth first, pruned by the bounds), and the one that ends
/// soonest wins, as long as every rider's bounds hold. Pure: points are indices into a travel
/// table the caller fills.
public enum RideSharing {
  /// Seconds at each pickup (the rider getting in) that the plan counts on.
  public static let pickupDwellSeconds = 30.0
  /// Orders tried at most per plan: a bound on a round's work whatever the stops.
  public static let maximumOrdersTried = 20_000

  /// A stop the vehicle already has.
  public struct Stop: Sendable, Hashable {
    public var point: Int
    /// Passengers boarding (positive) or leaving (negative).
    public var passengers: Int32
    /// +1 where an EXCLUSIVE rider boards, −1 where they leave.
    public var exclusiveRiders: Int
    /// Seconds from now by which the stop must be reached (a pooled rider's latest pickup or
    /// drop-off); nil: none. A stop already late may stay as late, never later.
    public var deadline: Double?

    public init(point: Int, passengers: Int32, exclusiveRiders: Int = 0, deadline: Double? = nil) {
      self.point = point
      self.passengers = passengers
      self.exclusiveRiders = exclusiveRiders
      self.deadline = deadline
    }
  }

  /// A vehicle as the plan starts from it.
  public struct Vehicle: Sendable, Hashable {
    public var origin: Int
    public var capacity: Int32
    /// Passengers aboard now, and EXCLUSIVE riders among them.
    public var onboard: Int32
    public var exclusiveOnboard: Int
    public var stops: [Stop]
    /// Whether a new pickup may come after all of its stops (back_to_back_enabled).
    public var backToBack: Bool

    public init(
      origin: Int, capacity: Int32, onboard: Int32 = 0, exclusiveOnboard: Int = 0, stops: [Stop] = [],
      backToBack: Bool = true
    ) {
      self.origin = origin
      self.capacity = capacity
      self.onboard = onboard
      self.exclusiveOnboard = exclusiveOnboard
      self.stops = stops
      self.backToBack = backToBack
    }
  }

  /// A new rider for the vehicle.
  public struct Rider: Sendable, Hashable {
    public var pickup: Int
    public var dropoff: Int
    public var passengers: Int32
    /// Seconds from now by which they must be picked up; nil: none (a ride alone).
    public var latestPickup: Double?
    /// Seconds aboard at most, from leaving the pickup (the detour bound times the direct drive).
    public var maximumAboard: Double

    public init(pickup: Int, dropoff: Int, passengers: Int32, latestPickup: Double?, maximumAboard: Double) {
      self.pickup = pickup
      self.dropoff = dropoff
      self.passengers = passengers
      self.latestPickup = latestPickup
      self.maximumAboard = maximumAboard
    }
  }

  /// One stop of a plan.
  public enum Visit: Sendable, Hashable {
    /// The vehicle's own stop `i`.
    case existing(Int)
    /// New rider `i`'s pickup or drop-off.
    case pickup(Int)
    case dropoff(Int)
  }

  public struct Plan: Sendable, Hashable {
    public var visits: [Visit]
    /// Seconds from now until the last stop is reached.
    public var seconds: Double
    /// Seconds the vehicle's route grows by against its own stops alone.
    public var addedSeconds: Double
    /// Per new rider: seconds from now to their pickup and to their drop-off.
    public var pickups: [Double]
    public var dropoffs: [Double]
  }

  /// The vehicle's stops as they are, with no one new: when each is reached. Nil when a leg has
  /// no route.
  public static func baseline(_ vehicle: Vehicle, travel: (Int, Int) -> Double?) -> (
    arrivals: [Double], seconds: Double
  )? {
    var t = 0.0
    var at = vehicle.origin
    var arrivals: [Double] = []
    for stop in vehicle.stops {
      guard let leg = travel(at, stop.point) else { return nil }
      t += leg
      arrivals.append(t)
      if stop.passengers > 0 { t += pickupDwellSeconds }
      at = stop.point
    }
    return (arrivals, t)
  }

  /// The plan that ends soonest with every rider's bounds kept, or nil when there is none.
  /// `travel(a, b)`: seconds from point a to point b, nil where there is no route.
  public static func bestPlan(_ vehicle: Vehicle, riders: [Rider], travel: (Int, Int) -> Double?) -> Plan? {
    guard let base = baseline(vehicle, travel: travel) else { return nil }
    return withoutActuallyEscaping(travel) { travel in
      var search = Search(
        vehicle: vehicle, riders: riders, travel: travel, baseline: base.arrivals, baselineSeconds: base.seconds)
      search.run()
      return search.best
    }
  }

  /// The depth-first search over stop orders.
  struct Search {
    let vehicle: Vehicle
    let riders: [Rider]
    let travel: (Int, Int) -> Double?
    let baseline: [Double]
    let baselineSeconds: Double
    /// The vehicle's stops that come before any new pickup (through its EXCLUSIVE trips' last).
    let firstOpenStop: Int
    var best: Plan?
    var tried = 0
    // The partial plan.
    var visits: [Visit] = []
    var pickups: [Double]
    var dropoffs: [Double]
    /// 0 waiting, 1 aboard, 2 dropped off.
    var riderState: [UInt8]

    init(
      vehicle: Vehicle, riders: [Rider], travel: @escaping (Int, Int) -> Double?, baseline: [Double],
      baselineSeconds: Double
    ) {
      self.vehicle = vehicle
      self.riders = riders
      self.travel = travel
      self.baseline = baseline
      self.baselineSeconds = baselineSeconds
      firstOpenStop = FleetCore.firstOpenStop(vehicle.stops.map(\.exclusiveRiders))
      pickups = Array(repeating: 0, count: riders.count)
      dropoffs = Array(repeating: 0, count: riders.count)
      riderState = Array(repeating: 0, count: riders.count)
    }

    mutating func run() {
      visit(at: vehicle.origin, time: 0, load: vehicle.onboard, exclusive: vehicle.exclusiveOnboard, nextStop: 0)
    }

    mutating func visit(at point: Int, time: Double, load: Int32, exclusive: Int, nextStop: Int) {
      if let best, time >= best.seconds { return }
      if nextStop == vehicle.stops.count, riderState.allSatisfy({ $0 == 2 }) {
        best = Plan(
          visits: visits, seconds: time, addedSeconds: time - baselineSeconds, pickups: pickups, dropoffs: dropoffs)
        return
      }
      tried += 1
      guard tried <= maximumOrdersTried else { return }
      if nextStop < vehicle.stops.count {
        let stop = vehicle.stops[nextStop]
        // Its own riders need their seats too, and an EXCLUSIVE one boards no car a new rider is in.
        let boardsInto = stop.passengers <= 0 || load + stop.passengers <= vehicle.capacity
        let exclusiveJoinsNewRider = stop.exclusiveRiders > 0 && riderState.contains(1)
        if boardsInto, !exclusiveJoinsNewRider, let leg = travel(point, stop.point) {
          let arrival = time + leg
          // A stop may not come later than its deadline, or than it would anyway if already late.
          if stop.deadline.map({ arrival <= max($0, baseline[nextStop]) + 1e-6 }) ?? true {
            visits.append(.existing(nextStop))
            visit(
              at: stop.point, time: arrival + (stop.passengers > 0 ? pickupDwellSeconds : 0),
              load: load + stop.passengers, exclusive: exclusive + stop.exclusiveRiders, nextStop: nextStop + 1)
            visits.removeLast()
          }
        }
      }
      for (i, rider) in riders.enumerated() {
        switch riderState[i] {
        case 0:
          // Nobody boards beside or ahead of an EXCLUSIVE rider, and never beyond the seats.
          guard exclusive == 0, nextStop >= firstOpenStop, load + rider.passengers <= vehicle.capacity,
            vehicle.backToBack || vehicle.stops.isEmpty || nextStop < vehicle.stops.count,
            let leg = travel(point, rider.pickup)
          else { continue }
          let arrival = time + leg
          guard rider.latestPickup.map({ arrival <= $0 + 1e-6 }) ?? true else { continue }
          riderState[i] = 1
          pickups[i] = arrival
          visits.append(.pickup(i))
          visit(
            at: rider.pickup, time: arrival + pickupDwellSeconds, load: load + rider.passengers, exclusive: exclusive,
            nextStop: nextStop)
          visits.removeLast()
          riderState[i] = 0
        case 1:
          guard let leg = travel(point, rider.dropoff) else { continue }
          let arrival = time + leg
          // Aboard from leaving the pickup: a ride alone is aboard exactly its direct drive.
          guard arrival - pickups[i] - pickupDwellSeconds <= rider.maximumAboard + 1e-6 else { continue }
          riderState[i] = 2
          dropoffs[i] = arrival
          visits.append(.dropoff(i))
          visit(
            at: rider.dropoff, time: arrival, load: load - rider.passengers, exclusive: exclusive, nextStop: nextStop)
          visits.removeLast()
          riderState[i] = 1
        default:
          continue
        }
      }
    }
  }
}
