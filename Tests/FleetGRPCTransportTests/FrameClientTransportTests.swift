import GRPCCore
import GRPCNIOTransportHTTP2
import NIOCore
import NIOPosix
import Testing

@testable import FleetGRPCTransport

/// `FrameClientTransport` under grpc-swift's client, against grpc-swift's server on its own
/// transport (`nio`) and on `FrameServerTransport` (`frames`), over loopback.
@Suite struct FrameClientTransportTests {
  enum Server: CaseIterable { case nio, frames }

  @Test(arguments: Server.allCases) func aUnaryCallIsAnsweredWithItsMetadataBothWays(_ server: Server) async throws {
    try await calling(TestService(), on: server) { client, _ in
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

  @Test(arguments: Server.allCases) func aServiceErrorReachesTheCallerAsItsCodeAndMessage(_ server: Server) async throws
  {
    let message = "no vehicle named “v-1” at 100% (the id is unknown)"
    try await calling(TestService(), on: server) { client, _ in
      let error = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: Array("fail:\(message)".utf8)), descriptor: TestService.reverse,
          serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
      }
      #expect(error?.code == .notFound)
      #expect(error?.message == message)
      let unknown = await #expect(throws: RPCError.self) {
        try await client.unary(
          request: ClientRequest(message: [1]),
          descriptor: MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Nope"),
          serializer: BytesCoding(), deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
      }
      #expect(unknown?.code == .unimplemented)
    }
  }

  /// Messages several windows long, both ways, on one stream: the credit goes back both ways.
  @Test(arguments: Server.allCases) func messagesLongerThanAWindowCrossBothWays(_ server: Server) async throws {
    let sizes = [1, 70_000, 300_000, 5, 1_000_000, 65_535, 65_536]
    try await calling(TestService(), on: server) { client, _ in
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

  /// Many calls at once on the one connection, each answered with its own message.
  @Test(arguments: Server.allCases) func concurrentCallsEachGetTheirOwnAnswer(_ server: Server) async throws {
    try await calling(TestService(), on: server) { client, _ in
      try await withThrowingTaskGroup(of: Bool.self) { group in
        for i in 0..<200 {
          group.addTask {
            let message = Array("call \(i)".utf8)
            let answer = try await client.unary(
              request: ClientRequest(message: message), descriptor: TestService.reverse, serializer: BytesCoding(),
              deserializer: BytesCoding(), options: .defaults
            ) { try $0.message }
            return answer == message.reversed()
          }
        }
        var right = 0
        for try await ok in group where ok { right += 1 }
        #expect(right == 200)
      }
    }
  }

  /// A caller that stops reading holds the service's writer back (the client gives no credit
  /// for messages it has not handed over); it gets every message once it reads again. On the
  /// frame server only: grpc-swift's own server transport lets a writer go on whatever the
  /// client's window, queueing the frames in its memory.
  @Test func aCallerThatStopsReadingHoldsTheServiceBack() async throws {
    let service = TestService()
    try await calling(service, on: .frames) { client, _ in
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
        // Messages of 64 KiB and windows of 64 KiB: the one read, a whole one and a part in the
        // client's window, one on its way from the service's writer; then the service waits.
        #expect(
          writtenWhileStopped <= 8, "the service wrote \(writtenWhileStopped) of \(count) with nobody reading")
        while try await iterator.next() != nil { received += 1 }
        return received
      }
      #expect(received == count)
    }
  }

  /// A caller that cancels its call resets the stream: the service sees the cancellation.
  @Test(arguments: Server.allCases) func aCancelledCallCancelsTheService(_ server: Server) async throws {
    let service = TestService()
    try await calling(service, on: server) { client, _ in
      try await cancelAHangingCall(from: client, to: service)
    }
  }

