import FleetAuth
import FleetCore
import FleetProto
import FleetTestSupport
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import SwiftProtobuf
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Live trip progress on a real fleetd with the Monaco graph: GetTrip's route fields, and the
/// trip pushed over gRPC (fleetkit.v1.TripUpdates) and server-sent events.
@Suite("Trip updates")
struct TripUpdatesTests {
  /// A car at the palace, a trip from near the port to the casino assigned to it.
  /// A car below the palace and a trip assigned to it; `locatedAt` is the device's time of the
  /// car's first location (the server's time when nil).
  func book(_ server: Fleetd, token: String, locatedAt: Date? = nil) async throws {
    try await server.withClients { trips, vehicles in
      var vehicle = newVehicleRequest("car")
      // On the road below the palace.
      vehicle.vehicle.lastLocation.location = latLng(43.72992, 7.41846)
      if let locatedAt { vehicle.vehicle.lastLocation.updateTime = .init(date: locatedAt) }
      _ = try await vehicles.createVehicle(vehicle, metadata: auth(token))
      _ = try await trips.createTrip(newTripRequest("ride", vehicle: "car"), metadata: auth(token))
    }
  }

  func setStatus(_ status: Maps_Fleetengine_V1_TripStatus, _ server: Fleetd, token: String) async throws {
    try await server.withClients { trips, _ in
      var update = Maps_Fleetengine_V1_UpdateTripRequest()
      update.name = "providers/acme/trips/ride"
      update.trip.tripStatus = status
      update.updateMask.paths = ["trip_status"]
      _ = try await trips.updateTrip(update, metadata: auth(token))
    }
  }

  /// Waits until fleetd has `count` open trip streams.
  func waitForWatchers(_ server: Fleetd, _ count: Int) async throws {
    try await eventually("\(count) open trip streams") { (try server.daemon).fleet.openTripStreams == count }
  }

