import Foundation

/// What happened, as webhooks name it (Standard Webhooks' dotted `type`).
public enum FleetEventType: String, Sendable, Hashable, CaseIterable, Codable {
  case rideCreated = "ride.created"
  case rideScheduled = "ride.scheduled"
  case rideAssigned = "ride.assigned"
  case rideArrivedAtPickup = "ride.arrived_at_pickup"
  case rideStarted = "ride.started"
  case rideCompleted = "ride.completed"
  case rideCanceled = "ride.canceled"
  case rideNoVehicleFound = "ride.no_vehicle_found"
  case vehicleOnline = "vehicle.online"
  case vehicleOffline = "vehicle.offline"
  case vehicleEnteredZone = "vehicle.entered_zone"
  case vehicleLeftZone = "vehicle.left_zone"
}

/// One event for webhooks: written to the outbox in the same commit as the change that caused
/// it, so that it is delivered if and only if the change is stored.
public struct FleetEvent: Sendable, Hashable {
  /// `msg_…`: the `webhook-id` every delivery attempt of it carries.
  public var id: String
  public var type: FleetEventType
  public var provider: String
  /// The ride or vehicle it is about: the events of one subject are delivered in order.
  public var subject: EntityKey
  /// The order among a subject's events: the revision of the write that caused it (revisions
  /// only grow, across instances too), then its place among that write's events.
  public var revision: UInt64
  public var position: Int
  public var time: Date
  public var payload: Payload

  public enum Payload: Sendable, Hashable {
    case ride(RideView)
    /// With the zone for `vehicle.entered_zone` and `vehicle.left_zone`.
    case vehicle(Vehicle, zone: String?)
  }

  public init(
    id: String, type: FleetEventType, provider: String, subject: EntityKey, revision: UInt64, position: Int,
    time: Date, payload: Payload
  ) {
    self.id = id
    self.type = type
    self.provider = provider
    self.subject = subject
    self.revision = revision
    self.position = position
    self.time = time
    self.payload = payload
  }

  /// A fresh `msg_` ID: 128 random bits in hex.
  public static func newID() -> String {
    var generator = SystemRandomNumberGenerator()
    let high = generator.next() as UInt64
    let low = generator.next() as UInt64
    return "msg_" + String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
  }
}

extension String {
  func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
