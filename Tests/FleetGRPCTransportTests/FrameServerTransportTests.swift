import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization
import Testing

@testable import FleetGRPCTransport

/// grpc-swift's own client against grpc-swift's server on `FrameServerTransport`, over loopback.
@Suite struct FrameServerTransportTests {
  @Test func aUnaryCallIsAnsweredWithItsMetadataBothWays() async throws {
    try await serving(TestService()) { client, _ in
      var metadata: Metadata = ["x-test": "hello"]
      metadata.addBinary([0, 1, 2, 250, 251], forKey: "x-data-bin")
      let (answer, headers) = try await client.unary(
        request: ClientRequest(message: Array("abc".utf8), metadata: metadata),
        descriptor: TestService.reverse, serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
      ) { response in (try response.message, response.metadata) }
      #expect(answer == Array("cba".utf8))
      #expect(Array(headers[stringValues: "x-test"]) == ["hello"])
      #expect(Array(headers[binaryValues: "x-data-bin"]) == [[0, 1, 2, 250, 251]])
    }
  }

  @Test func aServiceErrorReachesTheClientAsItsCodeAndMessage() async throws {
    let message = "no vehicle named “v-1” at 100% (the id is unknown)"
    try await serving(TestService()) { client, _ in
      let error = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: Array("fail:\(message)".utf8)), descriptor: TestService.reverse,
          serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
      }
      #expect(error?.code == .notFound)
      #expect(error?.message == message)
    }
  }

  @Test func anUnknownMethodIsUnimplemented() async throws {
    try await serving(TestService()) { client, _ in
      let error = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: [1]),
          descriptor: MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Nope"),
          serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
      }
      #expect(error?.code == .unimplemented)
    }
  }

  /// Messages several windows long, both ways, on one stream: the credit goes back as the
  /// service reads.
  @Test func messagesLongerThanAWindowCrossBothWays() async throws {
    let sizes = [1, 70_000, 300_000, 5, 1_000_000, 65_535, 65_536]
    try await serving(TestService()) { client, _ in
      let echoed = try await client.bidirectionalStreaming(
        request: StreamingClientRequest { writer in
          for (i, size) in sizes.enumerated() { try await writer.write([UInt8](repeating: UInt8(i), count: size)) }
        },
        descriptor: TestService.echo, serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
      ) { response in
        var all: [[UInt8]] = []
        for try await message in response.messages { all.append(message) }
        return all
      }
      #expect(echoed.map(\.count) == sizes)
      #expect(echoed.enumerated().allSatisfy { i, message in message.allSatisfy { $0 == UInt8(i) } })
    }
  }

  @Test func aRequestMessageOverTheLimitIsRefusedNamingTheLimit() async throws {
    var configuration = FrameServerTransport.Configuration()
    configuration.maximumRequestBytes = 1000
    try await serving(TestService(), configuration) { client, _ in
      let error = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: [UInt8](repeating: 7, count: 2000)), descriptor: TestService.reverse,
          serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
      }
      #expect(error?.code == .resourceExhausted)
      #expect(error?.message.contains("2000 bytes is over the limit of 1000") == true)
      // The connection serves on.
      let answer = try await client.unary(
        request: ClientRequest(message: [1, 2]), descriptor: TestService.reverse, serializer: BytesCoding(),
        deserializer: BytesCoding(), options: .defaults
      ) { try $0.message }
      #expect(answer == [2, 1])
    }
  }

  /// gRPC's clients may compress their messages (a phone saving bandwidth): gzip and deflate
  /// are read, the answers go uncompressed, and the headers say what the server reads.
  @Test(arguments: [CompressionAlgorithm.gzip, .deflate])
  func compressedRequestsAreRead(_ algorithm: CompressionAlgorithm) async throws {
    try await serving(TestService(), client: { $0.compression.enabledAlgorithms = .all }) { client, _ in
      var options = CallOptions.defaults
      options.compression = algorithm
      for size in [1, 100, 300_000] {
        let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 / 7) }
        let (answer, headers) = try await client.unary(
          request: ClientRequest(message: message), descriptor: TestService.reverse, serializer: BytesCoding(),
          deserializer: BytesCoding(), options: options
        ) { response in (try response.message, response.metadata) }
        #expect(answer == message.reversed())
        #expect(Array(headers[stringValues: "grpc-encoding"]).allSatisfy { $0 == "identity" })
      }
      let echoed = try await client.bidirectionalStreaming(
        request: StreamingClientRequest { writer in
          for size in [10, 70_000, 3] { try await writer.write([UInt8](repeating: UInt8(size % 251), count: size)) }
        },
        descriptor: TestService.echo, serializer: BytesCoding(), deserializer: BytesCoding(), options: options
      ) { response in
        var all: [[UInt8]] = []
        for try await message in response.messages { all.append(message) }
        return all
      }
      #expect(echoed.map(\.count) == [10, 70_000, 3])
    }
  }

  /// The limit holds for what a message inflates to: a few kilobytes that inflate to megabytes
  /// are refused as soon as they pass it, and the connection serves on.
  @Test func aCompressedMessageThatInflatesPastTheLimitIsRefused() async throws {
    var configuration = FrameServerTransport.Configuration()
    configuration.maximumRequestBytes = 100_000
    try await serving(TestService(), configuration, client: { $0.compression.enabledAlgorithms = .all }) { client, _ in
      var options = CallOptions.defaults
      options.compression = .gzip
      let error = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: [UInt8](repeating: 0, count: 5_000_000)), descriptor: TestService.reverse,
          serializer: BytesCoding(), deserializer: BytesCoding(), options: options
        ) { try $0.message }
      }
      #expect(error?.code == .resourceExhausted)
      #expect(error?.message == "a gzip request message inflates past the limit of 100000 bytes")
      let answer = try await client.unary(
        request: ClientRequest(message: [1, 2, 3]), descriptor: TestService.reverse, serializer: BytesCoding(),
        deserializer: BytesCoding(), options: options
      ) { try $0.message }
      #expect(answer == [3, 2, 1])
    }
  }

  /// gRPC's compression document: an encoding the server does not read is UNIMPLEMENTED, with
  /// the encodings it does; a compressed flag on a call without an encoding is INTERNAL.
  @Test func anUnknownEncodingOrAFlagWithoutOneIsRefused() async throws {
    try await serving(TestService()) { server in
      let port = try #require(try await server.listeningAddress.port)
      let client = try await RawHTTP2Client.connect(port: port)
      try await client.call(stream: 1, TestService.reverse, encoding: "snappy", message: [1, 2], compressed: true)
      let snappy = try await client.trailers(stream: 1)
      #expect(snappy.first(name: "grpc-status") == "12")
      #expect(
        snappy.first(name: "grpc-message")
          == "grpc-encoding 'snappy' is not supported: messages may come as identity,deflate,gzip")
      #expect(snappy.first(name: "grpc-accept-encoding") == "identity,deflate,gzip")

      try await client.call(stream: 3, TestService.reverse, encoding: nil, message: [1, 2], compressed: true)
      let flagged = try await client.trailers(stream: 3)
      #expect(flagged.first(name: "grpc-status") == "13")
      #expect(
        flagged.first(name: "grpc-message")
          == "a message is flagged compressed but the call's grpc-encoding is identity")

      // Not gzip's bytes at all.
      try await client.call(stream: 5, TestService.reverse, encoding: "gzip", message: [1, 2, 3, 4], compressed: true)
      let corrupt = try await client.trailers(stream: 5)
      #expect(corrupt.first(name: "grpc-status") == "13")
      #expect(corrupt.first(name: "grpc-message")?.hasPrefix("a request message is not valid gzip data") == true)
      try await client.channel.close()
    }
  }

  /// A client that stops reading holds the service's writer back instead of letting its
  /// messages pile up in fleetd's memory; it gets all of them once it reads again. The client is
  /// grpc-swift's, its window a stream's 64 KiB (its default is 8 MiB).
  @Test func aClientThatStopsReadingHoldsTheServiceWriterBack() async throws {
    let service = TestService()
    try await serving(service, client: { $0.http2.targetWindowSize = 65_535 }) { client, _ in
      let count = 200
      let received = try await client.serverStreaming(
        request: ClientRequest(message: [UInt8](String(count).utf8)), descriptor: TestService.flood,
        serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
      ) { response in
        var iterator = response.messages.makeAsyncIterator()
        var received = 0
        if try await iterator.next() != nil { received += 1 }
        try await Task.sleep(for: .seconds(1))
        let writtenWhileStopped = service.written.load(ordering: .relaxed)
        // Messages of 64 KiB: what the client's window and its reader's buffer hold is on its
        // way, the rest waits. (grpc-swift's own transport lets the writer go on, its frames
        // queued in memory.)
        #expect(
          writtenWhileStopped < count / 4, "the service wrote \(writtenWhileStopped) of \(count) with nobody reading")
        while try await iterator.next() != nil { received += 1 }
        return received
      }
      #expect(received == count)
    }
  }

  /// A client that writes faster than its service reads is stopped by HTTP/2 flow control. The
  /// client is `FrameClientTransport`, whose writer waits for the stream's window: grpc-swift's
  /// own client takes writes into its memory while the window is shut (tens of messages, all of
  /// them on a busy machine), so what it counts as sent says nothing about the server.
  @Test func aServiceThatStopsReadingHoldsTheClientBack() async throws {
    let service = TestService()
    try await calling(service, on: .frames) { client, _ in
      let count = 1000
      let read = try await client.clientStreaming(
        request: StreamingClientRequest { writer in
          for _ in 0..<count {
            try await writer.write([UInt8](repeating: 1, count: 65_536))
            service.clientSent.add(1, ordering: .relaxed)
          }
        },
        descriptor: TestService.slowReader, serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
      ) { response in
        try response.message
      }
      #expect(read == [UInt8](String(count).utf8))
      let sentWhilePaused = service.sentWhilePaused.load(ordering: .relaxed)
      // Messages of 64 KiB and windows of 64 KiB: the one read, a whole one and a part in the
      // server's window, one on its way from the client's writer; then the client waits.
      #expect(
        sentWhilePaused <= 8, "the client sent \(sentWhilePaused) of \(count) while the service read one")
    }
  }

  /// A client that cancels its call cancels the service's work on it.
  @Test func aCancelledCallCancelsTheService() async throws {
    let service = TestService()
    try await serving(service) { client, _ in
      try await cancelAHangingCall(from: client, to: service)
    }
  }

  /// Graceful shutdown lets a call under way finish, then `listen` returns and the port closes.
  @Test func gracefulShutdownLetsTheCallUnderWayFinish() async throws {
    let service = TestService()
    try await serving(service) { client, server in
      async let answer = client.unary(
        request: ClientRequest(message: Array("slow".utf8)), descriptor: TestService.reverse,
        serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
      ) { try $0.message }
      try await service.slowStarted.wait()
      server.beginGracefulShutdown()
      #expect(try await answer == Array("wols".utf8))
    }
  }

  /// A call's service runs in a child of `serve`'s task, as on grpc-swift's own transport: it
  /// sees that task's task-locals (swift-service-lifecycle's graceful shutdown is one, which
  /// fleetd's report streams end on).
  @Test func aServiceSeesTheTaskLocalsOfTheServersTask() async throws {
    try await serving(TestService()) { client, _ in
      let seen = try await client.unary(
        request: ClientRequest(message: []), descriptor: TestService.servedByMethod, serializer: BytesCoding(),
        deserializer: BytesCoding(), options: .defaults
      ) { String(decoding: try $0.message, as: UTF8.self) }
      #expect(seen == "the test's server")
    }
  }

  /// A client that has sent nothing for the keepalive time is PINGed; one that answers keeps
  /// its connection, one that does not (gone without closing) loses it.
  @Test func keepalivePingsKeepAnAnsweringClientAndCloseASilentOne() async throws {
    var configuration = FrameServerTransport.Configuration()
    configuration.keepaliveTime = .milliseconds(100)
    // Long beside the PINGs' 100 ms: with the other suites filling both cores, an answer has
    // been seen to take over 2 s to reach the server's handler.
    configuration.keepaliveTimeout = .seconds(10)
    // The client answers on a loop of its own: on the shared loops, the other suites' work in this
    // process could hold its answer back past the timeout.
    let clientLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    // grpc-swift's calls wait for a connection by default: one the server closed would leave the
    // call waiting, and the test with it.
    var options = CallOptions.defaults
    options.timeout = .seconds(30)
    try await serving(TestService(), configuration, clientLoops: clientLoops) { client, server in
      let peer = { @Sendable [options] () async throws -> String in
        try await client.unary(
          request: ClientRequest(message: []), descriptor: TestService.peer, serializer: BytesCoding(),
          deserializer: BytesCoding(), options: options
        ) { String(decoding: try $0.message, as: UTF8.self) }
      }
      let before = try await peer()
      #expect(before.hasPrefix("ipv4:127.0.0.1:"))
      try await Task.sleep(for: .seconds(1))
      #expect(try await peer() == before, "the client that answers the PINGs kept its connection")

      let port = try #require(try await server.listeningAddress.port)
      let silent = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port).get()
      // The HTTP/2 preface and an empty SETTINGS frame, then nothing: no PING is answered.
      var preface = silent.allocator.buffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
      preface.writeBytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
      try await silent.writeAndFlush(preface)
      let closed = Signal()
      silent.closeFuture.whenComplete { _ in closed.fire() }
      try await closed.wait()
      #expect(!silent.isActive)
    }
    try await clientLoops.shutdownGracefully()
  }

  /// gRFC A8: a PING sooner than allowed is a strike; the third strike is answered with GOAWAY
  /// ENHANCE_YOUR_CALM ("too_many_pings") and the connection closes.
  @Test func aClientThatPingsTooOftenIsToldToCalmDownAndClosed() async throws {
    try await serving(TestService()) { server in
      let port = try #require(try await server.listeningAddress.port)
      let client = try await RawHTTP2Client.connect(port: port)
      // The first PING is allowed, the next two are strikes: all acknowledged, nothing more.
      for n in 1...3 { try await client.ping(UInt64(n)) }
      try await client.waitForAcks(3)
      #expect(client.goAway == nil)
      try await client.ping(4)
      try await client.closed.wait()
      let (code, reason) = try #require(client.goAway)
      #expect(code == .enhanceYourCalm)
      #expect(reason == "too_many_pings")
    }
  }

  /// PINGs no sooner than the interval allowed keep the connection open however many there are.
  @Test func pingsAtTheAllowedIntervalKeepTheConnection() async throws {
    var configuration = FrameServerTransport.Configuration()
    configuration.minimumPingInterval = .milliseconds(50)
    configuration.pingsWithoutCalls = true
    try await serving(TestService(), configuration) { server in
      let port = try #require(try await server.listeningAddress.port)
      let client = try await RawHTTP2Client.connect(port: port)
      for n in 1...6 {
        try await client.ping(UInt64(n))
        try await client.waitForAcks(n)
        try await Task.sleep(for: .milliseconds(120))
      }
      #expect(client.goAway == nil)
      #expect(client.channel.isActive)
      try await client.channel.close()
    }
  }

  /// The rule itself: strikes against the interval with calls (two hours without, unless
  /// allowed), and forgiven when the server sends headers or data.
  @Test func thePingRuleCountsStrikesAndForgivesThemWhenTheServerSends() {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    /// Whether each PING, `minutes` after the start, was one too many.
    func verdicts(_ rule: inout PingPolicy, _ minutes: [Int64], calls: Bool) -> [Bool] {
      minutes.map { rule.tooMany(at: start + .minutes($0), hasCalls: calls) }
    }
    var rule = PingPolicy(minimumInterval: .minutes(5), withoutCalls: false)
    // Allowed at 0 and 5 (one interval later); strikes at 6, 7, 8: the third is too many, and
    // the client is told once (the connection is closing then).
    #expect(verdicts(&rule, [0, 5, 6, 7, 8, 9], calls: true) == [false, false, false, false, true, false])

    rule = PingPolicy(minimumInterval: .minutes(5), withoutCalls: false)
    _ = verdicts(&rule, [0, 30, 60, 90], calls: false)
    #expect(rule.strikes == 3, "without calls, PINGs within two hours of the last are strikes")

    rule = PingPolicy(minimumInterval: .minutes(5), withoutCalls: true)
    _ = verdicts(&rule, [0, 5, 10], calls: false)
    #expect(rule.strikes == 0, "allowed without calls: the same interval as with them")

    rule = PingPolicy(minimumInterval: .minutes(5), withoutCalls: false)
    for minute in 0..<10 {
      _ = verdicts(&rule, [Int64(minute)], calls: true)
      rule.forgive()
    }
    #expect(rule.strikes == 0, "a server that sends between PINGs forgives them")
  }

  @Test func aTakenPortFailsTheListenAndItsAddress() async throws {
    try await serving(TestService()) { server in
      let port = try #require(try await server.listeningAddress.port)
      let second = FrameServerTransport(host: "127.0.0.1", port: port)
      await #expect(throws: (any Error).self) {
        try await GRPCServer(transport: second, services: [TestService()]).serve()
      }
      await #expect(throws: (any Error).self) { try await second.listeningAddress }
    }
  }
}

