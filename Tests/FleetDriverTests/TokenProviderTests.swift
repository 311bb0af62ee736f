import FleetDriver
import FleetTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

/// A token server on loopback, as an app's backend would run one: GET /token/{vehicle} answers
/// `{"token": …, "expiration_timestamp_ms": …}` (or what the test sets), counting requests.
final class TokenServer: Sendable {
  struct Reply: Sendable {
    var status: HTTPResponse.Status = .ok
    var body: @Sendable (_ vehicle: String, _ serial: Int) -> String
  }

  let requests = Mutex<[String]>([])
  let reply: Mutex<Reply>
  let delay: Duration

  init(delay: Duration = .zero, body: @escaping @Sendable (String, Int) -> String) {
    self.delay = delay
    reply = Mutex(Reply(body: body))
  }

  var count: Int { requests.withLock { $0.count } }

  func run(_ body: (URL) async throws -> Void) async throws {
    let router = Router()
    router.get("/token/:vehicle") { [self] _, context -> Response in
      let vehicle = context.parameters.get("vehicle") ?? ""
      let serial = requests.withLock {
        $0.append(vehicle)
        return $0.count
      }
      if delay > .zero { try await Task.sleep(for: delay) }
      let reply = reply.withLock { $0 }
      return Response(status: reply.status, body: .init(byteBuffer: ByteBuffer(string: reply.body(vehicle, serial))))
    }
    let port = Mutex(0)
    let ready = AsyncStream<Void>.makeStream()
    var logger = Logger(label: "token-server")
    logger.logLevel = .critical
    let app = Application(
      router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
      onServerRunning: { channel in
        port.withLock { $0 = channel.localAddress?.port ?? 0 }
        ready.continuation.yield()
      }, logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { try await app.runService(gracefulShutdownSignals: []) }
      for await _ in ready.stream { break }
      do {
        try await body(URL(string: "http://127.0.0.1:\(port.withLock { $0 })/token")!)
      } catch {
        group.cancelAll()
        throw error
      }
      group.cancelAll()
    }
  }
}

@Suite("HTTP token provider")
struct TokenProviderTests {
  /// The in-process token server shares two cores with every other test in the process, which
  /// can keep it from answering for longer than the 10 s default while they start: a request
  /// that timed out here would say nothing about the provider.
  static func loopback(_ url: URL) -> HTTPTokenProvider.Configuration {
    var configuration = HTTPTokenProvider.Configuration(url: url)
    configuration.timeout = .seconds(60)
    return configuration
  }

  static func answer(expiresAt: Date) -> @Sendable (String, Int) -> String {
    { vehicle, serial in
      #"{"token": "token-\#(vehicle)-\#(serial)", "expiration_timestamp_ms": \#(Int64(expiresAt.timeIntervalSince1970 * 1000))}"#
    }
  }

  @Test func cachesPerVehicleAndRefreshesWithFiveMinutesLeft() async throws {
    let time = TestTime()
    let server = TokenServer(body: Self.answer(expiresAt: time.now.addingTimeInterval(3600)))
    try await server.run { url in
      let provider = HTTPTokenProvider(configuration: Self.loopback(url), now: { time.now })
      let first = try await provider.token(for: AuthorizationContext.vehicle("v1"))
      #expect(first == "token-v1-1")
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v1")) == first)
      #expect(server.count == 1, "cached")
      // 54 minutes on: 6 minutes of life left, still cached.
      time.advance(54 * 60)
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v1")) == first)
      // 56 minutes on: under 5 minutes left, fetched again.
      time.advance(2 * 60)
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v1")) == "token-v1-2")
      #expect(server.count == 2)
    }
  }

