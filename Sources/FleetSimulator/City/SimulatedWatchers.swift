import FleetClient
import FleetGRPCTransport
import FleetProto
import Foundation
import GRPCCore
import GRPCProtobuf
import Synchronization

/// Riders' apps following their rides: every booked ride is watched over WatchTrip
/// (JOURNEY_SHARING_V1S, with a token for that trip) by `perRide` streams — the rider and those
/// the trip is shared with — from booking until the trip ends. Each update whose vehicle
/// location is newer than the last one the stream held counts the time from the driver's report
/// (its location's update_time, same clock) to the watcher holding it: the push latency.
public struct SimulatedWatchers: Sendable {
  public struct Configuration: Sendable {
    /// Streams per booked ride; 0 watches none.
    public var perRide = 0
    /// Streams per HTTP/2 connection: connections are added as the streams grow.
    public var streamsPerConnection = 100

    public init(perRide: Int = 0) { self.perRide = perRide }
  }

  /// One HTTP/2 connection to fleetd and the streams open on it.
  final class Connection: Sendable {
    let client: GRPCClient<FrameClientTransport>
    let streams = Atomic<Int>(0)

    init(client: GRPCClient<FrameClientTransport>) { self.client = client }
  }

  public let configuration: Configuration
  let provider: String
  let tokens: ServiceAccountTokenProvider
  let stats: SimulationStats
  let booked: AsyncStream<String>
  let bookings: AsyncStream<String>.Continuation

  public init(
    configuration: Configuration, provider: String, tokens: ServiceAccountTokenProvider, stats: SimulationStats
  ) {
    self.configuration = configuration
    self.provider = provider
    self.tokens = tokens
    self.stats = stats
    (booked, bookings) = AsyncStream.makeStream(of: String.self)
  }

  /// A ride was booked: its watchers open.
  func watch(ride id: String) {
    if configuration.perRide > 0 { bookings.yield(id) }
  }

  /// Opens the streams of the rides booked, until cancelled.
  func run(connect: @escaping @Sendable () throws -> GRPCClient<FrameClientTransport>) async throws {
    guard configuration.perRide > 0 else { return }
    let open = Mutex<[Connection]>([])
    try await withTaskCancellationHandler {
      try await withThrowingDiscardingTaskGroup { group in
        for await ride in booked {
          for _ in 0..<configuration.perRide {
            let connection: Connection
            if let free = open.withLock({
              $0.first { $0.streams.load(ordering: .relaxed) < configuration.streamsPerConnection }
            }) {
              connection = free
            } else {
              connection = Connection(client: try connect())
              open.withLock { $0.append(connection) }
              group.addTask { try? await connection.client.runConnections() }
            }
            connection.streams.add(1, ordering: .relaxed)
            group.addTask {
              defer { connection.streams.subtract(1, ordering: .relaxed) }
              await follow(ride, over: connection.client)
            }
          }
        }
      }
    } onCancel: {
      bookings.finish()
      for connection in open.withLock({ $0 }) { connection.client.beginGracefulShutdown() }
    }
  }

  /// One watcher: from its trip's first state until the trip ends (or the simulation does).
  func follow(_ ride: String, over client: GRPCClient<FrameClientTransport>) async {
    stats.watcherOpened()
    defer { stats.watcherClosed() }
    var request = Fleetkit_V1_WatchTripRequest()
    request.name = "providers/\(provider)/trips/\(ride)"
    request.view = .journeySharingV1S
    request.routeFormatType = .encodedPolylineType
    do {
      let metadata: Metadata = ["authorization": "Bearer \(try await tokens.token(for: .trip(ride)))"]
      try await client.serverStreaming(
        request: ClientRequest(message: request, metadata: metadata),
        descriptor: Fleetkit_V1_TripUpdates.Method.WatchTrip.descriptor,
        serializer: ProtobufSerializer<Fleetkit_V1_WatchTripRequest>(), deserializer: PushedLocationTime(),
        options: .defaults
      ) { response in
        var newest: Date?
        for try await pushed in response.messages {
          guard let sent = pushed else { continue }
          defer { newest = max(newest ?? sent, sent) }
          // The first state, and pushes for other changes (a status), carry no new report.
          guard let newest, sent > newest else { continue }
          let latency = Date().timeIntervalSince(sent)
          stats.update { $0.pushLatency.record(latency) }
        }
      }
    } catch {
      if Task.isCancelled { return }
      let code = (error as? RPCError).map { "\($0.code)" } ?? "\(type(of: error))"
      stats.update { $0.watchFailures[code, default: 0] += 1 }
    }
  }
}
