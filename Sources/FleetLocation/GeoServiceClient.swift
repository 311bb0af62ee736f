import FleetClient
import FleetGeometry
import FleetPlaces
import Foundation

/// fleetd's geo endpoints for apps: reverse geocoding and place search with the app's API key.
/// Make one at start-up with the key (`fleetd apikeys add`), `register()` it, and hand it to the
/// location service as its geocoder.
///
/// Only network failures — no answer at all — are retried, with exponential backoff and
/// jitter. Every answer from fleetd is final: an invalid key (UNAUTHENTICATED or
/// PERMISSION_DENIED) or an exhausted quota (RESOURCE_EXHAUSTED, with `retryAfter`) is reported
/// at once, since asking again cannot change it. Errors are `FleetClientError`s.
public final class GeoServiceClient: ReverseGeocoding, Sendable {
  public struct Configuration: Sendable {
    public var backoff: RetryBackoff
    /// Tries per call, the first included.
    public var maximumAttempts: Int
    /// Per try.
    public var timeout: Duration

    public init(
      backoff: RetryBackoff = RetryBackoff(initial: .milliseconds(500), maximum: .seconds(10)),
      maximumAttempts: Int = 5, timeout: Duration = .seconds(10)
    ) {
      self.backoff = backoff
      self.maximumAttempts = max(1, maximumAttempts)
      self.timeout = timeout
    }
  }

  public let baseURL: URL
  let apiKey: String
  let configuration: Configuration
  let http = HTTPClient()
  let sleep: @Sendable (Duration) async throws -> Void

  /// `baseURL` is fleetd's HTTP address, e.g. `http://127.0.0.1:8080`.
  public init(
    baseURL: URL, apiKey: String, configuration: Configuration = Configuration(),
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.baseURL = baseURL
    self.apiKey = apiKey
    self.configuration = configuration
    self.sleep = sleep
  }

  /// What fleetd knows of this client's key.
  public struct RegisteredKey: Sendable, Hashable, Codable {
    public var id: String
    public var app: String
    public var perMinute: Int
    public var perDay: Int
  }

  /// Checks the key with fleetd; call it early at start-up, so that a wrong or revoked key is
  /// reported then (UNAUTHENTICATED or PERMISSION_DENIED, at once) rather than at the first
  /// lookup. It counts as one request against the key's quotas.
  public func register() async throws -> RegisteredKey { try await get("fleetkit/v1/apiKey", []) }

  public func reverseGeocode(_ coordinate: LatLng) async throws -> Address {
    try await get(
      "fleetkit/v1/geo:reverse",
      [
        URLQueryItem(name: "lat", value: "\(coordinate.latitude)"),
        URLQueryItem(name: "lng", value: "\(coordinate.longitude)"),
      ])
  }

  public func searchPlaces(_ search: PlaceSearch) async throws -> PlacePage {
    var query = [
      URLQueryItem(name: "q", value: search.keyword), URLQueryItem(name: "page_size", value: "\(search.pageSize)"),
    ]
    if let city = search.city { query.append(URLQueryItem(name: "city", value: city)) }
    if let near = search.near { query.append(URLQueryItem(name: "near", value: "\(near.latitude),\(near.longitude)")) }
    if let token = search.pageToken { query.append(URLQueryItem(name: "page_token", value: token)) }
    return try await get("fleetkit/v1/places:search", query)
  }

  func get<Answer: Decodable>(_ path: String, _ query: [URLQueryItem]) async throws -> Answer {
    guard var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
    else { throw FleetClientError(.invalidArgument, "the base URL '\(baseURL)' cannot take a path") }
    components.queryItems = query
    guard let url = components.url else {
      throw FleetClientError(.invalidArgument, "the request URL cannot be formed")
    }
    let request = HTTPClient.Request(url: url, headers: [("X-Goog-Api-Key", apiKey)], timeout: configuration.timeout)
    var attempt = 0
    while true {
      attempt += 1
      let response: HTTPClient.Response
      do {
        response = try await http.send(request)
      } catch let error as FleetClientError where error.code == .unavailable || error.code == .deadlineExceeded {
        // No answer at all: refused, reset, timed out, unresolvable.
        guard attempt < configuration.maximumAttempts else {
          throw FleetClientError(
            .unavailable, "fleetd at \(baseURL) cannot be reached after \(attempt) tries: \(error.message)")
        }
        try await sleep(configuration.backoff.delay(afterFailures: attempt, jitter: Double.random(in: 0...1)))
        continue
      }
      guard response.status == 200 else { throw FleetClientError(response) }
      do {
        return try JSONDecoder().decode(Answer.self, from: response.body)
      } catch {
        throw FleetClientError(.internalError, "fleetd's answer does not decode: \(error)", httpStatus: 200)
      }
    }
  }
}
