import FleetGeometry
import FleetPositioning
import FleetTestSupport
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite("Location providers")
struct ProviderTests {
  @Test func gpsdReportsBecomeFixesAndTheClientReconnects() async throws {
    let sessions = Counter()
    let watchRequests = Lines()
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .bind(host: "127.0.0.1", port: 0) { channel in
        channel.eventLoop.makeCompletedFuture {
          try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
      }
    let port = server.channel.localAddress!.port!
    try await withThrowingTaskGroup(of: Void.self) { group in
      // A gpsd speaking its JSON protocol: VERSION on connect, then after ?WATCH, reports.
      group.addTask {
        try await server.executeThenClose { inbound in
          for try await connection in inbound {
            sessions.increment()
            let session = sessions.count
            try await connection.executeThenClose { input, output in
              try await output.write(
                ByteBuffer(string: #"{"class":"VERSION","release":"3.25","proto_major":3,"proto_minor":15}"# + "\n"))
              var iterator = input.makeAsyncIterator()
              if let request = try await iterator.next() { watchRequests.append(String(buffer: request)) }
              let lat = 43.73 + Double(session) * 0.001
              let lines = [
                #"{"class":"DEVICES","devices":[]}"#,
                #"{"class":"TPV","device":"/dev/ttyACM0","mode":1,"time":"2026-11-22T10:00:00.000Z"}"#,
                #"{"class":"TPV","device":"/dev/ttyACM0","mode":3,"time":"2026-11-22T10:00:01.000Z","lat":\#(lat),"lon":7.42,"altHAE":52.1,"track":91.5,"speed":12.25,"eph":4.5,"epv":7.0}"#,
                #"{"class":"SKY","satellites":[]}"#,
              ]
              // Split mid-line: reports may arrive in any chunks.
              let text = lines.joined(separator: "\n") + "\n"
              let cut = text.index(text.startIndex, offsetBy: text.count / 2)
              try await output.write(ByteBuffer(string: String(text[..<cut])))
              try await output.write(ByteBuffer(string: String(text[cut...])))
              // The daemon goes away after one report: the client must come back.
            }
            if session == 2 { break }
          }
        }
      }
      let provider = GPSDLocationProvider(host: "127.0.0.1", port: port)
      var fixes: [LocationFix] = []
      for try await fix in provider.fixes() {
        fixes.append(fix)
        if fixes.count == 2 { break }
      }
      #expect(fixes.count == 2)
      #expect(abs(fixes[0].coordinate.latitude - 43.731) < 1e-9, "one report per session, the no-fix TPV skipped")
      #expect(abs(fixes[1].coordinate.latitude - 43.732) < 1e-9, "the second session, after reconnecting")
      #expect(fixes[0].speed == 12.25)
      #expect(fixes[0].heading == 91.5)
      #expect(fixes[0].horizontalAccuracy == 4.5)
      #expect(fixes[0].altitude == 52.1)
      #expect(watchRequests.all.count == 2)
      #expect(watchRequests.all.allSatisfy { $0.hasPrefix("?WATCH={\"enable\":true,\"json\":true}") })
      try await group.waitForAll()
    }
  }
}

final class Counter: Sendable {
  let value = Mutex(0)
  func increment() { value.withLock { $0 += 1 } }
  var count: Int { value.withLock { $0 } }
}

final class Lines: Sendable {
  let value = Mutex<[String]>([])
  func append(_ line: String) { value.withLock { $0.append(line) } }
  var all: [String] { value.withLock { $0 } }
}
