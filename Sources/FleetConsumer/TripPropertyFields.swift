import FleetCore

/// Which of the trip's properties an update changed (Fleet Engine's `GMTSTripPropertyFields`).
/// The subscriber callbacks are made in the order of these bits, lowest first.
public struct TripPropertyFields: OptionSet, Sendable, Hashable {
  public let rawValue: UInt32
  public init(rawValue: UInt32) { self.rawValue = rawValue }

  public static let status = TripPropertyFields(rawValue: 1 << 0)
  public static let vehicleLocation = TripPropertyFields(rawValue: 1 << 1)
  public static let pickupLocation = TripPropertyFields(rawValue: 1 << 2)
  public static let dropoffLocation = TripPropertyFields(rawValue: 1 << 3)
  public static let intermediateDestinations = TripPropertyFields(rawValue: 1 << 4)
  public static let remainingWaypoints = TripPropertyFields(rawValue: 1 << 5)
  public static let etaToNextWaypoint = TripPropertyFields(rawValue: 1 << 6)
  public static let pickupETA = TripPropertyFields(rawValue: 1 << 7)
  public static let dropoffETA = TripPropertyFields(rawValue: 1 << 8)
  public static let activeRoute = TripPropertyFields(rawValue: 1 << 9)
  public static let activeRouteRemainingDistance = TripPropertyFields(rawValue: 1 << 10)
  public static let activeRouteTraffic = TripPropertyFields(rawValue: 1 << 11)
  public static let remainingRoute = TripPropertyFields(rawValue: 1 << 12)
  public static let remainingRouteDistance = TripPropertyFields(rawValue: 1 << 13)
  public static let remainingRouteTraffic = TripPropertyFields(rawValue: 1 << 14)

  /// Every field, in callback order.
  public static let ordered: [TripPropertyFields] = (0..<15).map { TripPropertyFields(rawValue: 1 << $0) }

  /// The fields whose values differ between two readings of a trip (all that are set, for the
  /// first reading). The vehicle location counts as changed when its place or heading does,
  /// not when only its timestamp moves.
  public static func changes(from old: TripInfo?, to new: TripInfo) -> TripPropertyFields {
    var changed: TripPropertyFields = []
    func check<Value: Equatable>(_ field: TripPropertyFields, _ value: (TripInfo) -> Value, isSet: Bool) {
      if let old { if value(old) != value(new) { changed.insert(field) } } else if isSet { changed.insert(field) }
    }
    check(.status, \.status, isSet: true)
    check(
      .vehicleLocation,
      {
        [
          $0.vehicleLocation?.coordinate.latitude, $0.vehicleLocation?.coordinate.longitude,
          $0.vehicleLocation?.heading,
        ]
      },
      isSet: new.vehicleLocation != nil)
    check(.pickupLocation, \.pickupLocation, isSet: new.pickupLocation != nil)
    check(.dropoffLocation, \.dropoffLocation, isSet: new.dropoffLocation != nil)
    check(.intermediateDestinations, \.intermediateDestinations, isSet: !new.intermediateDestinations.isEmpty)
    check(
      .remainingWaypoints, { $0.remainingWaypoints.map(WaypointIdentity.init) }, isSet: !new.remainingWaypoints.isEmpty)
    check(.etaToNextWaypoint, \.etaToNextWaypoint, isSet: new.etaToNextWaypoint != nil)
    check(.pickupETA, \.pickupETA, isSet: new.pickupETA != nil)
    check(.dropoffETA, \.dropoffETA, isSet: new.dropoffETA != nil)
    check(.activeRoute, \.activeRoute?.points, isSet: new.activeRoute != nil)
    check(.activeRouteRemainingDistance, \.activeRouteRemainingDistance, isSet: new.activeRouteRemainingDistance != nil)
    check(.activeRouteTraffic, \.activeRoute?.traffic, isSet: new.activeRoute != nil)
    check(.remainingRoute, \.remainingRoute?.points, isSet: new.remainingRoute != nil)
    check(.remainingRouteDistance, \.remainingRouteDistance, isSet: new.remainingRouteDistance != nil)
    check(.remainingRouteTraffic, \.remainingRoute?.traffic, isSet: new.remainingRoute != nil)
    return changed
  }
}

/// What makes the list of remaining waypoints different: which stops, in which order. Their
/// ETAs and paths have callbacks of their own.
private struct WaypointIdentity: Equatable {
  var location: TerminalLocation
  var tripID: String
  var type: WaypointType

  init(_ waypoint: RemainingWaypoint) {
    location = waypoint.location
    tripID = waypoint.tripID
    type = waypoint.type
  }
}
