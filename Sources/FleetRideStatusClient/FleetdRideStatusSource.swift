import FleetClient
import FleetConsumer
import FleetCore
import FleetRideStatus
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// fleetd's ride-status endpoints as a `RideStatusSource`, with the rider's trip token:
/// `GET /v1/providers/{p}/trips/{t}:rideStatus` for each poll, and
/// `GET …:watchRideStatus` (server-sent events) for the pushes, reopened with backoff whenever
/// it drops, until the ride has ended.
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
  let tokens: any TripTokenProvider
  let session: URLSession

  public init(configuration: Configuration, tokenProvider: any TripTokenProvider, session: URLSession = .shared) {
    self.configuration = configuration
    self.tokens = tokenProvider
    self.session = session
  }

  public func status(rideIdentifier: String) async throws -> RideStatus {
    let tripID = configuration.tripID(rideIdentifier)
    let context = TripAuthorizationContext(tripID: tripID)
    let token = try await tokens.token(for: context)
    var request = URLRequest(url: try url(tripID, method: "rideStatus", rideIdentifier: rideIdentifier))
    request.timeoutInterval = configuration.requestTimeout.seconds
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    let (data, response) = try await session.data(for: request)
    let code = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard code == 200 else {
      if code == 401 { await tokens.invalidateToken(for: context) }
      throw RideStatusRequestError(httpStatus: code, body: data)
    }
    return try RideStatusJSON.decode(data)
  }

  public func watch(rideIdentifier: String, onChange: @escaping @Sendable (RideStatus) -> Void) async {
    let tripID = configuration.tripID(rideIdentifier)
    let context = TripAuthorizationContext(tripID: tripID)
    var failures = 0
    while !Task.isCancelled {
      var ended = false
      do {
        let url = try url(tripID, method: "watchRideStatus", rideIdentifier: rideIdentifier)
        let token = try await tokens.token(for: context)
        var parser = ServerSentEventParser()
        var refusal: RideStatusRequestError?
        let answer = try await StreamingGet.get(
          url, headers: [("Authorization", "Bearer \(token)"), ("Accept", "text/event-stream")],
          connectTimeout: configuration.requestTimeout
        ) { buffer in
          for event in parser.feed(buffer.readableBytesView) {
            switch event.name {
            case "rideStatus":
              guard let status = try? RideStatusJSON.decode(Data(event.data.utf8)) else { continue }
              failures = 0
              ended = ended || status.phase == .completed
              onChange(status)
            case "error":
              refusal = RideStatusRequestError(httpStatus: 200, body: Data(event.data.utf8))
            default:
              continue
            }
          }
        }
        if answer.status == 401 || refusal?.status == "UNAUTHENTICATED" {
          await tokens.invalidateToken(for: context)
        }
      } catch {
        // Unreachable or dropped: reopened below, while the polls report the failure.
      }
      // fleetd ends the stream after the completed status: nothing more will come.
      if ended || Task.isCancelled { return }
      failures += 1
      let delay = configuration.reconnectBackoff.delay(afterFailures: failures, jitter: .random(in: 0...1))
      try? await Task.sleep(for: delay)
    }
  }

  /// `{base}/v1/providers/{p}/trips/{t}:{method}?ride_identifier={id}`.
  func url(_ tripID: String, method: String, rideIdentifier: String) throws -> URL {
    let segment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/:?#"))
    let query = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
    var base = configuration.baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    guard let provider = configuration.providerID.addingPercentEncoding(withAllowedCharacters: segment),
      let trip = tripID.addingPercentEncoding(withAllowedCharacters: segment),
      let ride = rideIdentifier.addingPercentEncoding(withAllowedCharacters: query),
      let url = URL(string: "\(base)/v1/providers/\(provider)/trips/\(trip):\(method)?ride_identifier=\(ride)")
    else { throw URLError(.badURL) }
    return url
  }
}

/// fleetd refused a ride-status request: its HTTP status and Google's error body.
public struct RideStatusRequestError: Error, Sendable, Hashable, CustomStringConvertible {
  public var httpStatus: Int
  /// Google's status name: PERMISSION_DENIED, NOT_FOUND, FAILED_PRECONDITION…
  public var status: String
  public var message: String

  public init(httpStatus: Int, status: String, message: String) {
    self.httpStatus = httpStatus
    self.status = status
    self.message = message
  }

  /// From `{"error":{"code":…,"message":…,"status":…}}`; a body in another shape is the message.
  init(httpStatus: Int, body: Data) {
    let error = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any]
    self.init(
      httpStatus: httpStatus, status: error?["status"] as? String ?? "UNKNOWN",
      message: error?["message"] as? String ?? String(decoding: body.prefix(500), as: UTF8.self))
  }

  public var description: String { "\(status) (HTTP \(httpStatus)): \(message)" }
}
