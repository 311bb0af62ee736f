import FleetClient
import FleetGeometry
import FleetPlaces
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Why a geo request failed.
public struct GeoServiceError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable, Hashable {
    /// The key is missing, unknown or revoked (401/403). Retrying cannot help.
    case invalidKey
    /// The key's per-minute or per-day quota is used up (429); `retryAfter` says when it
    /// refills. Reported at once: the app decides whether to wait.
    case quotaExhausted
    /// The request itself is wrong (400), e.g. a latitude off the globe.
    case invalidArgument
    /// Nothing is known there (404), or the city has no places.
    case notFound
    /// fleetd cannot answer this kind of request as configured (no geocoding data loaded).
    case failedPrecondition
    /// fleetd could not be reached, after every retry.
    case networkFailure
    /// fleetd answered with another error.
    case serverError
  }

  public var code: Code
  public var message: String
  /// The HTTP status fleetd answered with; nil for network failures.
  public var httpStatus: Int?
  public var retryAfter: Duration?

  public init(_ code: Code, _ message: String, httpStatus: Int? = nil, retryAfter: Duration? = nil) {
    self.code = code
    self.message = message
    self.httpStatus = httpStatus
    self.retryAfter = retryAfter
  }

  public var description: String { "\(code.rawValue): \(message)" }
}

/// fleetd's geo endpoints for apps: reverse geocoding and place search with the app's API key.
/// Make one at start-up with the key (`fleetd apikeys add`), `register()` it, and hand it to the
/// location service as its geocoder.
///
/// Only network failures — no answer at all — are retried, with exponential backoff and
/// jitter. Every answer from fleetd is final: an invalid key or an exhausted quota is reported
/// at once, since asking again cannot change it.
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
  let session: URLSession
  let sleep: @Sendable (Duration) async throws -> Void

  /// `baseURL` is fleetd's HTTP address, e.g. `http://127.0.0.1:8080`.
  public init(
    baseURL: URL, apiKey: String, configuration: Configuration = Configuration(), session: URLSession = .shared,
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.baseURL = baseURL
    self.apiKey = apiKey
    self.configuration = configuration
    self.session = session
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
  /// reported then (as `invalidKey`, at once) rather than at the first lookup. It counts as one
  /// request against the key's quotas.
  public func register() async throws -> RegisteredKey { try await get("v1/apiKey", []) }

  public func reverseGeocode(_ coordinate: LatLng) async throws -> Address {
    try await get(
      "v1/geo:reverse",
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
    return try await get("v1/places:search", query)
  }

  func get<Answer: Decodable>(_ path: String, _ query: [URLQueryItem]) async throws -> Answer {
    guard var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
    else { throw GeoServiceError(.invalidArgument, "the base URL '\(baseURL)' cannot take a path") }
    components.queryItems = query
    guard let url = components.url else { throw GeoServiceError(.invalidArgument, "the request URL cannot be formed") }
    var request = URLRequest(url: url)
    request.setValue(apiKey, forHTTPHeaderField: "X-Goog-Api-Key")
    request.timeoutInterval = configuration.timeout / .seconds(1)

    var attempt = 0
    while true {
      attempt += 1
      let data: Data
      let response: URLResponse
      do {
        (data, response) = try await session.data(for: request)
      } catch let error where Self.isNetworkFailure(error) {
        guard attempt < configuration.maximumAttempts else {
          throw GeoServiceError(
            .networkFailure,
            "fleetd at \(baseURL) cannot be reached after \(attempt) tries: \(error.localizedDescription)")
        }
        try await sleep(configuration.backoff.delay(afterFailures: attempt, jitter: Double.random(in: 0...1)))
        continue
      }
      guard let http = response as? HTTPURLResponse else {
        throw GeoServiceError(.serverError, "fleetd's answer is not HTTP")
      }
      guard http.statusCode == 200 else { throw Self.error(status: http.statusCode, data: data, response: http) }
      do {
        return try JSONDecoder().decode(Answer.self, from: data)
      } catch {
        throw GeoServiceError(.serverError, "fleetd's answer does not decode: \(error)", httpStatus: 200)
      }
    }
  }

  /// No answer at all: refused, reset, timed out, unresolvable. Cancellation is not a failure.
  static func isNetworkFailure(_ error: any Error) -> Bool {
    guard let urlError = error as? URLError else { return false }
    switch urlError.code {
    case .cancelled, .badURL, .unsupportedURL, .userAuthenticationRequired: return false
    default: return true
    }
  }

  /// Google's error body `{"error": {"code", "message", "status"}}` as a typed error.
  static func error(status: Int, data: Data, response: HTTPURLResponse) -> GeoServiceError {
    struct Body: Decodable {
      struct Detail: Decodable {
        var message: String
        var status: String?
      }
      var error: Detail
    }
    let body = try? JSONDecoder().decode(Body.self, from: data)
    let message = body?.error.message ?? "HTTP \(status)"
    let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int64.init).map { Duration.seconds($0) }
    // Google's status names say more than the HTTP status (400 covers several of them).
    let code: GeoServiceError.Code =
      switch (body?.error.status, status) {
      case ("UNAUTHENTICATED", _), ("PERMISSION_DENIED", _), (nil, 401), (nil, 403): .invalidKey
      case ("RESOURCE_EXHAUSTED", _), (nil, 429): .quotaExhausted
      case ("INVALID_ARGUMENT", _), (nil, 400): .invalidArgument
      case ("NOT_FOUND", _), (nil, 404): .notFound
      case ("FAILED_PRECONDITION", _): .failedPrecondition
      default: .serverError
      }
    return GeoServiceError(code, message, httpStatus: status, retryAfter: retryAfter)
  }
}