/// `service` on a `FrameServerTransport` at a free loopback port while `body` runs with a
/// grpc-swift client connected to it; the server is shut down gracefully after.
func serving(
  _ service: some RegistrableRPCService, _ configuration: FrameServerTransport.Configuration = .init(),
  client configure: (inout HTTP2ClientTransport.Posix.Config) -> Void = { _ in },
  clientLoops: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
  _ body: (GRPCClient<HTTP2ClientTransport.Posix>, FrameServerTransport) async throws -> Void
) async throws {
  try await serving(service, configuration) { transport in
    let port = try #require(try await transport.listeningAddress.port)
    let clientTransport = try HTTP2ClientTransport.Posix(
      target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext,
      config: .defaults(configure: configure), eventLoopGroup: clientLoops)
    try await withGRPCClient(transport: clientTransport) { client in try await body(client, transport) }
  }
}

/// `service` on a `FrameServerTransport` at a free loopback port while `body` runs, with no
/// client: `withGRPCClient` fails with `clientIsStopped` when its body ends before the client's
/// connections have started, so a body that makes no call must not open one.
func serving(
  _ service: some RegistrableRPCService, _ configuration: FrameServerTransport.Configuration = .init(),
  _ body: (FrameServerTransport) async throws -> Void
) async throws {
  let transport = FrameServerTransport(host: "127.0.0.1", port: 0, configuration: configuration)
  let server = GRPCServer(transport: transport, services: [service])
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await TestService.$servedBy.withValue("the test's server") { try await server.serve() } }
    try await body(transport)
    server.beginGracefulShutdown()
    try await group.waitForAll()
  }
}

