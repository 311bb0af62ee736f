import FleetClient
import FleetRideStatus
import Foundation
import Synchronization

/// fleetd's ride-status endpoints as a `RideStatusSource`, with the rider's trip token:
/// `GET /fleetkit/v1/providers/{p}/trips/{t}:rideStatus` for each poll, and
/// `GET …:watchRideStatus` (server-sent events) for the pushes, reopened with backoff whenever
/// it drops, until the ride has ended. Refusals are `FleetClientError`s.
public struct FleetdRideStatusSource: RideStatusSource {
  public struct Configuration: Sendable {
    /// fleetd's HTTP address, e.g. `http://127.0.0.1:8080`.
    public var baseURL: URL
    public var providerID: String
    /// The trip a ride identifier names; by default the identifier is the trip ID.
    public var tripID: @Sendable (_ rideIdentifier: String) -> String = { $0 }
    /// How long a poll, or opening the event stream, may take.
    public var requestTimeout: Duration = .seconds(10)
    /// The wait before reopening a dropped event stream.
    public var reconnectBackoff = RetryBackoff(initial: .seconds(1), maximum: .seconds(30))

    public init(baseURL: URL, providerID: String) {
      self.baseURL = baseURL
      self.providerID = providerID
    }
  }

  public let configuration: Configuration
  let tokens: any AuthorizationTokenProvider
  let http = HTTPClient()

  public init(configuration: Configuration, tokenProvider: any AuthorizationTokenProvider) {
    self.configuration = configuration
    self.tokens = tokenProvider
  }

  public func status(rideIdentifier: String) async throws -> RideStatus {
    let tripID = configuration.tripID(rideIdentifier)
    let context = AuthorizationContext.trip(tripID)
    let token = try await tokens.token(for: context)
    let response = try await http.send(
      HTTPClient.Request(
        url: try url(tripID, method: "rideStatus", rideIdentifier: rideIdentifier),
        headers: [("Authorization", "Bearer \(token)")], timeout: configuration.requestTimeout))
    guard response.status == 200 else {
      if response.status == 401 { await tokens.invalidateToken(for: context) }
      throw FleetClientError(response)
    }
    return try RideStatusJSON.decode(response.body)
  }

  public func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async {
    let tripID = configuration.tripID(rideIdentifier)
    let context = AuthorizationContext.trip(tripID)
    var failures = 0
    while !Task.isCancelled {
      let ended = Mutex(false)
      let received = Mutex(false)
      do {
        let url = try url(tripID, method: "watchRideStatus", rideIdentifier: rideIdentifier)
        let token = try await tokens.token(for: context)
        let parser = Mutex(ServerSentEventParser())
        let refusal = Mutex<FleetClientError?>(nil)
        let answer = try await http.stream(
          HTTPClient.Request(
            url: url, headers: [("Authorization", "Bearer \(token)"), ("Accept", "text/event-stream")],
            timeout: configuration.requestTimeout)
        ) { buffer in
          for event in parser.withLock({ $0.feed(buffer.readableBytesView) }) {
            switch event.name {
            case "rideStatus":
              guard let status = try? RideStatusJSON.decode(Data(event.data.utf8)) else { continue }
              received.withLock { $0 = true }
              if status.phase == .completed { ended.withLock { $0 = true } }
              onChange(status)
            case "error":
              refusal.withLock {
                $0 = FleetClientError(HTTPClient.Response(status: 200, body: Data(event.data.utf8)))
              }
            default:
              continue
            }
          }
        }
        if answer.status == 401 || refusal.withLock({ $0?.code }) == .unauthenticated {
          await tokens.invalidateToken(for: context)
        }
      } catch {
        // Unreachable or dropped: reopened below, while the polls report the failure.
      }
      if received.withLock({ $0 }) { failures = 0 }
      // fleetd ends the stream after the completed status: nothing more will come.
      if ended.withLock({ $0 }) || Task.isCancelled { return }
      failures += 1
      let delay = configuration.reconnectBackoff.delay(afterFailures: failures, jitter: .random(in: 0...1))
      try? await Task.sleep(for: delay)
    }
  }

  /// `{base}/fleetkit/v1/providers/{p}/trips/{t}:{method}?ride_identifier={id}`.
  func url(_ tripID: String, method: String, rideIdentifier: String) throws -> URL {
    let segment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/:?#"))
    let query = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
    var base = configuration.baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let provider = configuration.providerID.addingPercentEncoding(withAllowedCharacters: segment),
      let trip = tripID.addingPercentEncoding(withAllowedCharacters: segment),
      let ride = rideIdentifier.addingPercentEncoding(withAllowedCharacters: query),
      let url = URL(
        string: "\(base)/fleetkit/v1/providers/\(provider)/trips/\(trip):\(method)?ride_identifier=\(ride)")
    else { throw URLError(.badURL) }
    return url
  }
}