  @Test func getTripCarriesTheRouteAndETAs() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      try await book(server, token: token)
      try await server.withClients { trips, vehicles in
        var get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = "providers/acme/trips/ride"
        let trip = try await trips.getTrip(get, metadata: auth(token))
        #expect(trip.route.count > 10)
        #expect(!trip.currentRouteSegment.isEmpty)
        #expect(trip.remainingDistanceMeters.value > 500)
        #expect(trip.etaToFirstWaypoint.seconds > Int64(Date().timeIntervalSince1970))
        #expect(trip.remainingTimeToFirstWaypoint.seconds > 30)
        #expect(trip.currentRouteSegmentEndPoint.waypointType == .pickupWaypointType)
        #expect(trip.lastLocationSnappable)
        #expect(trip.pickupTime == trip.etaToFirstWaypoint)
        #expect(trip.dropoffTime.seconds > trip.pickupTime.seconds)
        #expect(trip.remainingWaypoints.allSatisfy { $0.hasEta && $0.hasDistanceMeters && !$0.pathToWaypoint.isEmpty })
        #expect(trip.currentRouteSegmentTraffic.speedReadingInterval.first?.speed == .normal)
        // Asking with the version just read leaves the unchanged route out.
        get.currentRouteSegmentVersion = trip.currentRouteSegmentVersion
        get.remainingWaypointsRouteVersion = trip.remainingWaypointsRouteVersion
        let again = try await trips.getTrip(get, metadata: auth(token))
        #expect(again.route.isEmpty && again.currentRouteSegment.isEmpty)
        #expect(again.remainingWaypoints.allSatisfy { $0.pathToWaypoint.isEmpty && $0.hasEta })
        #expect(again.remainingDistanceMeters == trip.remainingDistanceMeters)
        // The journey-sharing view has the per-waypoint route but not the trip-level fields.
        get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = "providers/acme/trips/ride"
        get.view = .journeySharingV1S
        let shared = try await trips.getTrip(get, metadata: auth(token))
        #expect(shared.route.isEmpty && !shared.hasRemainingDistanceMeters && !shared.hasEtaToFirstWaypoint)
        #expect(shared.remainingWaypoints.first?.pathToWaypoint.isEmpty == false)
        // ENCODED_POLYLINE_TYPE: every path encoded only, never also as points.
        get = Maps_Fleetengine_V1_GetTripRequest()
        get.name = "providers/acme/trips/ride"
        get.routeFormatType = .encodedPolylineType
        let encoded = try await trips.getTrip(get, metadata: auth(token))
        #expect(encoded.route.isEmpty && encoded.currentRouteSegment == trip.currentRouteSegment)
        #expect(encoded.remainingWaypoints.allSatisfy { $0.pathToWaypoint.isEmpty })
        #expect(
          encoded.remainingWaypoints.map(\.encodedPathToWaypoint)
            == trip.remainingWaypoints.map(\.encodedPathToWaypoint))
        #expect(encoded.remainingWaypoints.first?.encodedPathToWaypoint.isEmpty == false)
        // The vehicle shows the same progress.
        var getVehicle = Maps_Fleetengine_V1_GetVehicleRequest()
        getVehicle.name = "providers/acme/vehicles/car"
        let car = try await vehicles.getVehicle(getVehicle, metadata: auth(token))
        #expect(car.remainingDistanceMeters == trip.remainingDistanceMeters)
        #expect(car.currentRouteSegment == trip.currentRouteSegment)
        #expect(car.navigationStatus == .enrouteToDestination)
      }
    }
  }

  @Test func aRiderIsSentEveryChangeUntilTheTripEnds() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      // The first location well before the two fixes below, whatever the time between: a fix
      // stamped just after it, 250 m away, would be one no car could reach, and left unsnapped.
      try await book(server, token: token, locatedAt: Date().addingTimeInterval(-120))
      let rider = try await server.signer(role: .consumer).token(tripID: "ride")
      let driver = try await server.signer(role: .driver).token(vehicleID: "car")
      try await server.withClients { _, vehicles in
        try await withGRPCClient(
          transport: .http2NIOPosix(
            target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
        ) { client in
          let updates = Fleetkit_V1_TripUpdates.Client(wrapping: client)
          let request = Fleetkit_V1_WatchTripRequest.with { $0.name = "providers/acme/trips/ride" }
          let seen = SeenTrips()
          let received = try await withThrowingTaskGroup(of: [Maps_Fleetengine_V1_Trip].self) { group in
            group.addTask {
              try await updates.watchTrip(request, metadata: auth(rider)) { response in
                for try await trip in response.messages { seen.append(trip) }
                return seen.trips
              }
            }
            try await waitForWatchers(server, 1)
            try await setStatus(.enrouteToPickup, server, token: token)
            // Two fixes ten seconds apart by the device's clock (reaching the server 50 ms apart).
            let start = Date().addingTimeInterval(-20)
            for (i, (lat, lng)) in [(43.7305, 7.4205), (43.7312, 7.4210)].enumerated() {
              try await Task.sleep(for: .milliseconds(50))
              var update = newLocationUpdate("car", lat, lng)
              update.vehicle.lastLocation.updateTime = .init(date: start.addingTimeInterval(Double(i) * 10))
              _ = try await vehicles.updateVehicle(update, metadata: auth(driver))
            }
            // The stream sends the newest state when the reader falls behind: wait until the rider
            // has seen the car where fleetd now has it, before the trip moves on.
            var getVehicle = Maps_Fleetengine_V1_GetVehicleRequest()
            getVehicle.name = "providers/acme/vehicles/car"
            let current = try await vehicles.getVehicle(getVehicle, metadata: auth(token)).lastLocation.location
            try await eventually("the rider sees the car's current location") {
              seen.trips.contains { $0.lastLocation.location == current }
            }
            try await setStatus(.arrivedAtPickup, server, token: token)
            try await setStatus(.enrouteToDropoff, server, token: token)
            try await setStatus(.complete, server, token: token)
            return try await group.next()!
          }
          // The rider's view, the trip at once, then the changes in order, and the end.
          #expect(received.count >= 4)
          #expect(received.allSatisfy { $0.view == .journeySharingV1S })
          #expect(received.first?.tripStatus == .new)
          #expect(received.last?.tripStatus == .complete)
          let statuses = received.map(\.tripStatus.rawValue)
          #expect(statuses == statuses.sorted { order($0) < order($1) })
          // The car's reported moves reached the rider (snapped to the road it is on).
          let positions = Set(
            received.filter { $0.tripStatus == .enrouteToPickup }.map {
              "\($0.lastLocation.location.latitude),\($0.lastLocation.location.longitude)"
            })
          #expect(positions.count >= 2)
          #expect(received.last { $0.tripStatus == .enrouteToPickup }?.lastLocation.isRoadSnapped.value == true)
          #expect(
            received.filter { $0.tripStatus == .enrouteToPickup }.allSatisfy {
              $0.remainingWaypoints.first?.hasEta == true
            })
          try await waitForWatchers(server, 0)
        }
      }
    }
  }

  @Test func aWatcherAsksForThePathsEncodedOnly() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      try await book(server, token: token)
      let rider = try await server.signer(role: .consumer).token(tripID: "ride")
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let updates = Fleetkit_V1_TripUpdates.Client(wrapping: client)
        func first(_ format: Maps_Fleetengine_V1_PolylineFormatType) async throws -> Maps_Fleetengine_V1_Trip? {
          var request = Fleetkit_V1_WatchTripRequest()
          request.name = "providers/acme/trips/ride"
          request.routeFormatType = format
          return try await updates.watchTrip(request, metadata: auth(rider)) { response in
            for try await trip in response.messages { return trip }
            return nil
          }
        }
        let points = try #require(try await first(.unknownFormatType)?.remainingWaypoints.first)
        #expect(!points.pathToWaypoint.isEmpty && !points.encodedPathToWaypoint.isEmpty)
        let encoded = try #require(try await first(.encodedPolylineType)?.remainingWaypoints.first)
        #expect(encoded.pathToWaypoint.isEmpty)
        #expect(encoded.encodedPathToWaypoint == points.encodedPathToWaypoint)
        #expect(encoded.trafficToWaypoint == points.trafficToWaypoint)
      }
      // Server-sent events take it as a query parameter; an unknown format is refused by name.
      let (status, _, _) = try await server.http(
        "GET", "/fleetkit/v1/providers/acme/trips/ride:watch?route_format_type=SOMETHING", token: rider)
      #expect(status == 400)
    }
  }

  /// Lifecycle order of wire statuses (NEW=1, ENROUTE_TO_PICKUP=2, ARRIVED_AT_PICKUP=3,
  /// ENROUTE_TO_INTERMEDIATE=8, ARRIVED_AT_INTERMEDIATE=7, ENROUTE_TO_DROPOFF=4, COMPLETE=5).
  func order(_ status: Int) -> Int { [1: 0, 2: 1, 3: 2, 8: 3, 7: 4, 4: 5, 5: 6, 6: 7][status] ?? 9 }

  @Test func aConsumerCannotWatchAnotherTrip() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      try await book(server, token: token)
      let someoneElse = try await server.signer(role: .consumer).token(tripID: "another")
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let updates = Fleetkit_V1_TripUpdates.Client(wrapping: client)
        var request = Fleetkit_V1_WatchTripRequest()
        request.name = "providers/acme/trips/ride"
        let code = await rpcCode {
          try await updates.watchTrip(request, metadata: auth(someoneElse)) { response in
            for try await _ in response.messages {}
          }
        }
        #expect(code == .permissionDenied)
        request.name = "providers/acme/trips/nope"
        let missing = await rpcCode {
          try await updates.watchTrip(request, metadata: auth(token)) { response in
            for try await _ in response.messages {}
          }
        }
        #expect(missing == .notFound)
      }
      // Server-sent events: the same rule, Google's error body.
      let (status, json, _) = try await server.http(
        "GET", "/fleetkit/v1/providers/acme/trips/ride:watch", token: someoneElse)
      #expect(status == 403)
      #expect((json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED")
    }
  }

  @Test func aWatcherThatHangsUpIsForgotten() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      try await book(server, token: token)
      try await withGRPCClient(
        transport: .http2NIOPosix(
          target: .ipv4(address: "127.0.0.1", port: server.grpcPort), transportSecurity: .plaintext)
      ) { client in
        let updates = Fleetkit_V1_TripUpdates.Client(wrapping: client)
        let request = Fleetkit_V1_WatchTripRequest.with { $0.name = "providers/acme/trips/ride" }
        let watching = Task {
          try await updates.watchTrip(request, metadata: auth(token)) { response in
            for try await _ in response.messages {}
          }
        }
        try await waitForWatchers(server, 1)
        // The rider closes the app: no trip change follows, yet fleetd lets go of the stream.
        watching.cancel()
        try await waitForWatchers(server, 0)
      }
      // A stream open while fleetd shuts down does not hold the shutdown up (Fleetd.with
      // shuts down after this block, with this one still open).
      let rider = try await server.signer(role: .consumer).token(tripID: "ride")
      var request = URLRequest(
        url: URL(string: "http://127.0.0.1:\(server.httpPort)/fleetkit/v1/providers/acme/trips/ride:watch")!)
      request.setValue("Bearer \(rider)", forHTTPHeaderField: "Authorization")
      Task { _ = try? await URLSession.shared.data(for: request) }
      try await waitForWatchers(server, 1)
    }
  }

  @Test func browsersGetServerSentEvents() async throws {
    try await Fleetd.with(graph: try await monacoGraph()) { server in
      let token = try server.admin.token()
      try await book(server, token: token)
      let rider = try await server.signer(role: .consumer).token(tripID: "ride")
      // EventSource cannot send headers: the token rides in the query.
      var request = URLRequest(
        url: URL(
          string:
            "http://127.0.0.1:\(server.httpPort)/fleetkit/v1/providers/acme/trips/ride:watch?access_token=\(rider)")!)
      request.timeoutInterval = 30
      let body = Task { try await URLSession.shared.data(for: request) }
      try await waitForWatchers(server, 1)
      try await setStatus(.enrouteToPickup, server, token: token)
      try await setStatus(.canceled, server, token: token)
      let (data, response) = try await body.value
      #expect((response as? HTTPURLResponse)?.statusCode == 200)
      #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "text/event-stream")
      let events = String(decoding: data, as: UTF8.self).components(separatedBy: "\n\n").filter { !$0.isEmpty }
      #expect(events.count >= 2)
      let trips = try events.map { event -> Maps_Fleetengine_V1_Trip in
        #expect(event.hasPrefix("event: trip\ndata: "))
        return try Maps_Fleetengine_V1_Trip(jsonString: String(event.dropFirst("event: trip\ndata: ".count)))
      }
      #expect(trips.first?.tripStatus == .new)
      #expect(trips.last?.tripStatus == .canceled)
      #expect(trips.first?.remainingWaypoints.first?.hasEta == true)
    }
  }
}

/// What a WatchTrip reader has received so far.
final class SeenTrips: Sendable {
  let received = Mutex<[Maps_Fleetengine_V1_Trip]>([])
  func append(_ trip: Maps_Fleetengine_V1_Trip) { received.withLock { $0.append(trip) } }
  var trips: [Maps_Fleetengine_V1_Trip] { received.withLock { $0 } }
}