/// Begins a call to `service`'s `Hang`, cancels it once the service waits, and waits for the
/// service's task to end.
func cancelAHangingCall(from client: GRPCClient<some ClientTransport>, to service: TestService) async throws {
  let call = Task {
    try await client.serverStreaming(
      request: ClientRequest(message: [1]), descriptor: TestService.hang, serializer: BytesCoding(),
      deserializer: BytesCoding(), options: .defaults
    ) { response in
      for try await _ in response.messages {}
    }
  }
  try await service.hanging.wait()
  call.cancel()
  _ = await call.result
  try await service.hangEnded.wait()
}

/// Messages as their bytes.
struct BytesCoding: MessageSerializer, MessageDeserializer {
  func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
  func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> [UInt8] {
    serializedMessageBytes.withUnsafeBytes { Array($0) }
  }
}

/// A one-shot signal between a service and its test.
final class Signal: Sendable {
  let state = Mutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  func fire() {
    let waiters = state.withLock { s in
      s.fired = true
      defer { s.waiters = [] }
      return s.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Waits for the signal, for at most 30 s.
  func wait() async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
      group.addTask {
        await withCheckedContinuation { continuation in
          let fired = self.state.withLock { s in
            if !s.fired { s.waiters.append(continuation) }
            return s.fired
          }
          if fired { continuation.resume() }
        }
        return true
      }
      group.addTask {
        try await Task.sleep(for: .seconds(30))
        return false
      }
      let signalled = try await group.next()!
      group.cancelAll()
      #expect(signalled, "the signal did not come within 30 s")
      if !signalled { fire() }
    }
  }
}

