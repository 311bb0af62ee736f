import FleetProto
import GRPCCore
import GRPCNIOTransportHTTP2

/// The two ways to read a trip from fleetd, as plain functions so that the tracking logic does
/// not depend on a connection (and can be driven by a fake in unit tests).
struct TripTransport: Sendable {
  /// GetTrip in the JOURNEY_SHARING_V1S view.
  var getTrip: @Sendable (_ name: String, _ token: String) async throws -> Maps_Fleetengine_V1_Trip
  /// WatchTrip: calls `onTrip` for each state until the stream ends (returns) or fails (throws).
  var watchTrip:
    @Sendable (
      _ name: String, _ token: String, _ onTrip: @escaping @Sendable (Maps_Fleetengine_V1_Trip) async -> Void
    ) async throws -> Void
}

extension TripTransport {
  init(client: GRPCClient<HTTP2ClientTransport.Posix>, configuration: ConsumerConfiguration) {
    let trips = Maps_Fleetengine_V1_TripService.Client(wrapping: client)
    let updates = Fleetkit_V1_TripUpdates.Client(wrapping: client)
    let callTimeout = configuration.callTimeout
    let streamLifetime = configuration.pushStreamLifetime
    getTrip = { name, token in
      var request = Maps_Fleetengine_V1_GetTripRequest()
      request.name = name
      request.view = .journeySharingV1S
      var options = CallOptions.defaults
      options.timeout = callTimeout
      return try await trips.getTrip(request, metadata: ["authorization": "Bearer \(token)"], options: options)
    }
    watchTrip = { name, token, onTrip in
      var request = Fleetkit_V1_WatchTripRequest()
      request.name = name
      request.view = .journeySharingV1S
      // The paths encoded only (fewer bytes to send and decode); TripInfo reads them.
      request.routeFormatType = .encodedPolylineType
      var options = CallOptions.defaults
      options.timeout = streamLifetime
      try await updates.watchTrip(request, metadata: ["authorization": "Bearer \(token)"], options: options) {
        response in
        for try await trip in response.messages { await onTrip(trip) }
      }
    }
  }
}
