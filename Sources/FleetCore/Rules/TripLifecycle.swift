/// The trip lifecycle as a plain value: it only moves forward,
/// NEW → ENROUTE_TO_PICKUP → ARRIVED_AT_PICKUP → (ENROUTE_TO_INTERMEDIATE_DESTINATION →
/// ARRIVED_AT_INTERMEDIATE_DESTINATION)* → ENROUTE_TO_DROPOFF → COMPLETE, and CANCELED is
/// reachable from any non-terminal state.
public struct TripLifecycle: Sendable, Hashable {
  public var status: TripStatus
  /// Which intermediate destination is next or current; meaningful in the intermediate states.
  public var intermediateIndex: Int32

  public init(status: TripStatus, intermediateIndex: Int32 = 0) {
    self.status = status
    self.intermediateIndex = intermediateIndex
  }

  /// Position along the lifecycle; intermediate stops occupy two slots each.
  func rank(intermediateCount: Int) -> Int {
    switch status {
    case .unknown, .new: 0
    case .enrouteToPickup: 1
    case .arrivedAtPickup: 2
    case .enrouteToIntermediateDestination: 3 + 2 * Int(intermediateIndex)
    case .arrivedAtIntermediateDestination: 4 + 2 * Int(intermediateIndex)
    case .enrouteToDropoff: 3 + 2 * intermediateCount
    case .complete, .canceled: 4 + 2 * intermediateCount
    }
  }

  /// Returns the lifecycle after moving to `next`, or throws naming the rule that forbids it.
  public func moving(
    to next: TripLifecycle, intermediateCount: Int, isAssigned: Bool
  ) throws(FleetError) -> TripLifecycle {
    if next.status == .unknown {
      throw .invalid("trip.trip_status must not be UNKNOWN_TRIP_STATUS")
    }
    if next == self || (next.status == status && !status.usesIntermediateIndex) { return self }
    if status.isTerminal {
      throw .precondition("trip is \(status.wireName) and can no longer change trip_status")
    }
    if next.status == .canceled { return next }
    if next.status != .new && !isAssigned {
      throw .precondition("trip_status \(next.status.wireName) requires an assigned vehicle (trip.vehicle_id)")
    }
    if next.status.usesIntermediateIndex {
      guard intermediateCount > 0 else {
        throw .precondition("trip_status \(next.status.wireName) requires trip.intermediate_destinations")
      }
      guard (0..<Int32(intermediateCount)).contains(next.intermediateIndex) else {
        throw .invalid(
          "trip.intermediate_destination_index must be within [0, \(intermediateCount - 1)], got \(next.intermediateIndex)"
        )
      }
    }
    guard next.rank(intermediateCount: intermediateCount) > rank(intermediateCount: intermediateCount) else {
      throw .precondition(
        "trip_status cannot move back from \(describe) to \(next.describe); the trip lifecycle only moves forward")
    }
    return next
  }

  var describe: String {
    status.usesIntermediateIndex ? "\(status.wireName)[\(intermediateIndex)]" : status.wireName
  }
}

extension TripStatus {
  var usesIntermediateIndex: Bool {
    self == .enrouteToIntermediateDestination || self == .arrivedAtIntermediateDestination
  }
}