  @Test func anotherVehicleClearsTheCache() async throws {
    let time = TestTime()
    let server = TokenServer(body: Self.answer(expiresAt: time.now.addingTimeInterval(3600)))
    try await server.run { url in
      let provider = HTTPTokenProvider(configuration: Self.loopback(url), now: { time.now })
      _ = try await provider.token(for: AuthorizationContext.vehicle("v1"))
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v2")) == "token-v2-2")
      #expect(
        try await provider.token(for: AuthorizationContext.vehicle("v1")) == "token-v1-3", "v1's token was dropped")
      #expect(server.requests.withLock { $0 } == ["v1", "v2", "v1"])
    }
  }

  @Test func concurrentCallersShareOneFetch() async throws {
    let time = TestTime()
    let server = TokenServer(delay: .milliseconds(300), body: Self.answer(expiresAt: time.now.addingTimeInterval(3600)))
    try await server.run { url in
      let provider = HTTPTokenProvider(configuration: Self.loopback(url), now: { time.now })
      let tokens = try await withThrowingTaskGroup(of: String.self) { group in
        for _ in 0..<20 { group.addTask { try await provider.token(for: AuthorizationContext.vehicle("v1")) } }
        return try await group.reduce(into: [String]()) { $0.append($1) }
      }
      #expect(Set(tokens) == ["token-v1-1"])
      #expect(server.count == 1)
    }
  }

  @Test func invalidatingAfterUnauthenticatedFetchesAgain() async throws {
    let time = TestTime()
    let server = TokenServer(body: Self.answer(expiresAt: time.now.addingTimeInterval(3600)))
    try await server.run { url in
      let provider = HTTPTokenProvider(configuration: Self.loopback(url), now: { time.now })
      _ = try await provider.token(for: AuthorizationContext.vehicle("v1"))
      await provider.invalidateToken(for: AuthorizationContext.vehicle("v1"))
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v1")) == "token-v1-2")
    }
  }

  @Test func configurableKeysAndTheJWTExpiryAsFallback() async throws {
    let time = TestTime()
    // A JWT whose exp is one hour on, and an answer with other key names and no expiry.
    let claims = Data(#"{"exp": \#(Int(time.now.timeIntervalSince1970) + 3600)}"#.utf8).base64EncodedString()
      .replacingOccurrences(of: "=", with: "")
    let jwt = "eyJhbGciOiJSUzI1NiJ9.\(claims).c2ln"
    let server = TokenServer { _, _ in #"{"access_token": "\#(jwt)"}"# }
    try await server.run { url in
      var configuration = Self.loopback(url)
      configuration.tokenKey = "access_token"
      configuration.expiryKey = "expires_at"
      let provider = HTTPTokenProvider(configuration: configuration, now: { time.now })
      #expect(try await provider.token(for: AuthorizationContext.vehicle("v1")) == jwt)
      time.advance(30 * 60)
      _ = try await provider.token(for: AuthorizationContext.vehicle("v1"))
      #expect(server.count == 1, "the JWT's exp says it still has 30 minutes")
    }
  }

  @Test func clearErrors() async throws {
    let time = TestTime()
    let server = TokenServer { _, _ in #"{"tok": "x"}"# }
    try await server.run { url in
      let provider = HTTPTokenProvider(configuration: Self.loopback(url), now: { time.now })
      await #expect {
        try await provider.token(for: AuthorizationContext.vehicle(""))
      } throws: { error in
        guard let error = error as? FleetClientError else { return false }
        return error.code == .invalidArgument && error.message.contains("no vehicle_id")
      }
      await #expect {
        try await provider.token(for: AuthorizationContext.vehicle("v1"))
      } throws: { error in
        guard let error = error as? FleetClientError else { return false }
        return error.code == .internalError && error.message.contains("'token'")
      }
      server.reply.withLock { $0 = .init(status: .forbidden, body: { _, _ in "no" }) }
      await #expect {
        try await provider.token(for: AuthorizationContext.vehicle("v1"))
      } throws: { error in
        guard let error = error as? FleetClientError else { return false }
        return error.code == .permissionDenied && error.httpStatus == 403 && error.message.contains("HTTP 403")
      }
      server.reply.withLock { $0 = .init(body: { _, _ in "not json" }) }
      await #expect {
        try await provider.token(for: AuthorizationContext.vehicle("v1"))
      } throws: { error in
        guard let error = error as? FleetClientError else { return false }
        return error.code == .internalError && error.message.contains("not a JSON object")
      }
      server.reply.withLock { $0 = .init(body: { _, _ in #"{"token": "t", "expiration_timestamp_ms": "soon"}"# }) }
      await #expect {
        try await provider.token(for: AuthorizationContext.vehicle("v1"))
      } throws: { error in (error as? FleetClientError)?.message.contains("not a number") == true }
    }
    let unreachable = HTTPTokenProvider(configuration: .init(url: URL(string: "http://127.0.0.1:1/token")!))
    await #expect {
      try await unreachable.token(for: AuthorizationContext.vehicle("v1"))
    } throws: { error in
      guard let error = error as? FleetClientError else { return false }
      return error.code == .unavailable && error.message.contains("127.0.0.1:1")
    }
  }
}
