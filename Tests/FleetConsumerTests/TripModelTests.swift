import FleetCore
import FleetGeometry
import FleetProto
import Foundation
import GRPCCore
import Synchronization
import Testing

@testable import FleetConsumer

/// The trip model's reading, diffing and recovery rules, with a scripted transport instead of
/// a connection.
@Suite @MainActor struct TripModelTests {
  static func wire(_ status: Maps_Fleetengine_V1_TripStatus, vehicleAt: (Double, Double)? = nil)
    -> Maps_Fleetengine_V1_Trip
  {
    var trip = Maps_Fleetengine_V1_Trip()
    trip.name = "providers/acme/trips/t1"
    trip.tripStatus = status
    trip.pickupPoint.point.latitude = 43.733
    trip.pickupPoint.point.longitude = 7.425
    trip.dropoffPoint.point.latitude = 43.736
    trip.dropoffPoint.point.longitude = 7.423
    if let (lat, lng) = vehicleAt {
      trip.vehicleID = "cab"
      trip.lastLocation.location.latitude = lat
      trip.lastLocation.location.longitude = lng
      trip.lastLocation.updateTime = .init(date: Date())
      var pickup = Maps_Fleetengine_V1_TripWaypoint()
      pickup.location.point = trip.pickupPoint.point
      pickup.tripID = "t1"
      pickup.waypointType = .pickupWaypointType
      pickup.distanceMeters = .init(420)
      pickup.eta = .init(date: Date(timeIntervalSince1970: 1_800_000_060))
      pickup.encodedPathToWaypoint = Polyline.encode([
        LatLng(latitude: lat, longitude: lng), LatLng(latitude: 43.733, longitude: 7.425),
      ])
      pickup.trafficToWaypoint.speedReadingInterval = [
        .with {
          $0.startPolylinePointIndex = 0
          $0.endPolylinePointIndex = 1
          $0.speed = .slow
        }
      ]
      var dropoff = Maps_Fleetengine_V1_TripWaypoint()
      dropoff.location.point = trip.dropoffPoint.point
      dropoff.tripID = "t1"
      dropoff.waypointType = .dropOffWaypointType
      dropoff.distanceMeters = .init(380)
      dropoff.eta = .init(date: Date(timeIntervalSince1970: 1_800_000_150))
      dropoff.encodedPathToWaypoint = Polyline.encode([
        LatLng(latitude: 43.733, longitude: 7.425), LatLng(latitude: 43.736, longitude: 7.423),
      ])
      trip.remainingWaypoints = [pickup, dropoff]
    }
    return trip
  }

  @Test func readsTheJourneySharingView() {
    let trip = TripInfo(Self.wire(.enrouteToPickup, vehicleAt: (43.731, 7.421)))
    #expect(trip.status == .enrouteToPickup)
    #expect(trip.vehicleLocation?.coordinate == LatLng(latitude: 43.731, longitude: 7.421))
    #expect(trip.pickupETA == Date(timeIntervalSince1970: 1_800_000_060))
    #expect(trip.dropoffETA == Date(timeIntervalSince1970: 1_800_000_150))
    #expect(trip.etaToNextWaypoint == trip.pickupETA)
    #expect(trip.activeRoute?.points.count == 2)
    #expect(trip.activeRoute?.traffic == [SpeedInterval(start: 0, end: 1, speed: .slow)])
    #expect(trip.activeRouteRemainingDistance == 420)
    #expect(trip.remainingRoute?.points.count == 2)
    #expect(trip.remainingRouteDistance == 380)
  }

  @Test func changesAreOnlyWhatDiffers() {
    let first = TripInfo(Self.wire(.enrouteToPickup, vehicleAt: (43.731, 7.421)))
    let all = TripPropertyFields.changes(from: nil, to: first)
    #expect(all.contains([.status, .vehicleLocation, .pickupLocation, .activeRoute, .remainingRoute, .pickupETA]))
    #expect(!all.contains(.intermediateDestinations), "an unset field is not a change")
    #expect(TripPropertyFields.changes(from: first, to: first).isEmpty)
    var later = first
    later.vehicleLocation?.time = Date().addingTimeInterval(5)
    #expect(TripPropertyFields.changes(from: first, to: later).isEmpty, "a new timestamp at the same place")
    later.status = .arrivedAtPickup
    later.remainingWaypoints[0].eta = Date(timeIntervalSince1970: 1_800_000_070)
    later.pickupETA = later.remainingWaypoints[0].eta
    #expect(TripPropertyFields.changes(from: first, to: later) == [.status, .pickupETA])
  }

