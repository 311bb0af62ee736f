/// Decides what a ride-status session sends, as a plain state machine (no I/O): each new valid
/// status once; the last valid status again when the source fails or answers something invalid;
/// a stop after the ride ends or after too many failures in a row.
struct RideStatusDelivery: Sendable {
  /// What to do after an event: send a status, then maybe stop.
  struct Action: Sendable, Equatable {
    var send: RideStatus?
    var stop: RideStatusUpdatesStopReason?

    static let none = Action()
  }

  let validator: RideStatusValidator
  let maximumConsecutiveFailures: Int
  /// The last valid status sent: what a failure repeats.
  private(set) var lastValid: RideStatus?
  private(set) var consecutiveFailures = 0

  init(rideIdentifier: String, maximumConsecutiveFailures: Int) {
    validator = RideStatusValidator(rideIdentifier: rideIdentifier)
    self.maximumConsecutiveFailures = max(1, maximumConsecutiveFailures)
  }

  /// The source answered `status` (polled or pushed).
  mutating func received(_ status: RideStatus) -> Action {
    do {
      try validator.validate(status)
    } catch {
      // Never sent: the receiver would stop listening. It counts as a failure.
      return failed("the status is invalid: \(error)")
    }
    consecutiveFailures = 0
    guard status != lastValid else { return .none }
    lastValid = status
    return Action(send: status, stop: status.phase == .completed ? .rideEnded : nil)
  }

  /// The source failed: an error, no answer within the deadline, or an invalid status.
  mutating func failed(_ reason: String) -> Action {
    consecutiveFailures += 1
    let stop: RideStatusUpdatesStopReason? =
      consecutiveFailures >= maximumConsecutiveFailures
      ? .sourceFailing(consecutiveFailures: consecutiveFailures, lastError: reason) : nil
    // The cached status is all that can honestly be said; nothing is refreshed in it.
    return Action(send: lastValid, stop: stop)
  }
}
