import ArgumentParser
import FleetAuth
import Foundation

struct TokenCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "token", abstract: "Print a signed token for development (what a provider's token server mints).")

  @Option(help: "Service-account JSON file written by 'fleetd keys add'.")
  var key: String
  @Option(help: "Trip ID for authorization.tripid ('*' for any).")
  var trip: String?
  @Option(help: "Vehicle ID for authorization.vehicleid ('*' for any).")
  var vehicle: String?
  @Option(help: "Delivery vehicle ID for authorization.deliveryvehicleid ('*' for any).")
  var deliveryVehicle: String?
  @Option(help: "Task ID for authorization.taskid ('*' for any).")
  var task: String?
  @Option(help: "Tracking ID for authorization.trackingid ('*' for any).")
  var trackingId: String?
  @Option(help: "Lifetime in seconds (at most 3600).")
  var ttl: Int = 3600
  @Option(help: "Audience.")
  var audience = TokenSigner.fleetEngineAudience

  func run() async throws {
    guard (1...3600).contains(ttl) else { throw ValidationError("--ttl must be within 1...3600 seconds") }
    let signer = try TokenSigner(key: try ServiceAccountKey.load(path: key))
    print(
      try signer.token(
        tripID: trip, vehicleID: vehicle, deliveryVehicleID: deliveryVehicle, taskID: task, trackingID: trackingId,
        lifetime: TimeInterval(ttl), audience: audience))
  }
}