  /// A server that answers before the request has ended (here with UNIMPLEMENTED, for a method
  /// it does not have) ends the call, and the client closes its side of the stream: against a
  /// server that allows two streams at once, ten such calls in a row are each answered (a stream
  /// left half open stays counted, and the third call would wait for a slot until its deadline).
  @Test func aCallAnsweredBeforeItsRequestEndedLeavesNoStreamOpen() async throws {
    var options = CallOptions.defaults
    options.timeout = .seconds(30)
    try await serve(TestService(), on: .nio, port: 0, maximumStreams: 2) { port in
      try await withGRPCClient(transport: FrameClientTransport(host: "127.0.0.1", port: port)) { client in
        for _ in 0..<10 {
          let error = await #expect(throws: RPCError.self) {
            try await client.clientStreaming(
              request: StreamingClientRequest { writer in
                try await writer.write([1])
                // The request ends after the answer has come.
                try await Task.sleep(for: .milliseconds(200))
              },
              descriptor: MethodDescriptor(fullyQualifiedService: "test.Echo", method: "Nope"),
              serializer: BytesCoding(), deserializer: BytesCoding(), options: options
            ) { try $0.message }
          }
          #expect(error?.code == .unimplemented)
        }
      }
    }
  }

  /// A call made while nothing listens waits for the connection, and the client connects again
  /// after the server restarts: calls go on without the caller connecting. A call that meets
  /// the old connection before the client has read that it closed fails UNAVAILABLE, gRPC's
  /// code for a call to try again (as on grpc-swift's own transport), so the calls here retry.
  @Test func callsWaitForTheServerAndGoOnAfterItRestarts() async throws {
    let port = try await freePort()
    let transport = FrameClientTransport(host: "127.0.0.1", port: port)
    var options = CallOptions.defaults
    options.executionPolicy = .retry(
      RetryPolicy(
        maxAttempts: 5, initialBackoff: .milliseconds(50), maxBackoff: .seconds(1), backoffMultiplier: 2,
        retryableStatusCodes: [.unavailable]))
    try await withGRPCClient(transport: transport) { client in
      let reverse = { @Sendable [options] (text: String) async throws -> String in
        try await client.unary(
          request: ClientRequest(message: Array(text.utf8)), descriptor: TestService.reverse,
          serializer: BytesCoding(), deserializer: BytesCoding(), options: options
        ) { String(decoding: try $0.message.reversed(), as: UTF8.self) }
      }
      let early = Task { try await reverse("before the server") }
      try await Task.sleep(for: .milliseconds(600))
      try await serve(TestService(), on: .nio, port: port) { _ in
        let answer = try await early.value
        #expect(answer == "before the server")
      }
      try await serve(TestService(), on: .frames, port: port) { _ in
        let answer = try await reverse("after a restart")
        #expect(answer == "after a restart")
      }
    }
  }

  /// After the client shuts down, a new call fails UNAVAILABLE and the transport's `connect`
  /// has returned.
  @Test func aCallAfterShutdownIsUnavailable() async throws {
    try await serve(TestService(), on: .frames, port: 0) { port in
      let transport = FrameClientTransport(host: "127.0.0.1", port: port)
      let client = GRPCClient(transport: transport)
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await client.runConnections() }
        let answer = try await client.unary(
          request: ClientRequest(message: [1, 2]), descriptor: TestService.reverse, serializer: BytesCoding(),
          deserializer: BytesCoding(), options: .defaults
        ) { try $0.message }
        #expect(answer == [2, 1])
        transport.beginGracefulShutdown()
        try await group.waitForAll()
      }
      let error = await #expect(throws: RPCError.self) {
        try await transport.withStream(descriptor: TestService.reverse, options: .defaults) { _, _ in }
      }
      #expect(error?.code == .unavailable)
    }
  }

  @Test func grpcTimeoutIsWrittenAsTheProtocolSays() {
    #expect(GRPCHeaders.timeout(.milliseconds(1500)) == "1500m")
    #expect(GRPCHeaders.timeout(.microseconds(1)) == "1m")
    #expect(GRPCHeaders.timeout(.seconds(200_000)) == "200000S")
    #expect(GRPCHeaders.percentDecoded("100%25 sure %E2%80%9Cyes%E2%80%9D %zz") == "100% sure “yes” %zz")
  }
}

/// `service` served on `server` at a free loopback port while `body` runs with a grpc-swift
/// client on `FrameClientTransport` connected to it.
func calling(
  _ service: some RegistrableRPCService, on server: FrameClientTransportTests.Server,
  _ body: (GRPCClient<FrameClientTransport>, Int) async throws -> Void
) async throws {
  try await serve(service, on: server, port: 0) { port in
    try await withGRPCClient(transport: FrameClientTransport(host: "127.0.0.1", port: port)) { client in
      try await body(client, port)
    }
  }
}

/// `service` served on `server` at `port` (0: a free one) while `body` runs with the port; the
/// server is shut down gracefully after. `maximumStreams` limits grpc-swift's server's
/// concurrent streams (the frame server sets none).
func serve(
  _ service: some RegistrableRPCService, on server: FrameClientTransportTests.Server, port: Int,
  maximumStreams: Int? = nil, _ body: (Int) async throws -> Void
) async throws {
  let run: @Sendable () async throws -> Void
  let stop: @Sendable () -> Void
  let bound: @Sendable () async throws -> Int
  switch server {
  case .nio:
    let transport = HTTP2ServerTransport.Posix(
      address: .ipv4(host: "127.0.0.1", port: port), transportSecurity: .plaintext,
      config: .defaults { $0.http2.maxConcurrentStreams = maximumStreams })
    let grpcServer = GRPCServer(transport: transport, services: [service])
    (run, stop) = ({ try await grpcServer.serve() }, { grpcServer.beginGracefulShutdown() })
    bound = { try #require(try await transport.listeningAddress.ipv4?.port) }
  case .frames:
    let transport = FrameServerTransport(host: "127.0.0.1", port: port)
    let grpcServer = GRPCServer(transport: transport, services: [service])
    (run, stop) = ({ try await grpcServer.serve() }, { grpcServer.beginGracefulShutdown() })
    bound = { try #require(try await transport.listeningAddress.port) }
  }
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { try await run() }
    try await body(try await bound())
    stop()
    try await group.waitForAll()
  }
}

/// A loopback port nothing listens on (one bound and closed again).
func freePort() async throws -> Int {
  let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
    .bind(host: "127.0.0.1", port: 0).get()
  let port = try #require(channel.localAddress?.port)
  try await channel.close()
  return port
}
