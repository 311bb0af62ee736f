import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Fetches tokens as JSON from the app's token server, as Fleet Engine's sample token servers
/// serve them: `GET {url}` with the vehicle ID in place of `{vehicle_id}` (or appended as the
/// last path component), answering `{"token": "…", "expiration_timestamp_ms": …}`.
///
/// A token is reused while it has at least `minimumRemainingLife` (5 minutes) left; asking for
/// another vehicle drops the cached one; concurrent callers share one fetch.
public actor HTTPTokenProvider: AuthorizationTokenProvider {
  public struct Configuration: Sendable {
    /// The token endpoint; `{vehicle_id}` in it is replaced by the vehicle ID, else the ID is
    /// appended as a path component.
    public var url: URL
    /// JSON key of the token.
    public var tokenKey = "token"
    /// JSON key of the expiry; when the answer has none, the token's own `exp` claim is used.
    public var expiryKey = "expiration_timestamp_ms"
    public var expiryUnit = ExpiryUnit.millisecondsSince1970
    /// Extra headers for the token server (e.g. the app user's session).
    public var headers: [String: String] = [:]
    public var minimumRemainingLife: Duration = .seconds(300)
    public var timeout: Duration = .seconds(10)

    public init(url: URL) { self.url = url }
  }

  public enum ExpiryUnit: Sendable {
    case millisecondsSince1970
    case secondsSince1970
    /// Seconds from the moment of the answer (OAuth's `expires_in`).
    case secondsFromNow
  }

  /// Fetches the raw answer; URLSession by default, replaceable in tests.
  public typealias Fetch = @Sendable (URLRequest) async throws -> (Data, Int)

  struct Cached {
    var vehicleID: String
    var token: String
    var expiry: Date
  }

  public let configuration: Configuration
  let fetch: Fetch
  let now: @Sendable () -> Date
  var cached: Cached?
  var inFlight: (vehicleID: String, task: Task<Cached, any Error>)?

  public init(
    configuration: Configuration, now: @escaping @Sendable () -> Date = { Date() }, fetch: Fetch? = nil
  ) {
    self.configuration = configuration
    self.now = now
    self.fetch =
      fetch ?? { request in
        let (data, response) = try await URLSession.shared.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
      }
  }

  public init(url: URL) { self.init(configuration: Configuration(url: url)) }

  public func token(for context: AuthorizationContext) async throws -> String {
    guard !context.vehicleID.isEmpty else {
      throw TokenProviderError(.missingContext, "the authorization context has no vehicle ID")
    }
    if let cached, cached.vehicleID == context.vehicleID,
      cached.expiry.timeIntervalSince(now()) >= Double(configuration.minimumRemainingLife.components.seconds)
    {
      return cached.token
    }
    if cached?.vehicleID != context.vehicleID { cached = nil }
    if let inFlight, inFlight.vehicleID == context.vehicleID { return try await inFlight.task.value.token }
    // One fetch for every caller waiting on this vehicle; it is awaited right here and by any
    // caller that arrives meanwhile, so it never outlives them.
    let request = try request(for: context.vehicleID)
    let task = Task { [fetch, configuration, now] in
      try await Self.load(request, vehicleID: context.vehicleID, configuration: configuration, fetch: fetch, now: now)
    }
    inFlight = (context.vehicleID, task)
    defer { if inFlight?.vehicleID == context.vehicleID { inFlight = nil } }
    let fresh = try await task.value
    if fresh.vehicleID == context.vehicleID { cached = fresh }
    return fresh.token
  }

  public func invalidateToken(for context: AuthorizationContext) async {
    if cached?.vehicleID == context.vehicleID { cached = nil }
  }

  func request(for vehicleID: String) throws -> URLRequest {
    let escaped =
      vehicleID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? vehicleID
    let text = configuration.url.absoluteString
    let url: URL?
    if text.contains("%7Bvehicle_id%7D") || text.contains("{vehicle_id}") {
      url = URL(
        string: text.replacingOccurrences(of: "%7Bvehicle_id%7D", with: escaped).replacingOccurrences(
          of: "{vehicle_id}", with: escaped))
    } else {
      url = configuration.url.appendingPathComponent(vehicleID)
    }
    guard let url else {
      throw TokenProviderError(.missingContext, "cannot build a token URL for vehicle '\(vehicleID)'")
    }
    var request = URLRequest(url: url)
    request.timeoutInterval = Double(configuration.timeout.components.seconds)
    for (name, value) in configuration.headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
  }

  static func load(
    _ request: URLRequest, vehicleID: String, configuration: Configuration, fetch: Fetch, now: () -> Date
  ) async throws -> Cached {
    let data: Data
    let status: Int
    do { (data, status) = try await fetch(request) } catch {
      throw TokenProviderError(
        .unreachable, "token server \(request.url?.absoluteString ?? "?"): \(error.localizedDescription)")
    }
    guard (200..<300).contains(status) else {
      throw TokenProviderError(.httpStatus, "token server answered HTTP \(status) for vehicle '\(vehicleID)'")
    }
    guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
      throw TokenProviderError(.malformedResponse, "the token server's answer is not a JSON object")
    }
    guard let token = object[configuration.tokenKey] as? String, !token.isEmpty else {
      throw TokenProviderError(
        .malformedResponse, "the token server's answer has no string '\(configuration.tokenKey)'")
    }
    let expiry: Date
    if let raw = object[configuration.expiryKey] {
      guard let number = (raw as? NSNumber)?.doubleValue ?? (raw as? String).flatMap(Double.init) else {
        throw TokenProviderError(
          .malformedResponse, "'\(configuration.expiryKey)' in the token server's answer is not a number")
      }
      switch configuration.expiryUnit {
      case .millisecondsSince1970: expiry = Date(timeIntervalSince1970: number / 1000)
      case .secondsSince1970: expiry = Date(timeIntervalSince1970: number)
      case .secondsFromNow: expiry = now().addingTimeInterval(number)
      }
    } else if let exp = JWTClaims.expiry(of: token) {
      expiry = exp
    } else {
      throw TokenProviderError(
        .malformedResponse, "the token server's answer has no '\(configuration.expiryKey)' and the token no 'exp' claim"
      )
    }
    return Cached(vehicleID: vehicleID, token: token, expiry: expiry)
  }
}

/// Reads a JWT's claims without verifying it (the server verifies; the client only needs to
/// know when to refresh).
enum JWTClaims {
  static func expiry(of token: String) -> Date? {
    let parts = token.split(separator: ".")
    guard parts.count == 3 else { return nil }
    var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    guard let data = Data(base64Encoded: base64),
      let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
      let exp = (claims["exp"] as? NSNumber)?.doubleValue
    else { return nil }
    return Date(timeIntervalSince1970: exp)
  }
}
