import ArgumentParser
import FleetAuth
import FleetConsumer
import FleetCore
import FleetGeometry
import FleetSimulator
import Foundation

struct TrackCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "track",
    abstract: "Follow a trip with the Consumer SDK, printing each callback as it happens.",
    discussion: """
      Exits when the trip is COMPLETE or CANCELED. The key signs a token for the trip: a consumer
      key (as a rider's app gets from its backend) or a server key. Errors are printed and
      retried, as the SDK does, until the trip ends or the command is interrupted.
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file (from `fleetd keys add`).") var key: String
  @Option(help: "Trip ID.") var trip: String
  @Flag(help: "One JSON object per line.") var json = false
  @Flag(help: "Poll GetTrip instead of fleetd's push stream.") var poll = false
  @Option(help: "Seconds between polls with --poll.") var interval = 5.0

  func validate() throws {
    guard interval > 0, interval <= 86_400 else {
      throw ValidationError("--interval must be a number of seconds above 0 and at most 86400")
    }
  }

  func run() async throws {
    try server.checkPort(for: .grpc)
    let tokens = try ServiceAccountTokenProvider(key: try ServiceAccountKey.load(path: key))
    var configuration = ConsumerConfiguration()
    if poll {
      configuration.transport = .polling
      configuration.pollingInterval = .milliseconds(Int(interval * 1000))
    }
    let services = ConsumerServices(
      providerID: provider, endpoint: server.grpcEndpoint, tokenProvider: tokens,
      configuration: configuration)
    let model = try services.tripService.tripModel(forTripName: "providers/\(provider)/trips/\(trip)")
    let printer = await CallbackPrinter(json: json)
    try await withThrowingTaskGroup(of: Void.self) { group in
      await model.register(printer)
      group.addTask { try await services.run() }
      group.addTask { for await _ in printer.ended {} }
      // The trip ended, or the connection could not be made at all.
      try await group.next()
      group.cancelAll()
    }
  }
}

/// Prints each Consumer SDK callback as one line, and says when the trip has ended.
@MainActor
final class CallbackPrinter: TripModelSubscriber {
  let json: Bool
  let ended: AsyncStream<Void>
  let endedContinuation: AsyncStream<Void>.Continuation

  init(json: Bool) {
    self.json = json
    (ended, endedContinuation) = AsyncStream<Void>.makeStream()
  }

  func print(_ callback: String, _ value: Any?) {
    let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    let line: String
    if json {
      line = "{\"callback\":\(encode(callback)),\"value\":\(encode(value ?? NSNull())),\"time\":\(encode(time))}"
    } else {
      line = "\(time) \(callback) \(value.map(text) ?? "-")"
    }
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  func encode(_ value: Any) -> String {
    let data = try? JSONSerialization.data(
      withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
    return data.flatMap { String(data: $0, encoding: .utf8) } ?? "null"
  }

  func text(_ value: Any) -> String {
    switch value {
    case let string as String: string
    case let number as Double: String(format: "%.0f", number)
    default: encode(value)
    }
  }

  func tripModel(_ tripModel: TripModel, didUpdateModelState state: TripModelState) {
    print("didUpdateModelState", state.rawValue)
  }
  func tripModel(_ tripModel: TripModel, didUpdate trip: TripInfo, updatedPropertyFields: TripPropertyFields) {
    print("didUpdateTrip", fieldNames(updatedPropertyFields))
  }
  func tripModel(_ tripModel: TripModel, didUpdate tripStatus: TripStatus) {
    print("didUpdateTripStatus", tripStatus.wireName)
    if tripStatus.isTerminal { endedContinuation.finish() }
  }
  func tripModel(_ tripModel: TripModel, didUpdate vehicleLocation: VehicleMarkerLocation?) {
    print(
      "didUpdateVehicleLocation",
      vehicleLocation.map { location -> [String: Any] in
        var value = point(location.coordinate)
        if let heading = location.heading { value["heading"] = heading }
        return value
      })
  }
  func tripModel(_ tripModel: TripModel, didUpdatePickupLocation location: TerminalLocation?) {
    print("didUpdatePickupLocation", location.map { point($0.point) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateDropoffLocation location: TerminalLocation?) {
    print("didUpdateDropoffLocation", location.map { point($0.point) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateIntermediateDestinations destinations: [TerminalLocation]) {
    print("didUpdateIntermediateDestinations", destinations.map { point($0.point) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemaining waypoints: [RemainingWaypoint]) {
    print(
      "didUpdateRemainingWaypoints",
      waypoints.map { waypoint -> [String: Any] in
        var value = point(waypoint.location.point)
        value["tripId"] = waypoint.tripID
        value["type"] = waypointTypeName(waypoint.type)
        return value
      })
  }
  func tripModel(_ tripModel: TripModel, didUpdateETAToNextWaypoint eta: Date?) {
    print("didUpdateETAToNextWaypoint", eta.map(timestamp))
  }
  func tripModel(_ tripModel: TripModel, didUpdatePickupETA eta: Date?) {
    print("didUpdatePickupETA", eta.map(timestamp))
  }
  func tripModel(_ tripModel: TripModel, didUpdateDropoffETA eta: Date?) {
    print("didUpdateDropoffETA", eta.map(timestamp))
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRoute route: [LatLng]?) {
    print("didUpdateActiveRoute", route.map { Polyline.encode($0) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteRemainingDistance meters: Double?) {
    print("didUpdateActiveRouteRemainingDistance", meters)
  }
  func tripModel(_ tripModel: TripModel, didUpdateActiveRouteTraffic traffic: TrafficRoute?) {
    print("didUpdateActiveRouteTraffic", traffic.map(intervals))
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRoute route: [LatLng]?) {
    print("didUpdateRemainingRoute", route.map { Polyline.encode($0) })
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteDistance meters: Double?) {
    print("didUpdateRemainingRouteDistance", meters)
  }
  func tripModel(_ tripModel: TripModel, didUpdateRemainingRouteTraffic traffic: TrafficRoute?) {
    print("didUpdateRemainingRouteTraffic", traffic.map(intervals))
  }
  func tripModel(_ tripModel: TripModel, didFailUpdateTripWithError error: FleetClientError) {
    print("didFailUpdateTripWithError", ["code": "\(error.code)", "message": error.message])
  }

  func point(_ p: LatLng) -> [String: Any] { ["latitude": p.latitude, "longitude": p.longitude] }

  func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }

  func intervals(_ route: TrafficRoute) -> [[String: Any]] {
    route.traffic.map { ["start": $0.start, "end": $0.end, "speed": speedName($0.speed)] }
  }

  func speedName(_ speed: TrafficSpeed) -> String {
    switch speed {
    case .normal: "NORMAL"
    case .slow: "SLOW"
    case .trafficJam: "TRAFFIC_JAM"
    }
  }

  func waypointTypeName(_ type: WaypointType) -> String {
    switch type {
    case .pickup: "PICKUP_WAYPOINT_TYPE"
    case .dropOff: "DROP_OFF_WAYPOINT_TYPE"
    case .intermediateDestination: "INTERMEDIATE_DESTINATION_WAYPOINT_TYPE"
    case .unknown: "UNKNOWN_WAYPOINT_TYPE"
    }
  }

  func fieldNames(_ fields: TripPropertyFields) -> [String] {
    let names: [(TripPropertyFields, String)] = [
      (.status, "status"), (.vehicleLocation, "vehicleLocation"), (.pickupLocation, "pickupLocation"),
      (.dropoffLocation, "dropoffLocation"), (.intermediateDestinations, "intermediateDestinations"),
      (.remainingWaypoints, "remainingWaypoints"), (.etaToNextWaypoint, "etaToNextWaypoint"),
      (.pickupETA, "pickupETA"), (.dropoffETA, "dropoffETA"), (.activeRoute, "activeRoute"),
      (.activeRouteRemainingDistance, "activeRouteRemainingDistance"), (.activeRouteTraffic, "activeRouteTraffic"),
      (.remainingRoute, "remainingRoute"), (.remainingRouteDistance, "remainingRouteDistance"),
      (.remainingRouteTraffic, "remainingRouteTraffic"),
    ]
    return names.filter { fields.contains($0.0) }.map(\.1)
  }
}