/// Methods on raw bytes: each exercises one part of the transport.
final class TestService: RegistrableRPCService, Sendable {
  static let reverse = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Reverse")
  static let echo = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Echo")
  static let flood = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Flood")
  static let slowReader = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "SlowReader")
  static let hang = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Hang")
  static let peer = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Peer")
  static let servedByMethod = MethodDescriptor(fullyQualifiedService: "test.Echo", method: "ServedBy")

  /// Bound around `serve` by `serving`, read by `ServedBy`.
  @TaskLocal static var servedBy = "nobody"

  /// Messages `Flood` has written.
  let written = Atomic<Int>(0)
  /// Messages the client of `SlowReader` has sent, and had sent when it stopped sending while
  /// the service, having read one, read no more.
  let clientSent = Atomic<Int>(0)
  let sentWhilePaused = Atomic<Int>(0)
  let hanging = Signal()
  let hangEnded = Signal()
  let slowStarted = Signal()

  func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
    // The request reversed, with the request's x- metadata echoed; "fail:M" fails with M;
    // "slow" answers after 300 ms.
    router.registerHandler(forMethod: Self.reverse, deserializer: BytesCoding(), serializer: BytesCoding()) {
      request, _ in
      let message = try await request.messages.reduce(into: [UInt8]()) { $0 += $1 }
      if let text = String(bytes: message, encoding: .utf8), text.hasPrefix("fail:") {
        throw RPCError(code: .notFound, message: String(text.dropFirst(5)))
      }
      if message == Array("slow".utf8) {
        self.slowStarted.fire()
        try await Task.sleep(for: .milliseconds(300))
      }
      let echoed = Metadata(request.metadata.filter { $0.key.hasPrefix("x-") })
      return StreamingServerResponse(single: ServerResponse(message: message.reversed(), metadata: echoed))
    }
    router.registerHandler(forMethod: Self.echo, deserializer: BytesCoding(), serializer: BytesCoding()) {
      request, _ in
      StreamingServerResponse { writer in
        for try await message in request.messages { try await writer.write(message) }
        return [:]
      }
    }
    // As many 64 KiB messages as the request says.
    router.registerHandler(forMethod: Self.flood, deserializer: BytesCoding(), serializer: BytesCoding()) {
      request, _ in
      var count = 0
      for try await message in request.messages { count = Int(String(decoding: message, as: UTF8.self)) ?? 0 }
      let total = count
      return StreamingServerResponse { writer in
        for _ in 0..<total {
          try await writer.write([UInt8](repeating: 9, count: 65_536))
          self.written.add(1, ordering: .relaxed)
        }
        return [:]
      }
    }
    // Reads one message, then stops reading until the client has sent nothing more for a second
    // (or 30 s have passed), then reads the rest; answers the count.
    router.registerHandler(forMethod: Self.slowReader, deserializer: BytesCoding(), serializer: BytesCoding()) {
      request, _ in
      var iterator = request.messages.makeAsyncIterator()
      var count = 0
      if try await iterator.next() != nil { count += 1 }
      var sent = self.clientSent.load(ordering: .relaxed)
      var still = 0
      for _ in 0..<300 where still < 10 {
        try await Task.sleep(for: .milliseconds(100))
        let now = self.clientSent.load(ordering: .relaxed)
        still = now == sent ? still + 1 : 0
        sent = now
      }
      self.sentWhilePaused.store(sent, ordering: .relaxed)
      while try await iterator.next() != nil {
        count += 1
      }
      return StreamingServerResponse(single: ServerResponse(message: [UInt8](String(count).utf8)))
    }
    // The caller's address, as the server's context names it.
    router.registerHandler(forMethod: Self.peer, deserializer: BytesCoding(), serializer: BytesCoding()) {
      _, context in
      StreamingServerResponse(single: ServerResponse(message: Array(context.remotePeer.utf8)))
    }
    // The task-local `servedBy` as the call's task sees it.
    router.registerHandler(forMethod: Self.servedByMethod, deserializer: BytesCoding(), serializer: BytesCoding()) {
      _, _ in
      StreamingServerResponse(single: ServerResponse(message: Array(Self.servedBy.utf8)))
    }
    // Writes nothing until the call is cancelled.
    router.registerHandler(forMethod: Self.hang, deserializer: BytesCoding(), serializer: BytesCoding()) {
      _, context in
      StreamingServerResponse { _ in
        self.hanging.fire()
        defer { self.hangEnded.fire() }
        try? await context.cancellation.cancelled
        return [:]
      }
    }
  }
}