  @Test(arguments: [
    "trips/t1", "providers/acme/trips/", "providers/acme/vehicles/t1", "providers/other/trips/t1",
    "providers/acme/trips/a/b", "",
  ])
  func badTripNamesFailAtOnce(name: String) {
    let services = ConsumerServices(
      providerID: "acme", endpoint: FleetEndpoint(host: "127.0.0.1", port: 1), tokenProvider: ScriptedTokens())
    let error = #expect(throws: FleetClientError.self) { try services.tripService.tripModel(forTripName: name) }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("tripName") == true)
  }

  @Test func oneModelPerTrip() throws {
    let services = ConsumerServices(
      providerID: "acme", endpoint: FleetEndpoint(host: "127.0.0.1", port: 1), tokenProvider: ScriptedTokens())
    let a = try services.tripService.tripModel(forTripName: "providers/acme/trips/t1")
    let b = try services.tripService.tripModel(forTripName: "providers/acme/trips/t1")
    #expect(a === b)
  }

  final class ScriptedTokens: AuthorizationTokenProvider {
    let log = Mutex<[String]>([])
    func token(for context: AuthorizationContext) async throws -> String {
      log.withLock { $0.append("token") }
      return "token-\(log.withLock { $0.count })"
    }
    func invalidateToken(for context: AuthorizationContext) async { log.withLock { $0.append("invalidate") } }
    var entries: [String] { log.withLock { $0 } }
  }

  /// Answers GetTrip / WatchTrip from a script, one entry per call.
  final class ScriptedTransport: Sendable {
    enum Answer: Sendable {
      case trip(Maps_Fleetengine_V1_Trip)
      case failure(RPCError.Code)
    }
    let script: Mutex<[Answer]>
    let calls = Mutex<[String]>([])
    let watchFails: RPCError.Code?

    init(_ answers: [Answer], watchFails: RPCError.Code? = nil) {
      script = Mutex(answers)
      self.watchFails = watchFails
    }

    func next() throws -> Maps_Fleetengine_V1_Trip {
      let answer = script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
      switch answer {
      case .trip(let trip): return trip
      case .failure(let code): throw RPCError(code: code, message: "scripted")
      case nil: throw RPCError(code: .unavailable, message: "script ended")
      }
    }

    var transport: TripTransport {
      TripTransport(
        getTrip: { _, token in
          self.calls.withLock { $0.append("get \(token)") }
          return try self.next()
        },
        watchTrip: { _, token, onTrip in
          self.calls.withLock { $0.append("watch \(token)") }
          if let code = self.watchFails { throw RPCError(code: code, message: "scripted") }
          await onTrip(try self.next())
        })
    }
  }

  func follow(
    _ transport: ScriptedTransport, tokens: ScriptedTokens, transportKind: ConsumerConfiguration.Transport,
    until done: @escaping @MainActor (RecordingSubscriber) -> Bool
  ) async throws -> RecordingSubscriber {
    var configuration = ConsumerConfiguration()
    configuration.transport = transportKind
    configuration.pollingInterval = .milliseconds(10)
    configuration.retryBackoff = RetryBackoff(initial: .milliseconds(10), maximum: .milliseconds(20))
    let services = ConsumerServices(
      providerID: "acme", endpoint: FleetEndpoint(host: "127.0.0.1", port: 1), tokenProvider: tokens,
      configuration: configuration)
    let model = try services.tripService.tripModel(forTripName: "providers/acme/trips/t1")
    let recorder = RecordingSubscriber()
    model.register(recorder)
    let following = Task { await services.follow(transport.transport) }
    // Generous: with the whole suite running, two cores may be busy for many seconds.
    let deadline = ContinuousClock.now + .seconds(120)
    while !done(recorder), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    following.cancel()
    await following.value
    return recorder
  }

