import Foundation

/// Fetches tokens as JSON from the app's token server, as Fleet Engine's sample token servers
/// serve them: `GET {url}` with the vehicle ID in place of `{vehicle_id}` (the trip's, the delivery
/// vehicle's or the task's ID in place of `{trip_id}`, `{delivery_vehicle_id}`, `{task_id}`), or appended as the last path component, answering
/// `{"token": "…", "expiration_timestamp_ms": …}`. Every client library takes it as its token
/// provider.
///
/// A token is reused while it has at least `minimumRemainingLife` (5 minutes) left; asking for
/// another vehicle or trip drops the cached one; concurrent callers share one fetch.
public actor HTTPTokenProvider: AuthorizationTokenProvider {
  public struct Configuration: Sendable {
    /// The token endpoint; `{vehicle_id}`, `{trip_id}`, `{delivery_vehicle_id}` or `{task_id}`
    /// in it is replaced by the ID, else the ID is appended as a path component.
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

  /// Fetches the raw answer; `HTTPClient` by default, replaceable in tests.
  public typealias Fetch = @Sendable (HTTPClient.Request) async throws -> HTTPClient.Response

  struct Cached {
    var subject: AuthorizationContext
    var token: String
    var expiry: Date
  }

  public let configuration: Configuration
  let fetch: Fetch
  let now: @Sendable () -> Date
  var cached: Cached?
  var inFlight: (subject: AuthorizationContext, task: Task<Cached, any Error>)?

  public init(
    configuration: Configuration, now: @escaping @Sendable () -> Date = { Date() }, fetch: Fetch? = nil
  ) {
    self.configuration = configuration
    self.now = now
    self.fetch = fetch ?? { request in try await HTTPClient().send(request) }
  }

  public init(url: URL) { self.init(configuration: Configuration(url: url)) }

  /// A token for `subject`: the cached one while it lives long enough, else a fresh one.
  public func token(for subject: AuthorizationContext) async throws -> String {
    guard !subject.id.isEmpty else {
      throw FleetClientError(.invalidArgument, "the authorization context has no \(Self.placeholder(subject))")
    }
    if let cached, cached.subject == subject,
      cached.expiry.timeIntervalSince(now()) >= Double(configuration.minimumRemainingLife.components.seconds)
    {
      return cached.token
    }
    if cached?.subject != subject { cached = nil }
    if let inFlight, inFlight.subject == subject { return try await inFlight.task.value.token }
    // One fetch for every caller waiting on this subject; it is awaited right here and by any
    // caller that arrives meanwhile, so it never outlives them.
    let request = try request(for: subject)
    let task = Task { [fetch, configuration, now] in
      try await Self.load(request, subject: subject, configuration: configuration, fetch: fetch, now: now)
    }
    inFlight = (subject, task)
    defer { if inFlight?.subject == subject { inFlight = nil } }
    let fresh = try await task.value
    if fresh.subject == subject { cached = fresh }
    return fresh.token
  }

  /// Forgets the token of `subject` (the server refused it).
  public func invalidateToken(for subject: AuthorizationContext) async {
    if cached?.subject == subject { cached = nil }
  }

  /// The URL placeholder a context's ID replaces.
  static func placeholder(_ subject: AuthorizationContext) -> String {
    switch subject {
    case .vehicle: "vehicle_id"
    case .trip: "trip_id"
    case .deliveryVehicle: "delivery_vehicle_id"
    case .task: "task_id"
    }
  }

  func request(for subject: AuthorizationContext) throws -> HTTPClient.Request {
    let id = subject.id
    let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id
    let text = configuration.url.absoluteString
    let placeholder = Self.placeholder(subject)
    let url: URL?
    if text.contains("%7B\(placeholder)%7D") || text.contains("{\(placeholder)}") {
      url = URL(
        string: text.replacingOccurrences(of: "%7B\(placeholder)%7D", with: escaped).replacingOccurrences(
          of: "{\(placeholder)}", with: escaped))
    } else {
      url = configuration.url.appendingPathComponent(id)
    }
    guard let url else {
      throw FleetClientError(.invalidArgument, "cannot build a token URL for \(subject)")
    }
    return HTTPClient.Request(
      url: url, headers: configuration.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
      timeout: configuration.timeout)
  }

  static func load(
    _ request: HTTPClient.Request, subject: AuthorizationContext, configuration: Configuration, fetch: Fetch,
    now: () -> Date
  ) async throws -> Cached {
    let response: HTTPClient.Response
    do { response = try await fetch(request) } catch {
      let cause = FleetClientError(error)
      throw FleetClientError(
        cause.code == .unknown ? .unavailable : cause.code,
        "token server \(request.url.absoluteString): \(cause.message)")
    }
    guard (200..<300).contains(response.status) else {
      var refused = FleetClientError(response)
      refused.message = "token server answered HTTP \(response.status) for \(subject): \(refused.message)"
      throw refused
    }
    guard let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] else {
      throw FleetClientError(.internalError, "the token server's answer is not a JSON object")
    }
    guard let token = object[configuration.tokenKey] as? String, !token.isEmpty else {
      throw FleetClientError(.internalError, "the token server's answer has no string '\(configuration.tokenKey)'")
    }
    let expiry: Date
    if let raw = object[configuration.expiryKey] {
      guard let number = (raw as? NSNumber)?.doubleValue ?? (raw as? String).flatMap(Double.init) else {
        throw FleetClientError(
          .internalError, "'\(configuration.expiryKey)' in the token server's answer is not a number")
      }
      switch configuration.expiryUnit {
      case .millisecondsSince1970: expiry = Date(timeIntervalSince1970: number / 1000)
      case .secondsSince1970: expiry = Date(timeIntervalSince1970: number)
      case .secondsFromNow: expiry = now().addingTimeInterval(number)
      }
    } else if let exp = JWTClaims.expiry(of: token) {
      expiry = exp
    } else {
      throw FleetClientError(
        .internalError, "the token server's answer has no '\(configuration.expiryKey)' and the token no 'exp' claim")
    }
    return Cached(subject: subject, token: token, expiry: expiry)
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
