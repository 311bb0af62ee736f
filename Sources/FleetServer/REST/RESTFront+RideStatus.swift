import FleetCore
import FleetProto
import FleetRideStatus
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// A ride status as fleetd's JSON body.
func rideStatusBody(_ status: RideStatus) throws(FleetError) -> Data {
  do {
    return try RideStatusJSON.encode(status)
  } catch {
    throw FleetError(.internal, "the ride status cannot be encoded: \(error)")
  }
}

extension RESTFront {
  /// `GET /fleetkit/v1/providers/{p}/trips/{t}:watchRideStatus`: server-sent events, one `rideStatus`
  /// event per change of the trip's ride status (the first at once), with WatchTrip's
  /// authorization; the stream ends after the completed status. A change that would make an
  /// invalid status is skipped, never sent.
  func watchRideStatus(_ name: String, _ request: Request, requestID: String) async throws(FleetError) -> Response {
    let query = Self.query(of: request)
    let token = query.first { $0.0 == "access_token" }.map { "Bearer \($0.1)" }
    let identifier = query.first { $0.0 == "ride_identifier" || $0.0 == "rideIdentifier" }?.1
    let (watch, caller) = try await gate.run(
      .watchTrip, transport: "rest", authorization: request.headers[.authorization] ?? token, requestID: requestID,
      timeout: nil
    ) { [rpcs] caller throws(FleetError) in
      var r = Fleetkit_V1_WatchTripRequest()
      r.name = name
      return (try rpcs.watchTrip(r, caller).watch, caller)
    }
    let rpcs = rpcs
    // Each change is re-read in full (the rider's view hides what the status needs); an
    // unchanged or invalid status is not sent.
    let last = LastRideStatus()
    return Self.serverSentEvents(watch, requestID: requestID) { _ in
      guard let status = try? rpcs.rideStatus(name: name, rideIdentifier: identifier, caller),
        last.replace(with: status)
      else { return nil }
      return ("rideStatus", try rideStatusBody(status))
    }
  }
}

/// The last ride status a stream sent.
final class LastRideStatus: Sendable {
  let value = Mutex<RideStatus?>(nil)

  /// Whether `status` differs from the last one sent; it becomes the last one.
  func replace(with status: RideStatus) -> Bool {
    value.withLock { last in
      guard last != status else { return false }
      last = status
      return true
    }
  }
}
