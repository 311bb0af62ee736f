import ArgumentParser
import FleetAuth
import FleetClient
import FleetConsumer
import FleetCore
import FleetGeometry
import FleetProto
import FleetSimulator
import Foundation
import GRPCCore
import SwiftProtobuf

struct RideCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ride",
    abstract: "Ask for quotes, book a ride through fleetd's dispatcher and, with --follow, follow it to the end.",
    discussion: """
      fleetd must run with --dispatch. With --quotes, the quotes for the ride (one per product
      that can carry the party: fare, breakdown, surge, pickup ETA) print as JSON and nothing is
      booked. Otherwise the ride is booked with the booking API (fleetkit.v1.Rides): with
      --quote, at that quote's price; with --product, that product priced at booking; else the
      first product that fits. --at books it for later. The booked ride prints as JSON. With
      --follow, the trip is followed with the Consumer SDK and a line is printed for every change
      of the ride and its trip; the command exits 0 when the ride is COMPLETED and 1 when it is
      CANCELED or NO_VEHICLE_FOUND. The key must be a server (or admin) key: booking is the
      provider's backend's call.
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file (from `fleetd keys add`).") var key: String
  // Unconditional: a southern latitude ("-33.86,151.21") is a value, not an option.
  @Option(parsing: .unconditional, help: "Pickup, LAT,LNG.", transform: parsePoint) var from: LatLng
  @Option(parsing: .unconditional, help: "Drop-off, LAT,LNG.", transform: parsePoint) var to: LatLng
  @Option(help: "Ride ID (also the trip's); the same ID again returns the same ride. Default: a new one.")
  var ride: String?
  @Option(help: "Riders, not counting the driver.") var passengers: Int32 = 1
  @Flag(help: "A SHARED ride (a carpool); EXCLUSIVE otherwise.") var shared = false
  @Flag(help: "Print the quotes for the ride and book nothing.") var quotes = false
  @Option(help: "Book at this quote's price (a quoteId from --quotes; its points must be --from and --to).")
  var quote: String?
  @Option(help: "Book this product (a name from the tariff file), priced at booking.") var product: String?
  @Option(
    help: "Pickup time for a ride booked for later: ISO 8601 (2026-12-24T18:30:00Z) or from now (+90m, +2h).",
    transform: parsePickupTime)
  var at: Date?
  @Flag(help: "Follow the ride until it ends.") var follow = false
  @Option(help: "Seconds between reads of the ride's state with --follow.") var interval = 1.0

  func validate() throws {
    guard passengers >= 1 else { throw ValidationError("--passengers must be at least 1") }
    guard interval > 0, interval <= 3600 else { throw ValidationError("--interval must be above 0 and at most 3600") }
    if quotes, quote != nil || product != nil || follow {
      throw ValidationError("--quotes books nothing: it takes no --quote, --product or --follow")
    }
  }

  func run() async throws {
    let tokens = try ServiceAccountTokenProvider(key: try ServiceAccountKey.load(path: key))
    try server.checkPort(for: .grpc)
    let endpoint = server.grpcEndpoint
    if quotes {
      let response = try await endpoint.withClient { client in
        try await Fleetkit_V1_Rides.Client(wrapping: client).quoteRide(
          quoteRequest, metadata: ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"])
      }
      FileHandle.standardOutput.write(Data((try response.jsonString() + "\n").utf8))
      return
    }
    let id = ride ?? "ride-\(UUID().uuidString.prefix(8).lowercased())"
    var request = Fleetkit_V1_CreateRideRequest()
    request.parent = "providers/\(provider)"
    request.rideID = id
    request.ride.pickupPoint.point.latitude = from.latitude
    request.ride.pickupPoint.point.longitude = from.longitude
    request.ride.dropoffPoint.point.latitude = to.latitude
    request.ride.dropoffPoint.point.longitude = to.longitude
    request.ride.numberOfPassengers = passengers
    request.ride.tripType = shared ? .shared : .exclusive
    request.ride.quoteID = quote ?? ""
    request.ride.product = product ?? ""
    if let at { request.ride.pickupTime = Google_Protobuf_Timestamp(date: at) }
    let booked = try await endpoint.withClient { client in
      try await Fleetkit_V1_Rides.Client(wrapping: client).createRide(
        request, metadata: ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"])
    }
    guard follow else {
      FileHandle.standardOutput.write(Data((try booked.jsonString() + "\n").utf8))
      return
    }
    let final = try await followRide(booked, endpoint: endpoint, tokens: tokens)
    if final != .completed { throw ExitCode(1) }
  }

  var quoteRequest: Fleetkit_V1_QuoteRideRequest {
    var request = Fleetkit_V1_QuoteRideRequest()
    request.parent = "providers/\(provider)"
    request.pickupPoint.point.latitude = from.latitude
    request.pickupPoint.point.longitude = from.longitude
    request.dropoffPoint.point.latitude = to.latitude
    request.dropoffPoint.point.longitude = to.longitude
    request.numberOfPassengers = passengers
    if let at { request.pickupTime = Google_Protobuf_Timestamp(date: at) }
    return request
  }

  /// Prints the ride's changes (read with GetRide) and its trip's (the Consumer SDK) until
  /// the ride ends; returns how it ended. The ride's end is the last line: the trip's own last
  /// push can come after the read that saw the ride end, so the trip's lines stop first.
  func followRide(_ booked: Fleetkit_V1_Ride, endpoint: FleetEndpoint, tokens: ServiceAccountTokenProvider)
    async throws -> Fleetkit_V1_Ride.State
  {
    let id = String(booked.name.split(separator: "/").last ?? "")
    let services = ConsumerServices(providerID: provider, endpoint: endpoint, tokenProvider: tokens)
    let model = try services.tripService.tripModel(forTripName: booked.trip)
    let printer = await TripStatusPrinter(tripID: id)
    await model.register(printer)
    let ended = try await withThrowingTaskGroup(of: Fleetkit_V1_Ride?.self) { group -> Fleetkit_V1_Ride? in
      group.addTask {
        try await services.run()
        return nil
      }
      group.addTask {
        try await endpoint.withClient { client in
          let rides = Fleetkit_V1_Rides.Client(wrapping: client)
          var request = Fleetkit_V1_GetRideRequest()
          request.name = booked.name
          // The booked state first: the dispatcher may assign the ride before the first read.
          say(describe(booked))
          var last: (Fleetkit_V1_Ride.State, String)? = (booked.state, booked.vehicleID)
          while true {
            let ride = try await rides.getRide(
              request, metadata: ["authorization": "Bearer \(try tokens.token(vehicleID: nil))"])
            if [.completed, .canceled, .noVehicleFound].contains(ride.state) { return ride }
            if last.map({ $0 != (ride.state, ride.vehicleID) }) ?? true {
              last = (ride.state, ride.vehicleID)
              say(describe(ride))
            }
            try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
          }
        }
      }
      while let next = try await group.next() {
        if let ride = next {
          group.cancelAll()
          return ride
        }
      }
      return nil
    }
    await model.unregister(printer)
    guard let ended else { return .unspecified }
    say(describe(ended))
    return ended.state
  }

  func describe(_ ride: Fleetkit_V1_Ride) -> String {
    let id = ride.name.split(separator: "/").last ?? ""
    switch ride.state {
    case .assigned:
      let eta =
        ride.hasAssignedPickupEta
        ? ", pickup ETA \(Date(timeIntervalSince1970: TimeInterval(ride.assignedPickupEta.seconds)).formatted(.iso8601))"
        : ""
      return "ride \(id): ASSIGNED to vehicle \(ride.vehicleID)\(eta)"
    case .completed:
      let fare = ride.hasFinalFare ? ", fare \(Self.amount(ride.finalFare))" : ""
      return "ride \(id): COMPLETED by vehicle \(ride.vehicleID)\(fare)"
    case .waiting, .scheduled:
      let product = ride.product.isEmpty ? "" : " \(ride.product)"
      let fare = ride.hasFare ? ",\(product) at \(Self.amount(ride.fare))" : ""
      let pickup =
        ride.hasPickupTime ? ", pickup at \(ride.pickupTime.date.formatted(.iso8601))" : ""
      return "ride \(id): \(Self.name(ride.state))\(fare)\(pickup)"
    default: return "ride \(id): \(Self.name(ride.state))"
    }
  }

  /// "12.40 EUR", exact: google.type.Money's units and nanos in the currency's minor units.
  static func amount(_ money: Google_Type_Money) -> String {
    guard let currency = Currency(code: money.currencyCode),
      let exact = Money(units: money.units, nanos: money.nanos, currency: currency)
    else { return "\(money.units).\(money.nanos) \(money.currencyCode)" }
    return exact.description
  }

  static func name(_ state: Fleetkit_V1_Ride.State) -> String {
    switch state {
    case .waiting: "WAITING"
    case .assigned: "ASSIGNED"
    case .noVehicleFound: "NO_VEHICLE_FOUND"
    case .canceled: "CANCELED"
    case .completed: "COMPLETED"
    case .scheduled: "SCHEDULED"
    default: "STATE_UNSPECIFIED"
    }
  }
}

/// `LAT,LNG`, negative latitudes included.
func parsePoint(_ text: String) throws -> LatLng {
  let parts = text.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
  guard parts.count == 2 else { throw ValidationError("expected LAT,LNG, got '\(text)'") }
  let point = LatLng(latitude: parts[0], longitude: parts[1])
  do {
    try point.validate("point")
  } catch {
    throw ValidationError("'\(text)' is not a position: \(error.message)")
  }
  return point
}

/// A pickup time: ISO 8601 with a zone, or minutes or hours from now (`+90m`, `+2h`).
func parsePickupTime(_ text: String) throws -> Date {
  if text.hasPrefix("+"), let unit = text.last, let amount = Double(text.dropFirst().dropLast()), amount > 0 {
    switch unit {
    case "m": return Date().addingTimeInterval(amount * 60)
    case "h": return Date().addingTimeInterval(amount * 3600)
    default: break
    }
  }
  if let date = try? Date(text, strategy: .iso8601) { return date }
  throw ValidationError(
    "--at: expected an ISO 8601 time with its zone (2026-12-24T18:30:00Z) or a time from now (+90m, +2h), got '\(text)'"
  )
}

/// Prints a line as it happens, also into a file or a pipe.
func say(_ line: String) {
  FileHandle.standardOutput.write(Data("\(timestamp()) \(line)\n".utf8))
}

/// The trip's status and pickup ETA as the Consumer SDK reports them.
@MainActor
final class TripStatusPrinter: TripModelSubscriber {
  let tripID: String
  var pickupETA: Date?

  init(tripID: String) { self.tripID = tripID }

  func tripModel(_ tripModel: TripModel, didUpdate tripStatus: TripStatus) {
    let eta = pickupETA.map { ", pickup ETA \($0.formatted(.iso8601))" } ?? ""
    say("trip \(tripID): \(tripStatus.wireName)\(tripStatus == .enrouteToPickup ? eta : "")")
  }

  func tripModel(_ tripModel: TripModel, didUpdatePickupETA eta: Date?) { pickupETA = eta }

  func tripModel(_ tripModel: TripModel, didFailUpdateTripWithError error: FleetClientError) {
    say("trip \(tripID): \(error.code): \(error.message)")
  }
}