/// An HTTP/2 connection without gRPC's client: the frames a test sends, and the PING
/// acknowledgements, GOAWAY and streams' trailers it gets back.
final class RawHTTP2Client: ChannelInboundHandler, Sendable {
  typealias InboundIn = HTTP2Frame

  let seen = Mutex<(acks: Int, goAway: (HTTP2ErrorCode, String)?)>((0, nil))
  let acked = AsyncStream.makeStream(of: Int.self)
  /// Each stream's headers that ended it.
  let ended = Mutex<[HTTP2StreamID: HPACKHeaders]>([:])
  let endedStreams = AsyncStream.makeStream(of: HTTP2StreamID.self)
  let closed = Signal()
  nonisolated(unsafe) var channel: (any Channel)!

  static func connect(port: Int) async throws -> RawHTTP2Client {
    let client = RawHTTP2Client()
    client.channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandlers([NIOHTTP2Handler(mode: .client), client])
        }
      }
      .connect(host: "127.0.0.1", port: port).get()
    client.channel.closeFuture.whenComplete { _ in client.closed.fire() }
    return client
  }

  var goAway: (HTTP2ErrorCode, String)? { seen.withLock { $0.goAway } }

  func ping(_ n: UInt64) async throws {
    try await channel.writeAndFlush(
      HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: n), ack: false)))
  }

  /// A gRPC call of one message on a new stream (odd, above the last), its flag set as asked.
  func call(
    stream: Int, _ method: MethodDescriptor, encoding: String?, message: [UInt8], compressed: Bool
  ) async throws {
    let id = HTTP2StreamID(stream)
    var headers: HPACKHeaders = [
      ":method": "POST", ":scheme": "http", ":path": "/" + method.fullyQualifiedMethod,
      ":authority": "localhost", "content-type": "application/grpc", "te": "trailers",
    ]
    if let encoding { headers.add(name: "grpc-encoding", value: encoding) }
    var body = channel.allocator.buffer(capacity: 5 + message.count)
    body.writeInteger(UInt8(compressed ? 1 : 0))
    body.writeInteger(UInt32(message.count))
    body.writeBytes(message)
    channel.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers))), promise: nil)
    try await channel.writeAndFlush(
      HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true))))
  }

  /// The headers that ended stream `stream` (its trailers), once they come.
  func trailers(stream: Int) async throws -> HPACKHeaders {
    let id = HTTP2StreamID(stream)
    if let headers = ended.withLock({ $0[id] }) { return headers }
    for await ended in endedStreams.stream where ended == id { return self.ended.withLock { $0[id]! } }
    throw CancellationError()
  }

  /// Waits until `count` PINGs have been acknowledged in all.
  func waitForAcks(_ count: Int) async throws {
    if seen.withLock({ $0.acks }) >= count { return }
    for await acks in acked.stream where acks >= count { return }
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data).payload {
    case .ping(_, ack: true):
      let acks = seen.withLock { s in
        s.acks += 1
        return s.acks
      }
      acked.continuation.yield(acks)
    case .goAway(_, let code, let debug):
      seen.withLock { $0.goAway = (code, debug.map { String(buffer: $0) } ?? "") }
    case .headers(let headers) where headers.endStream:
      let id = unwrapInboundIn(data).streamID
      ended.withLock { $0[id] = headers.headers }
      endedStreams.continuation.yield(id)
    default:
      break
    }
  }
}