  @Test func serverErrorsAreRecoveredSilentlyAndClientErrorsReported() async throws {
    let transport = ScriptedTransport([
      .failure(.unavailable), .failure(.deadlineExceeded), .failure(.aborted), .trip(Self.wire(.new)),
      .failure(.notFound), .failure(.permissionDenied), .failure(.resourceExhausted), .failure(.invalidArgument),
      .trip(Self.wire(.canceled)),
    ])
    let recorder = try await follow(transport, tokens: ScriptedTokens(), transportKind: .polling) {
      $0.statuses.last == .canceled
    }
    #expect(recorder.statuses == [.new, .canceled])
    #expect(recorder.errors.map(\.code) == [.notFound, .permissionDenied, .resourceExhausted, .invalidArgument])
    // Nothing more is asked for once the trip has ended.
    #expect(transport.calls.withLock { $0.count } == 9)
  }

  @Test func unauthenticatedGetsAFreshTokenAndRetriesAtOnce() async throws {
    let tokens = ScriptedTokens()
    let transport = ScriptedTransport([.failure(.unauthenticated), .trip(Self.wire(.complete))])
    let recorder = try await follow(transport, tokens: tokens, transportKind: .polling) { $0.statuses == [.complete] }
    #expect(recorder.errors.map(\.code) == [.unauthenticated])
    #expect(tokens.entries == ["token", "invalidate", "token"])
    #expect(transport.calls.withLock { $0 } == ["get token-1", "get token-3"])
  }

  @Test func withoutThePushStreamItPolls() async throws {
    let transport = ScriptedTransport(
      [.trip(Self.wire(.new)), .trip(Self.wire(.complete))], watchFails: .unimplemented)
    let recorder = try await follow(transport, tokens: ScriptedTokens(), transportKind: .automatic) {
      $0.statuses.last == .complete
    }
    #expect(recorder.statuses == [.new, .complete])
    #expect(recorder.errors.isEmpty, "UNIMPLEMENTED only switches to polling")
    let calls = transport.calls.withLock { $0 }
    #expect(calls.first?.hasPrefix("watch") == true)
    #expect(calls.dropFirst().allSatisfy { $0.hasPrefix("get") })
  }

  @Test func aStreamThatEndsEarlyIsReopened() async throws {
    // Each watch call delivers one state and ends: the model opens a new stream each time.
    let transport = ScriptedTransport([
      .trip(Self.wire(.new)), .trip(Self.wire(.enrouteToPickup)), .trip(Self.wire(.complete)),
    ])
    let recorder = try await follow(transport, tokens: ScriptedTokens(), transportKind: .push) {
      $0.statuses.last == .complete
    }
    #expect(recorder.statuses == [.new, .enrouteToPickup, .complete])
    #expect(recorder.errors.isEmpty)
    #expect(transport.calls.withLock { $0.count } == 3)
  }
}

@Suite struct ConsumerTokenTests {
  @Test func httpTokensAreFetchedPerTrip() async throws {
    let requested = Mutex<[String]>([])
    var configuration = HTTPTokenProvider.Configuration(
      url: URL(string: "https://auth.example.com/token/consumer/{trip_id}")!)
    configuration.expiryUnit = .secondsFromNow
    configuration.expiryKey = "expires_in"
    let provider = HTTPTokenProvider(
      configuration: configuration,
      fetch: { request in
        let url = request.url.absoluteString
        requested.withLock { $0.append(url) }
        return HTTPClient.Response(status: 200, body: Data(#"{"token": "t-\#(url.count)", "expires_in": 3600}"#.utf8))
      })
    let tokens: any AuthorizationTokenProvider = provider
    _ = try await tokens.token(for: AuthorizationContext.trip("ride 1"))
    _ = try await tokens.token(for: AuthorizationContext.trip("ride 1"))
    #expect(
      requested.withLock { $0 } == ["https://auth.example.com/token/consumer/ride%201"], "fetched once, then cached")
    await tokens.invalidateToken(for: AuthorizationContext.trip("ride 1"))
    _ = try await tokens.token(for: AuthorizationContext.trip("ride 1"))
    #expect(requested.withLock { $0.count } == 2, "a refused token is fetched again")
  }
}
