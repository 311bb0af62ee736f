import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Whom a token is for: a vehicle (the Driver SDK) or a trip (the Consumer SDK).
public enum TokenSubject: Sendable, Hashable, CustomStringConvertible {
  case vehicle(String)
  case trip(String)

  public var id: String {
    switch self {
    case .vehicle(let id), .trip(let id): id
    }
  }

  /// The URL placeholder the ID replaces.
  var placeholder: String {
    switch self {
    case .vehicle: "vehicle_id"
    case .trip: "trip_id"
    }
  }

  public var description: String {
    switch self {
    case .vehicle(let id): "vehicle '\(id)'"
    case .trip(let id): "trip '\(id)'"
    }
  }
}

/// Fetches tokens as JSON from the app's token server, as Fleet Engine's sample token servers
/// serve them: `GET {url}` with the vehicle ID in place of `{vehicle_id}` (the trip ID in place
/// of `{trip_id}`), or appended as the last path component, answering
/// `{"token": "…", "expiration_timestamp_ms": …}`. Both SDKs take it as their token provider.
///
/// A token is reused while it has at least `minimumRemainingLife` (5 minutes) left; asking for
/// another vehicle or trip drops the cached one; concurrent callers share one fetch.
public actor HTTPTokenProvider {
  public struct Configuration: Sendable {
    /// The token endpoint; `{vehicle_id}` / `{trip_id}` in it is replaced by the ID, else the
    /// ID is appended as a path component.
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
    var subject: TokenSubject
    var token: String
    var expiry: Date
  }

  public let configuration: Configuration
  let fetch: Fetch
  let now: @Sendable () -> Date
  var cached: Cached?
  var inFlight: (subject: TokenSubject, task: Task<Cached, any Error>)?

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

  /// A token for `subject`: the cached one while it lives long enough, else a fresh one.
  public func token(for subject: TokenSubject) async throws -> String {
    guard !subject.id.isEmpty else {
      throw TokenProviderError(.missingContext, "the authorization context has no \(subject.placeholder)")
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
  public func invalidateToken(for subject: TokenSubject) {
    if cached?.subject == subject { cached = nil }
  }

  func request(for subject: TokenSubject) throws -> URLRequest {
    let id = subject.id
    let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? id
    let text = configuration.url.absoluteString
    let placeholder = subject.placeholder
    let url: URL?
    if text.contains("%7B\(placeholder)%7D") || text.contains("{\(placeholder)}") {
      url = URL(
        string: text.replacingOccurrences(of: "%7B\(placeholder)%7D", with: escaped).replacingOccurrences(
          of: "{\(placeholder)}", with: escaped))
    } else {
      url = configuration.url.appendingPathComponent(id)
    }
    guard let url else {
      throw TokenProviderError(.missingContext, "cannot build a token URL for \(subject)")
    }
    var request = URLRequest(url: url)
    request.timeoutInterval = Double(configuration.timeout.components.seconds)
    for (name, value) in configuration.headers { request.setValue(value, forHTTPHeaderField: name) }
    return request
  }

  static func load(
    _ request: URLRequest, subject: TokenSubject, configuration: Configuration, fetch: Fetch, now: () -> Date
  ) async throws -> Cached {
    let data: Data
    let status: Int
    do { (data, status) = try await fetch(request) } catch {
      throw TokenProviderError(
        .unreachable, "token server \(request.url?.absoluteString ?? "?"): \(error.localizedDescription)")
    }
    guard (200..<300).contains(status) else {
      throw TokenProviderError(.httpStatus, "token server answered HTTP \(status) for \(subject)")
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
